/**
 * Authority terms: every dimension of a contract that delegation may only
 * narrow (RW-003 §8, ADR-0014 "Delegation only narrows"). Presets, grants and
 * contracts all carry a full `Terms`; a request for narrower authority carries
 * `TermsRequest`, where an omitted field inherits the ceiling's value.
 */
import { z } from 'zod';
import { limitExceeded } from '../errors.ts';
import { RECORD_LIMITS } from '../records/limits.ts';
import { Autonomy, Gate, HumanAuthority, ReviewerRequirement, AutonomyTier } from './autonomy.ts';
import { BudgetCeiling, BudgetCeilings, Limits, MoneyLimit } from './limits.ts';
import {
  ConsentRefs,
  Constraint,
  ControlScopeRef,
  Monitoring,
  RetryPolicy,
  Revocation,
  SubdelegationPolicy,
  Verification,
} from './obligations.ts';
import { Scope, scopeEntryCount } from './scope.ts';
import { Identifier } from '../records/ids.ts';

export const Terms = z.strictObject({
  scope: Scope,
  limits: Limits,
  budget_ceilings: BudgetCeilings,
  autonomy: Autonomy,
  human_authorities: z.array(HumanAuthority).max(64),
  reviewers: z.array(ReviewerRequirement).max(64),
  consent_refs: ConsentRefs,
  verification: Verification,
  monitoring: Monitoring,
  subdelegation_policy: SubdelegationPolicy,
  retry_policy: RetryPolicy,
  revocation: Revocation,
  control_scopes: z.array(ControlScopeRef).min(1).max(64),
  constraints: z.array(Constraint).max(256),
});
export type Terms = z.infer<typeof Terms>;

/**
 * A request to narrow `Terms`. Objects are partial field by field; an omitted
 * field inherits the ceiling, `spend: null` asks for no spending authority.
 * Strict: an unknown key (e.g. `issuer`, `scope_override`) is invalid_request.
 */
export const TermsRequest = z.strictObject({
  scope: Scope.partial().optional(),
  limits: Limits.extend({ spend: MoneyLimit.nullable() }).partial().optional(),
  budget_ceilings: z.array(BudgetCeiling).max(1024).optional(),
  autonomy: z.strictObject({ tier: AutonomyTier, gates: z.array(Gate).max(64) }).partial().optional(),
  human_authorities: z.array(HumanAuthority).max(64).optional(),
  reviewers: z.array(ReviewerRequirement).max(64).optional(),
  consent_refs: ConsentRefs.optional(),
  verification: Verification.partial().optional(),
  monitoring: Monitoring.partial().optional(),
  subdelegation_policy: z
    .strictObject({
      allowed: z.boolean(),
      max_remaining_depth: z.number().int().min(0).max(64),
      max_descendants: z.number().int().min(0).max(1_000_000),
      eligible_delegate_cards: z.array(Identifier).max(256),
      required_attestations: z.array(z.enum(['contract_signature', 'card_signature', 'operator_evidence'])),
    })
    .partial()
    .optional(),
  retry_policy: RetryPolicy.pick({ retryable_outcomes: true, max_attempts: true, min_backoff_ms: true, renewed_approval_conditions: true }).partial().optional(),
  revocation: Revocation.pick({ authorities: true, ack_timeout_seconds: true, readback_required: true }).partial().optional(),
  control_scopes: z.array(ControlScopeRef).min(1).max(64).optional(),
  constraints: z.array(Constraint).max(256).optional(),
});
export type TermsRequest = z.infer<typeof TermsRequest>;

/**
 * The terms a request denotes under `ceiling`: omitted fields inherit
 * (RW-003 §8 "a child that omits a constrained field inherits"), given
 * fields replace. Whether the result is narrower is attenuation's job.
 * `childDepth` makes an omitted remaining depth default to one less than the
 * ceiling's, as a child must (RW-003 §8).
 */
export function mergeTerms(ceiling: Terms, req: TermsRequest, opts: { childDepth: boolean }): Terms {
  const { spend: reqSpend, ...reqLimits } = defined(req.limits);
  const spend = reqSpend === null ? undefined : (reqSpend ?? ceiling.limits.spend);
  const { spend: _ceilingSpend, ...ceilingLimits } = ceiling.limits;
  return {
    scope: { ...{}, ...ceiling.scope, ...defined(req.scope) },
    limits: { ...{}, ...ceilingLimits, ...reqLimits, ...(spend ? { spend } : {}) },
    budget_ceilings: mergeBudgets(ceiling.budget_ceilings, req.budget_ceilings),
    autonomy: { ...{}, ...ceiling.autonomy, ...defined(req.autonomy) },
    human_authorities: req.human_authorities ?? ceiling.human_authorities,
    reviewers: req.reviewers ?? ceiling.reviewers,
    consent_refs: req.consent_refs ?? ceiling.consent_refs,
    verification: { ...{}, ...ceiling.verification, ...defined(req.verification) },
    monitoring: { ...{}, ...ceiling.monitoring, ...defined(req.monitoring) },
    subdelegation_policy: mergeSubdelegation(ceiling.subdelegation_policy, req.subdelegation_policy, opts.childDepth),
    retry_policy: { ...{}, ...ceiling.retry_policy, ...defined(req.retry_policy) },
    revocation: { ...{}, ...ceiling.revocation, ...defined(req.revocation) },
    control_scopes: req.control_scopes ?? ceiling.control_scopes,
    constraints: req.constraints ?? ceiling.constraints,
  };
}

// An explicitly undefined member must not overwrite an inherited value.
function defined<T extends object>(value: T | undefined): Partial<T> {
  if (value === undefined) return {};
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function mergeBudgets(ceiling: readonly BudgetCeiling[], req: readonly BudgetCeiling[] | undefined): BudgetCeiling[] {
  if (req === undefined) return [...ceiling];
  const given = new Map(req.map((d) => [d.name, d]));
  const inherited = ceiling.map((d) => given.get(d.name) ?? d);
  return [...inherited, ...req.filter((d) => !ceiling.some((c) => c.name === d.name))];
}

function mergeSubdelegation(
  ceiling: SubdelegationPolicy,
  req: TermsRequest['subdelegation_policy'],
  childDepth: boolean,
): SubdelegationPolicy {
  const depth = childDepth ? Math.max(0, ceiling.max_remaining_depth - 1) : ceiling.max_remaining_depth;
  const merged = { ...{}, ...ceiling, max_remaining_depth: depth, ...defined(req) };
  // An inherited "allowed" with nothing left to spend would be self-contradictory.
  if (req?.allowed === undefined && merged.max_remaining_depth === 0) merged.allowed = false;
  return merged;
}

/** ADR-0014 record bounds on terms and purpose text; exceeded bounds are limit_exceeded. */
export function checkTermsBounds(terms: Terms, purpose?: string): void {
  const entries = scopeEntryCount(terms.scope);
  if (entries > RECORD_LIMITS.maxScopeEntries) {
    throw limitExceeded(`scope has ${entries} entries; at most ${RECORD_LIMITS.maxScopeEntries}`, { bound: 'scope_entries' });
  }
  if (terms.budget_ceilings.length > RECORD_LIMITS.maxBudgetDimensions) {
    throw limitExceeded(`at most ${RECORD_LIMITS.maxBudgetDimensions} budget dimensions`, { bound: 'budget_dimensions' });
  }
  if (purpose !== undefined && Buffer.byteLength(purpose, 'utf8') > RECORD_LIMITS.maxPurposeBytes) {
    throw limitExceeded(`purpose exceeds ${RECORD_LIMITS.maxPurposeBytes} bytes`, { bound: 'purpose' });
  }
}
