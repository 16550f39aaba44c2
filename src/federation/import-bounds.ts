/**
 * Local bounds on a chain imported from a separate-store upstream (issue 25
 * item 14). The upstream's signature says what *it* granted; this gateway's
 * owner still decides what it admits (ADR-0014 "Lifetime, limits and
 * errors": owner configuration may tighten every bound, quota pressure
 * rejects new work). So the child minted under an imported leaf is clamped
 * to the upstream caller's local preset (lifetime, invocations, depth,
 * concurrency), the imported root is counted against that preset's
 * active-root and issuance-rate ceilings, and every import from one upstream
 * is accounted in one owner namespace bound to it, whatever namespace the
 * chain names. Pure, but for {@link localBounds}, which reads the ledger node.
 */
import { GatewayPresetConfig, INVOCATIONS } from '../contracts/machine-preset.ts';
import type { DelegationContract, OwnerBinding } from '../contracts/model.ts';
import type { Preset } from '../contracts/presets.ts';
import type { TermsRequest } from '../contracts/terms.ts';
import { invalidRequest, unavailable } from '../errors.ts';
import type { OpenBudgetRequest, PresetIssuance } from '../ledger/types.ts';
import type { Clock } from '../records/time.ts';
import type { Store } from '../store/port.ts';

/** How far in the future an upstream may date its leaf (clock skew), so a lifetime cannot start later. */
const ISSUED_AT_SKEW_MS = 60_000;

export interface ImportBounds {
  lifetimeSeconds: number;
  maxInvocations: number;
  /** Hops below this gateway (1: the child it mints may not delegate further). */
  depth: number;
  maxConcurrency: number;
  issuance: PresetIssuance;
  /** The owner namespace every budget node imported from this upstream is accounted in. */
  namespace: string;
}

/** What an upstream caller's configuration binds: its preset (or the default one) and, optionally, the owner it speaks for. */
export interface UpstreamBinding {
  callerId: string;
  preset?: Readonly<Preset> | undefined;
  ownerNamespace?: string | undefined;
  spaceId?: string | undefined;
}

export function importBounds(b: UpstreamBinding): ImportBounds {
  const namespace = b.ownerNamespace ?? `upstream:${b.callerId}`;
  if (b.preset) {
    const { limits, subdelegation_policy } = b.preset.terms;
    return {
      lifetimeSeconds: limits.lifetime_seconds,
      maxInvocations: limits.max_invocations,
      depth: subdelegation_policy.max_remaining_depth,
      maxConcurrency: limits.max_concurrency,
      issuance: { preset_id: b.preset.preset_id, ...b.preset.issuance },
      namespace,
    };
  }
  // No preset named: the defaults of an owner preset (1 h, 100 invocations, 1 hop, 64 live roots, 600/min).
  const d = GatewayPresetConfig.parse({ id: 'standard' });
  return {
    lifetimeSeconds: d.lifetimeSeconds,
    maxInvocations: d.maxInvocations,
    depth: d.delegationDepth,
    maxConcurrency: 8,
    issuance: { preset_id: `upstream:${b.callerId}`, max_active_roots: d.maxActiveRoots, max_per_minute: d.maxPerMinute },
    namespace,
  };
}

/**
 * The chain's owner must be the upstream's, never this gateway's own space or
 * namespace (an upstream cannot spend in the downstream's name), and the one
 * configured for that upstream when it is configured.
 */
export function checkImportedOwner(contracts: readonly DelegationContract[], local: { space_id: string; namespace: string }, b: UpstreamBinding): void {
  const owner = contracts[0]!.body.owner;
  if (owner.space_id === local.space_id || owner.namespace === local.namespace) {
    throw invalidRequest("an upstream's chain may not name this gateway's own space or owner namespace");
  }
  if ((b.spaceId !== undefined && owner.space_id !== b.spaceId) || (b.ownerNamespace !== undefined && owner.namespace !== b.ownerNamespace)) {
    throw invalidRequest('the chain names another owner than the one configured for this upstream');
  }
}

/**
 * The imported root's horizon here: the leaf's own, but at most the preset
 * lifetime from the leaf's issuance (deterministic, so every import of one
 * leaf opens the same node). A leaf dated in the future is refused.
 */
export function importedNotAfter(leaf: DelegationContract, bounds: ImportBounds, now: Date): string {
  const issued = Date.parse(leaf.issued_at);
  if (issued > now.getTime() + ISSUED_AT_SKEW_MS) throw invalidRequest('the upstream leaf is dated in the future');
  const horizon = Math.min(Date.parse(leaf.body.limits.not_after), issued + bounds.lifetimeSeconds * 1000);
  return new Date(horizon).toISOString();
}

/** The terms the child minted under an imported leaf asks for: the leaf's, clamped to the local bounds. */
export function clampedChildTerms(leaf: DelegationContract, bounds: ImportBounds, notAfter: string): TermsRequest {
  const { limits, budget_ceilings, subdelegation_policy: sub } = leaf.body;
  const min = (a: number, b: number) => Math.min(a, b);
  return {
    limits: {
      not_after: notAfter,
      max_invocations: min(limits.max_invocations, bounds.maxInvocations),
      max_protected_operations: min(limits.max_protected_operations, bounds.maxInvocations),
      max_concurrency: min(limits.max_concurrency, bounds.maxConcurrency),
    },
    budget_ceilings: budget_ceilings.map((c) => (c.name === INVOCATIONS && BigInt(c.ceiling) > BigInt(bounds.maxInvocations) ? { ...{}, ...c, ceiling: String(bounds.maxInvocations) } : c)),
    subdelegation_policy: { max_remaining_depth: Math.max(0, min(sub.max_remaining_depth - 1, bounds.depth - 1)) },
  };
}

/**
 * This gateway's bounds on an imported leaf: the upstream's owner checked,
 * its root's horizon, namespace and preset counters, and the clamped terms
 * of the child minted under it. An existing node keeps what it was opened
 * with (a reload that changes the preset bounds new imports only).
 */
export async function localBounds(
  deps: { store: Store; clock: Clock; owner: OwnerBinding; presets: ReadonlyMap<string, Readonly<Preset>> },
  caller: { id: string; upstream?: { ownerNamespace?: string; spaceId?: string; preset?: string } | undefined },
  contracts: readonly DelegationContract[],
  leaf: DelegationContract,
): Promise<{ terms: TermsRequest; root: Pick<OpenBudgetRequest, 'not_after' | 'owner_namespace' | 'preset'> }> {
  const up = caller.upstream ?? {};
  const preset = up.preset === undefined ? undefined : deps.presets.get(up.preset);
  // A named preset that is gone (config check and serve refuse it; a reload might not) never widens to the default.
  if (up.preset !== undefined && !preset) throw unavailable("this upstream's local preset is not configured", { before_transmission: true });
  const binding = { callerId: caller.id, preset, ownerNamespace: up.ownerNamespace, spaceId: up.spaceId };
  checkImportedOwner(contracts, { space_id: deps.owner.space_id, namespace: deps.owner.namespace }, binding);
  const bounds = importBounds(binding);
  const node = await deps.store.ledger.node(leaf.record_id);
  const notAfter = node?.not_after ?? importedNotAfter(leaf, bounds, deps.clock.now());
  return { terms: clampedChildTerms(leaf, bounds, notAfter), root: { not_after: notAfter, owner_namespace: node?.owner_namespace ?? bounds.namespace, preset: bounds.issuance } };
}

