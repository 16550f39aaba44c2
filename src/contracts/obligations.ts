/**
 * The obligation-bearing parts of a contract (RW-003 §5.1 monitoring,
 * subdelegation_policy, retry_policy, revocation, control_scopes; §7.3; §8)
 * and typed constraints. These are carried forward to every descendant:
 * a child may add obligations, never drop them (RW-003 §8 "inherit every
 * denial, human gate, consent constraint, monitoring minimum, verification
 * requirement, and revocation authority").
 */
import { z } from 'zod';
import { Identifier } from '../records/ids.ts';
import { ActorRef, RevisionRef } from '../records/revision-ref.ts';
import { Count } from './limits.ts';
import { EffectClass, ResourceSelector, ScopeId } from './scope.ts';

const Ids = z.array(Identifier).max(256);

/** RW-003 §2 ControlScopeRef, authority scopes only (attempt branches are never fenced). */
export const ControlScopeRef = z.strictObject({
  space_id: Identifier,
  scope_kind: z.enum(['space', 'agent', 'delegation', 'consent', 'policy']),
  scope_id: Identifier,
});
export type ControlScopeRef = z.infer<typeof ControlScopeRef>;

export const MONITORING_MODES = ['none_permitted_for_T0', 'periodic', 'event_stream', 'pre_effect', 'post_effect', 'continuous'] as const;
export const Monitoring = z.strictObject({
  modes: z.array(z.enum(MONITORING_MODES)).min(1),
  observers: z.array(ActorRef).max(64),
  telemetry_classes: Ids,
  /** Longest permitted silence; a child may only shorten it. */
  heartbeat_max_seconds: Count,
  anomaly_triggers: Ids,
  circuit_breakers: z.array(ControlScopeRef).max(64),
});
export type Monitoring = z.infer<typeof Monitoring>;

/** Pre/post-effect checks and acceptance criteria (RW-003 §5.1 checks, §7.1). */
export const Verification = z.strictObject({
  pre_effect_checks: Ids,
  post_effect_checks: Ids,
  acceptance_criteria: Ids,
});
export type Verification = z.infer<typeof Verification>;

export const SubdelegationPolicy = z
  .strictObject({
    allowed: z.boolean(),
    max_remaining_depth: z.number().int().min(0).max(64),
    max_descendants: z.number().int().min(0).max(1_000_000),
    /** Exact Agent Card object ids a child may name; absent = no card constraint. */
    eligible_delegate_cards: z.array(Identifier).max(256).optional(),
    required_attestations: z.array(z.enum(['contract_signature', 'card_signature', 'operator_evidence'])),
  })
  .refine((p) => p.allowed || p.max_remaining_depth === 0, 'a policy that denies sub-delegation has no remaining depth');
export type SubdelegationPolicy = z.infer<typeof SubdelegationPolicy>;

export const RETRYABLE = ['failed', 'unknown', 'partially_applied'] as const;
export const RetryPolicy = z.strictObject({
  idempotency_key: Identifier,
  retryable_outcomes: z.array(z.enum(RETRYABLE)),
  max_attempts: Count,
  min_backoff_ms: Count,
  /** RW-003 §7.1: unknown/partially_applied never retry without reconciliation. */
  reconcile_before_retry: z.literal(true),
  renewed_approval_conditions: Ids,
});
export type RetryPolicy = z.infer<typeof RetryPolicy>;

export const Revocation = z.strictObject({
  authorities: z.array(ActorRef).min(1).max(64),
  /** RW-003 §8: revocation binds descendants through ancestor fences. */
  propagation: z.literal('fence_descendants'),
  ack_timeout_seconds: Count,
  readback_required: z.boolean(),
  safe_stop: z.enum(['cooperative_cancel', 'checkpoint_and_stop']),
  compensation: z.literal('separately_authorized'),
});
export type Revocation = z.infer<typeof Revocation>;

/** Constraint kinds this build can enforce. Anything else fails closed. */
export const KnownConstraint = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('deny_operation'), operation: ScopeId }),
  z.strictObject({ kind: z.literal('deny_resource'), selector: ResourceSelector }),
  z.strictObject({ kind: z.literal('deny_effect_class'), effect_class: EffectClass }),
  z.strictObject({ kind: z.literal('destination_allowlist'), destinations: z.array(ScopeId).max(256) }),
  z.strictObject({ kind: z.literal('data_residency'), regions: z.array(ScopeId).min(1).max(64) }),
]);
export type KnownConstraint = z.infer<typeof KnownConstraint>;
export const KNOWN_CONSTRAINT_KINDS: ReadonlySet<string> = new Set(KnownConstraint.options.map((o) => o.shape.kind.value));

/**
 * A constraint as stored. Unknown kinds parse (so a record from a newer
 * issuer can still be read and shown) but every authority decision that meets
 * one denies: the core cannot enforce what it does not understand.
 */
export const Constraint = z.looseObject({ kind: z.string().min(1).max(128) }).superRefine((c, ctx) => {
  if (!KNOWN_CONSTRAINT_KINDS.has(c.kind)) return;
  const parsed = KnownConstraint.safeParse(c);
  if (!parsed.success) ctx.addIssue({ code: 'custom', message: `malformed ${c.kind} constraint` });
});
export type Constraint = z.infer<typeof Constraint>;

/** Consent references are exact record revisions (RW-003 §9); the contract holds no personal data. */
export const ConsentRefs = z.array(RevisionRef).max(64);
