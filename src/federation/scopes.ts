/**
 * Which authority streams of a delegation chain a gateway holds itself and
 * which only its upstream holds (issue #16). Across organisations nothing is
 * shared but keys and URLs, so the streams an upstream's contracts fence
 * (its space, its agents, its delegations) exist only in the upstream's
 * store: they are fenced remotely, through signed head statements. The
 * gateway's own child and its delegatee's agent stream are fenced locally,
 * atomically with the admission, as on one ledger. Pure.
 */
import type { DelegationContract } from '../contracts/model.ts';
import type { ControlScopeRef } from '../control/scope.ts';
import { canonicalText } from '../records/canonical.ts';

export interface ChainSplit {
  /** Index of the upstream's leaf (the last contract the upstream signed). */
  upstreamLeaf: number;
  upstreamActor: string;
  /** Scopes the upstream states heads for: everything its leaf fences. */
  remote: ControlScopeRef[];
  /** Scopes this gateway's own contracts add, as streams in this gateway's store. */
  local: ControlScopeRef[];
}

/**
 * Splits `contracts` at the last one not signed by `self`. Undefined when the
 * whole chain is this gateway's own (a root it issued from a preset).
 * An agent stream in the chain's space is announced in this gateway's own
 * space (src/gateway/delegatees.ts), so it is mapped there; this gateway's
 * space stream is added so its operator can suspend the space.
 */
export function splitChain(contracts: readonly DelegationContract[], self: string, spaceId: string): ChainSplit | undefined {
  let k = -1;
  contracts.forEach((c, i) => {
    if (c.issued_by_actor_ref.object_id !== self) k = i;
  });
  if (k < 0) return undefined;
  const up = contracts[k]!;
  const remote = up.body.control_scopes as ControlScopeRef[];
  const seen = new Set(remote.map((s) => canonicalText(s)));
  const local = new Map<string, ControlScopeRef>();
  const add = (s: ControlScopeRef) => local.set(canonicalText(s), s);
  add({ space_id: spaceId, scope_kind: 'space', scope_id: spaceId });
  for (const c of contracts.slice(k + 1)) {
    for (const s of c.body.control_scopes as ControlScopeRef[]) {
      if (seen.has(canonicalText(s))) continue;
      add(s.scope_kind === 'agent' ? { ...{}, ...s, space_id: spaceId } : s);
    }
  }
  return { upstreamLeaf: k, upstreamActor: up.issued_by_actor_ref.object_id, remote, local: [...local.values()] };
}

/** The local stream a chain scope is held under here (agents are announced in this gateway's space). */
export function localStreamScope(s: ControlScopeRef, spaceId: string): ControlScopeRef {
  return s.scope_kind === 'agent' ? { ...{}, ...s, space_id: spaceId } : s;
}
