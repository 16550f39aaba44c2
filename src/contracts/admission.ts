/**
 * Admission-time evaluation of a delegation chain (RW-003 §5.2, §9; ADR-0014
 * "Effective scope"): every ancestor is re-evaluated on every admission, not
 * only when the child was minted. The chain is re-verified (signatures,
 * order, attenuation), each contract must be unexpired under the injected
 * clock and still the active head of its delegation, and an operation is
 * permitted only when every contract in the chain permits it.
 * Budget reservation and control fences are the ledger's (src/ledger/).
 */
import { contextInvalidated, deny } from '../errors.ts';
import type { AttenuationFailure } from './attenuation.ts';
import { verifyChain, type AuthorityHeads, type ChainVerifyDeps, type VerifiedChain } from './attestation-chain.ts';
import type { DelegationContract } from './model.ts';
import { KNOWN_CONSTRAINT_KINDS, KnownConstraint, type ControlScopeRef } from './obligations.ts';
import { anyCovers, selectorCovers, type DataClass, type EffectClass, type ResourceSelector } from './scope.ts';
import { canonicalText } from '../records/canonical.ts';

/** One requested operation, as the trusted operation registration derives it. */
export interface OperationRequest {
  operation: string;
  resource: ResourceSelector;
  effect_class: EffectClass;
  data_class: DataClass;
  tool?: string;
  destination?: string;
  /** Where the data will be processed, when a residency constraint applies. */
  region?: string;
}

declare const evaluated: unique symbol;
/** A chain that passed {@link evaluateChain} at one instant. */
export interface EvaluatedChain extends VerifiedChain {
  readonly leaf: DelegationContract;
  /** Union of every contract's control scopes: what the effect must fence (RW-003 §1.2). */
  readonly fenceScopes: readonly ControlScopeRef[];
  /** The earliest horizon in the chain. */
  readonly notAfter: string;
  readonly [evaluated]: true;
}

export interface AdmissionDeps extends ChainVerifyDeps {
  heads: AuthorityHeads;
}

/** Re-verifies and re-evaluates the whole chain now; optionally checks one operation. */
export async function evaluateChain(records: readonly unknown[], deps: AdmissionDeps, request?: OperationRequest): Promise<EvaluatedChain> {
  const chain = await verifyChain(records, deps);
  const now = deps.clock.now().getTime();
  for (const [i, c] of chain.contracts.entries()) {
    if (Date.parse(c.body.limits.not_after) <= now) {
      throw contextInvalidated('delegation has expired', { reason: 'expired', index: i, delegation_id: c.record_id });
    }
  }
  if (request) {
    const failures = chain.contracts.flatMap((c, i) => operationFailures(c, request).map((f) => ({ ...{}, ...f, index: i })));
    if (failures.length > 0) throw deny('operation is not permitted by every contract in the chain', { failures });
  }
  const leaf = chain.contracts[chain.contracts.length - 1]!;
  const notAfter = chain.contracts.map((c) => c.body.limits.not_after).sort()[0]!;
  return { ...{}, ...chain, leaf, fenceScopes: fenceScopesOf(chain.contracts), notAfter } as unknown as EvaluatedChain;
}

// Children inherit their parent's scopes, so the union is normally the leaf's
// list; taking the union anyway keeps the fence complete if that ever drifts.
function fenceScopesOf(contracts: readonly DelegationContract[]): ControlScopeRef[] {
  const byKey = new Map<string, ControlScopeRef>();
  for (const c of contracts) for (const s of c.body.control_scopes) byKey.set(canonicalText(s), s);
  return [...byKey.values()];
}

/** Why `contract` does not permit `req`; empty when it does. Reads typed fields only. */
export function operationFailures(contract: DelegationContract, req: OperationRequest): AttenuationFailure[] {
  const { scope, constraints } = contract.body;
  const out: AttenuationFailure[] = [];
  if (!scope.operations.includes(req.operation)) out.push({ dimension: 'operations', reason: `${req.operation} is not in scope` });
  if (!anyCovers(scope.resources, req.resource)) out.push({ dimension: 'objects', reason: 'resource is not in scope' });
  if (!scope.effect_classes.includes(req.effect_class)) out.push({ dimension: 'effect_classes', reason: `${req.effect_class} is not in scope` });
  if (!scope.data_classes.includes(req.data_class)) out.push({ dimension: 'data_classes', reason: `${req.data_class} is not in scope` });
  if (req.tool !== undefined && !scope.tools.includes(req.tool)) out.push({ dimension: 'tools', reason: `${req.tool} is not in scope` });
  for (const c of constraints) {
    const failure = constraintFailure(c, req);
    if (failure) out.push({ dimension: 'constraints', reason: failure });
  }
  return out;
}

function constraintFailure(raw: { kind: string }, req: OperationRequest): string | undefined {
  if (!KNOWN_CONSTRAINT_KINDS.has(raw.kind)) return `unknown constraint kind ${raw.kind} cannot be enforced`;
  const c = KnownConstraint.parse(raw);
  switch (c.kind) {
    case 'deny_operation':
      return c.operation === req.operation ? `${req.operation} is denied` : undefined;
    case 'deny_resource':
      return selectorCovers(c.selector, req.resource) ? 'resource is denied' : undefined;
    case 'deny_effect_class':
      return c.effect_class === req.effect_class ? `${req.effect_class} is denied` : undefined;
    case 'destination_allowlist':
      return req.destination !== undefined && !c.destinations.includes(req.destination) ? 'destination is not allowed' : undefined;
    case 'data_residency':
      // Without a region the restriction cannot be enforced, so it fails closed.
      return req.region === undefined || !c.regions.includes(req.region) ? 'region is not allowed' : undefined;
  }
}
