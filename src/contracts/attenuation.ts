/**
 * Privilege attenuation (RW-003 §8, ADR-0014 "Delegation only narrows"): a
 * pure proof that one set of terms is a subset of another on every dimension.
 * Permissions (scope, limits, spend, budgets, tier) may only shrink;
 * obligations (gates, authorities, consent, monitoring, verification,
 * revocation, fences, constraints) may only grow. Every failing dimension is
 * reported, not just the first, so a denial explains itself (RW-003 §11.3).
 */
import { canonicalText } from '../records/canonical.ts';
import { deny, type BatonError } from '../errors.ts';
import { tierRank } from './autonomy.ts';
import { COUNT_LIMITS, durationSeconds, spendFailure } from './limits.ts';
import { KNOWN_CONSTRAINT_KINDS } from './obligations.ts';
import { anyCovers } from './scope.ts';
import { mergeTerms, type Terms, type TermsRequest } from './terms.ts';

/** One failing dimension of an attenuation proof. */
export interface AttenuationFailure {
  dimension: string;
  reason: string;
}

export type AttenuationResult = { ok: true; terms: Terms } | { ok: false; failures: AttenuationFailure[] };

/**
 * `level: 'child'` is a sub-delegation hop (remaining depth must drop by one);
 * `'same'` compares a root with its issuance ceiling or a revision with the
 * revision it replaces (RW-003 §11.4 "same or narrower scope").
 */
export type AttenuationLevel = 'child' | 'same';

/** Merges `request` under `ceiling` (omitted fields inherit) and proves the result narrower. */
export function attenuate(ceiling: Terms, request: TermsRequest, level: AttenuationLevel = 'child'): AttenuationResult {
  const terms = mergeTerms(ceiling, request, { childDepth: level === 'child' });
  const failures = compareTerms(ceiling, terms, level);
  return failures.length === 0 ? { ok: true, terms } : { ok: false, failures };
}

/** The deny error for a failed proof; details.failures lists every dimension. */
export function attenuationDenied(failures: readonly AttenuationFailure[], extra: Record<string, unknown> = {}): BatonError {
  const dims = [...new Set(failures.map((f) => f.dimension))];
  // `wider_on` is a plain value, so it reaches the caller's ErrorInfo, through every hop (issue 25).
  return deny(`requested authority is wider than its parent on: ${dims.join(', ')}`, { failures, wider_on: dims.join(','), ...extra });
}

/** Every dimension on which `child` is not within `parent`; empty when it is. */
export function compareTerms(parent: Terms, child: Terms, level: AttenuationLevel): AttenuationFailure[] {
  const out: AttenuationFailure[] = [];
  const fail = (dimension: string, reason: string): void => void out.push({ dimension, reason });
  scopeRules(parent, child, fail);
  limitRules(parent, child, fail);
  authorityRules(parent, child, fail);
  obligationRules(parent, child, fail);
  subdelegationRules(parent, child, level, fail);
  constraintRules(parent, child, fail);
  return out;
}

type Fail = (dimension: string, reason: string) => void;

const key = (v: unknown): string => (typeof v === 'string' ? v : canonicalText(v));
/** Members of `items` that are not in `allowed`. */
function outside<T>(items: readonly T[], allowed: readonly T[]): T[] {
  const set = new Set(allowed.map(key));
  return items.filter((i) => !set.has(key(i)));
}
/** Permission list: the child may only name what the parent names. */
function subset<T>(fail: Fail, dimension: string, parent: readonly T[], child: readonly T[]): void {
  const extra = outside(child, parent);
  if (extra.length > 0) fail(dimension, `not granted by parent: ${extra.slice(0, 8).map(key).join(', ')}`);
}
/** Obligation list: the child must carry everything the parent carries. */
function superset<T>(fail: Fail, dimension: string, parent: readonly T[], child: readonly T[]): void {
  const dropped = outside(parent, child);
  if (dropped.length > 0) fail(dimension, `drops inherited: ${dropped.slice(0, 8).map(key).join(', ')}`);
}
function atMost(fail: Fail, dimension: string, parent: number, child: number): void {
  if (child > parent) fail(dimension, `${child} exceeds parent ${parent}`);
}

function scopeRules(p: Terms, c: Terms, fail: Fail): void {
  const uncovered = c.scope.resources.filter((r) => !anyCovers(p.scope.resources, r));
  if (uncovered.length > 0) fail('objects', `not within parent resources: ${uncovered.slice(0, 8).map(key).join(', ')}`);
  subset(fail, 'operations', p.scope.operations, c.scope.operations);
  subset(fail, 'tools', p.scope.tools, c.scope.tools);
  subset(fail, 'data_classes', p.scope.data_classes, c.scope.data_classes);
  subset(fail, 'effect_classes', p.scope.effect_classes, c.scope.effect_classes);
}

function limitRules(p: Terms, c: Terms, fail: Fail): void {
  if (Date.parse(c.limits.not_after) > Date.parse(p.limits.not_after)) {
    fail('expiry', `not_after ${c.limits.not_after} is later than parent ${p.limits.not_after}`);
  }
  atMost(fail, 'duration', durationSeconds(p.limits.max_duration), durationSeconds(c.limits.max_duration));
  for (const [field, dimension] of COUNT_LIMITS) atMost(fail, dimension, p.limits[field], c.limits[field]);
  const spend = spendFailure(p.limits.spend, c.limits.spend);
  if (spend) fail('spend', spend);
  for (const dim of p.budget_ceilings) {
    const mine = c.budget_ceilings.find((d) => d.name === dim.name);
    if (!mine) fail('budget', `drops ceiling ${dim.name}`);
    else if (mine.unit !== dim.unit) fail('budget', `${dim.name} unit ${mine.unit} differs from parent ${dim.unit}`);
    else if (BigInt(mine.ceiling) > BigInt(dim.ceiling)) fail('budget', `${dim.name} ${mine.ceiling} exceeds parent ${dim.ceiling}`);
  }
}

function authorityRules(p: Terms, c: Terms, fail: Fail): void {
  if (tierRank(c.autonomy.tier) > tierRank(p.autonomy.tier)) fail('autonomy', `${c.autonomy.tier} is above parent ${p.autonomy.tier}`);
  superset(fail, 'gates', p.autonomy.gates, c.autonomy.gates);
  superset(fail, 'human_authorities', p.human_authorities, c.human_authorities);
  superset(fail, 'reviewers', p.reviewers, c.reviewers);
  superset(fail, 'consent', p.consent_refs, c.consent_refs);
}

function obligationRules(p: Terms, c: Terms, fail: Fail): void {
  const v = (k: keyof Terms['verification']): void => superset(fail, 'verification', p.verification[k], c.verification[k]);
  (['pre_effect_checks', 'post_effect_checks', 'acceptance_criteria'] as const).forEach(v);
  const m = c.monitoring;
  superset(fail, 'monitoring', p.monitoring.modes, m.modes);
  superset(fail, 'monitoring', p.monitoring.observers, m.observers);
  superset(fail, 'monitoring', p.monitoring.telemetry_classes, m.telemetry_classes);
  superset(fail, 'monitoring', p.monitoring.anomaly_triggers, m.anomaly_triggers);
  superset(fail, 'monitoring', p.monitoring.circuit_breakers, m.circuit_breakers);
  atMost(fail, 'monitoring', p.monitoring.heartbeat_max_seconds, m.heartbeat_max_seconds);
  const r = c.retry_policy;
  subset(fail, 'retry_policy', p.retry_policy.retryable_outcomes, r.retryable_outcomes);
  atMost(fail, 'retry_policy', p.retry_policy.max_attempts, r.max_attempts);
  if (r.min_backoff_ms < p.retry_policy.min_backoff_ms) fail('retry_policy', 'backoff is shorter than parent');
  superset(fail, 'retry_policy', p.retry_policy.renewed_approval_conditions, r.renewed_approval_conditions);
  superset(fail, 'revocation', p.revocation.authorities, c.revocation.authorities);
  atMost(fail, 'revocation', p.revocation.ack_timeout_seconds, c.revocation.ack_timeout_seconds);
  if (p.revocation.readback_required && !c.revocation.readback_required) fail('revocation', 'drops required read-back');
  if (p.revocation.safe_stop !== c.revocation.safe_stop) fail('revocation', 'changes the safe-stop rule');
  superset(fail, 'control_scopes', p.control_scopes, c.control_scopes);
}

function subdelegationRules(p: Terms, c: Terms, level: AttenuationLevel, fail: Fail): void {
  const ps = p.subdelegation_policy;
  const cs = c.subdelegation_policy;
  const maxDepth = level === 'child' ? ps.max_remaining_depth - 1 : ps.max_remaining_depth;
  if (level === 'child' && !ps.allowed) fail('subdelegation', 'parent does not allow sub-delegation');
  if (cs.max_remaining_depth > Math.max(0, maxDepth)) fail('depth', `remaining depth ${cs.max_remaining_depth} exceeds ${Math.max(0, maxDepth)}`);
  if (cs.allowed && !ps.allowed) fail('subdelegation', 'allows sub-delegation the parent denies');
  atMost(fail, 'descendants', ps.max_descendants, cs.max_descendants);
  if (ps.eligible_delegate_cards) {
    if (!cs.eligible_delegate_cards) fail('subdelegation', 'drops the eligible-delegate constraint');
    else subset(fail, 'subdelegation', ps.eligible_delegate_cards, cs.eligible_delegate_cards);
  }
  superset(fail, 'subdelegation', ps.required_attestations, cs.required_attestations);
}

function constraintRules(p: Terms, c: Terms, fail: Fail): void {
  superset(fail, 'constraints', p.constraints, c.constraints);
  const unknown = [...p.constraints, ...c.constraints].filter((k) => !KNOWN_CONSTRAINT_KINDS.has(k.kind));
  // Unknown constraint kind: the core cannot enforce it, so nothing under it may be proved narrower.
  if (unknown.length > 0) fail('constraints', `unknown constraint kind: ${[...new Set(unknown.map((k) => k.kind))].join(', ')}`);
}
