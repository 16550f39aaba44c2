/**
 * Owner-approved issuance presets (ADR-0014 "Issuance and the local
 * baseline"). A preset is owner configuration, never caller input: it is
 * validated once at boot, and a mistake in it is a TypeError, not a request
 * error. The ADR-0014 bounds are enforced here: the local direct-invocation
 * preset allows one invocation, at most 256 protected operations, no
 * delegation and at most one hour; a machine preset must state finite limits
 * for everything, including its own issuance rate.
 */
import { z } from 'zod';
import { frozenCopy } from '../records/canonical.ts';
import { digestOf } from '../records/digest.ts';
import { Identifier } from '../records/ids.ts';
import { ActorRef, RevisionRef, type RevisionRef as RevisionRefT } from '../records/revision-ref.ts';
import { Limits } from './limits.ts';
import { DELEGATION_DEFAULTS, DelegateeRef } from './model.ts';
import { RetryPolicy } from './obligations.ts';
import { Terms } from './terms.ts';

/** ADR-0014 "Task lifetime": at most one hour from issuance unless explicitly configured. */
export const DEFAULT_MAX_LIFETIME_SECONDS = 3600;
/** ADR-0014 local direct-invocation preset bound. */
export const LOCAL_MAX_PROTECTED_OPERATIONS = 256;

/** Limits of a ceiling: a lifetime from issuance instead of an absolute horizon. */
export const CeilingLimits = Limits.omit({ not_after: true }).extend({
  lifetime_seconds: z.number().int().min(1).max(366 * 86_400),
});

/** Terms as an issuance source states them; the idempotency key is per contract. */
export const CeilingTerms = Terms.extend({
  limits: CeilingLimits,
  retry_policy: RetryPolicy.omit({ idempotency_key: true }),
});
export type CeilingTerms = z.infer<typeof CeilingTerms>;

/** A delegatee a source may issue to: exact card, actor and operator revisions. */
export const DelegateeOption = DelegateeRef.extend({ operator_ref: RevisionRef });
export type DelegateeOption = z.infer<typeof DelegateeOption>;

export const Preset = z.strictObject({
  preset_id: Identifier,
  revision: Identifier,
  kind: z.enum(['local_direct', 'machine']),
  terms: CeilingTerms,
  eligible_delegatees: z.array(DelegateeOption).min(1).max(64),
  objective_types: z.array(Identifier).min(1).max(64),
  /** The Actor that authorizes work issued from this preset (the owner). */
  delegator_actor_ref: ActorRef.optional(),
  /** ADR-0014: owner-defined limits on active roots and creation rate. */
  issuance: z.strictObject({ max_active_roots: z.number().int().min(1), max_per_minute: z.number().int().min(1) }),
});
export type Preset = z.infer<typeof Preset>;

export interface PresetBounds {
  /** Larger than one hour only by explicit owner configuration. */
  maxLifetimeSeconds?: number;
}

/** Validates owner preset config against the ADR-0014 bounds; throws TypeError listing every problem. */
export function definePreset(raw: unknown, bounds: PresetBounds = {}): Readonly<Preset> {
  const parsed = Preset.safeParse(raw);
  if (!parsed.success) {
    throw new TypeError(`invalid preset: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  const problems = presetProblems(parsed.data, bounds.maxLifetimeSeconds ?? DEFAULT_MAX_LIFETIME_SECONDS);
  if (problems.length > 0) throw new TypeError(`invalid preset ${parsed.data.preset_id}: ${problems.join('; ')}`);
  // Deep-frozen (a copy: loose constraint members may still be the config's own objects), so
  // its digest and the texts of the terms every root copies from it are written once (issue #15).
  return frozenCopy(parsed.data);
}

function presetProblems(p: Preset, maxLifetime: number): string[] {
  const out: string[] = [];
  const { limits, subdelegation_policy: sub } = p.terms;
  if (limits.lifetime_seconds > maxLifetime) out.push(`lifetime ${limits.lifetime_seconds}s exceeds ${maxLifetime}s`);
  if (p.kind === 'local_direct') {
    if (limits.max_invocations !== 1) out.push('a local direct-invocation preset covers exactly one invocation');
    if (limits.max_protected_operations > LOCAL_MAX_PROTECTED_OPERATIONS) out.push('at most 256 protected operations');
    if (sub.allowed) out.push('a local direct-invocation preset cannot allow delegation');
  }
  if (sub.max_remaining_depth > DELEGATION_DEFAULTS.maxDepth) out.push(`delegation depth above ${DELEGATION_DEFAULTS.maxDepth}`);
  if (sub.max_descendants > DELEGATION_DEFAULTS.maxDescendants) out.push(`more than ${DELEGATION_DEFAULTS.maxDescendants} descendants`);
  return out;
}

/** The exact revision reference recorded as issuance evidence for a preset. */
export function presetRef(preset: Preset): RevisionRefT {
  return { object_id: preset.preset_id, revision_id: preset.revision, content_digest: digestOf(preset) };
}

export interface LocalPresetInput {
  presetId?: string;
  revision?: string;
  scope: Preset['terms']['scope'];
  delegatees: DelegateeOption[];
  objectiveTypes: string[];
  /** Owner actor who may revoke work issued under this preset. */
  owner: RevisionRefT;
  spaceId: string;
  maxProtectedOperations?: number;
  lifetimeSeconds?: number;
}

/**
 * The ADR-0014 local direct-invocation preset: one invocation, ≤ 256
 * protected operations, no delegation, ≤ 1 h, T1 draft with automated scope
 * and provenance checks, zero spend (absent), no tokens beyond the default.
 */
export function localDirectPreset(input: LocalPresetInput): Readonly<Preset> {
  return definePreset({
    preset_id: input.presetId ?? 'local-direct',
    revision: input.revision ?? '1',
    kind: 'local_direct',
    eligible_delegatees: input.delegatees,
    objective_types: input.objectiveTypes,
    issuance: { max_active_roots: 1024, max_per_minute: 60 },
    terms: {
      scope: input.scope,
      limits: {
        lifetime_seconds: input.lifetimeSeconds ?? DEFAULT_MAX_LIFETIME_SECONDS,
        max_duration: { value: input.lifetimeSeconds ?? DEFAULT_MAX_LIFETIME_SECONDS, unit: 's' },
        max_invocations: 1,
        max_protected_operations: input.maxProtectedOperations ?? LOCAL_MAX_PROTECTED_OPERATIONS,
        max_tokens: 0,
        max_tool_calls: 0,
        max_retries: 0,
        max_concurrency: 1,
      },
      budget_ceilings: [{ name: 'protected_operations', unit: 'operation', ceiling: String(input.maxProtectedOperations ?? LOCAL_MAX_PROTECTED_OPERATIONS) }],
      autonomy: { tier: 'T1_draft', gates: [{ kind: 'automated_scope_check' }, { kind: 'provenance_check' }] },
      human_authorities: [],
      reviewers: [],
      consent_refs: [],
      verification: { pre_effect_checks: ['scope'], post_effect_checks: [], acceptance_criteria: [] },
      monitoring: { modes: ['pre_effect'], observers: [], telemetry_classes: [], heartbeat_max_seconds: 300, anomaly_triggers: [], circuit_breakers: [] },
      subdelegation_policy: { allowed: false, max_remaining_depth: 0, max_descendants: 0, required_attestations: ['contract_signature'] },
      retry_policy: { retryable_outcomes: [], max_attempts: 1, min_backoff_ms: 0, reconcile_before_retry: true, renewed_approval_conditions: [] },
      revocation: { authorities: [input.owner], propagation: 'fence_descendants', ack_timeout_seconds: 30, readback_required: true, safe_stop: 'cooperative_cancel', compensation: 'separately_authorized' },
      control_scopes: [{ space_id: input.spaceId, scope_kind: 'space', scope_id: input.spaceId }],
      constraints: [],
    },
  });
}
