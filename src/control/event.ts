/**
 * RW-003 extension events with the complete RW-002 envelope (§1.1). Each
 * event is appended at the next position of one stream; its digest covers the
 * whole event including the previous event's digest, so a stream is a hash
 * chain that `baton audit verify` can recompute.
 */
import { z } from 'zod';
import { Digest, digestOf } from '../records/digest.ts';
import { Identifier } from '../records/ids.ts';
import { ActorRef, RevisionRef } from '../records/revision-ref.ts';
import { UtcTime } from '../records/time.ts';
import { ControlBoundaryRef } from './fence.ts';
import { ControlScopeRef } from './scope.ts';

export const EVENT_SCHEMA_REF = 'rw-agent-delegation/0.1.1#control_event';
/** Baton's own, versioned extension namespace (RW-003 §1.2 namespaced event-family rule). */
export const BATON_EVENT_SCHEMA_REF = 'baton-control/0.1#control_event';

/** The thirteen RW-003 event types (§1.1). */
export const RW003_EVENT_TYPES = [
  'rw003.agent_card.published',
  'rw003.agent_card.lifecycle_changed',
  'rw003.delegation.issued',
  'rw003.delegation.amended',
  'rw003.delegation.revoked',
  'rw003.delegation.reassigned',
  'rw003.delegation.expired',
  'rw003.permission.evaluated',
  'rw003.execution.started',
  'rw003.execution.checkpointed',
  'rw003.execution.terminal',
  'rw003.subdelegation.attested',
  'rw003.circuit_breaker.tripped',
] as const;

/**
 * Space policy and consent changes have no RW-003 type; they use one Baton
 * type under Baton's own schema ref instead of reinterpreting an RW-003 one.
 */
export const BATON_EVENT_TYPES = ['baton.scope.lifecycle_changed'] as const;

export const EVENT_TYPES = [...RW003_EVENT_TYPES, ...BATON_EVENT_TYPES] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The exact event_schema_ref an event type is governed by. */
export function eventSchemaRefOf(type: EventType): typeof EVENT_SCHEMA_REF | typeof BATON_EVENT_SCHEMA_REF {
  return type.startsWith('rw003.') ? EVENT_SCHEMA_REF : BATON_EVENT_SCHEMA_REF;
}

/** Observations that belong on attempt audit streams only (RW-003 §1.2 event placement). */
export const ATTEMPT_EVENT_TYPES: ReadonlySet<EventType> = new Set([
  'rw003.permission.evaluated',
  'rw003.execution.started',
  'rw003.execution.checkpointed',
  'rw003.execution.terminal',
]);

export const Outcome = z.enum(['succeeded', 'failed', 'unknown', 'partially_applied', 'cancelled', 'expired']);
export type Outcome = z.infer<typeof Outcome>;

/** What a caller supplies; position, ids, time and digests are assigned at append. */
export const ControlEventInput = z.strictObject({
  event_type: z.enum(EVENT_TYPES),
  control_scope_ref: ControlScopeRef,
  actor_ref: ActorRef,
  operator_ref: RevisionRef.optional(),
  produced_records: z.array(RevisionRef).max(64).default([]),
  evidence: z.array(RevisionRef).max(64).default([]),
  authority: RevisionRef.optional(),
  idempotency_key: Identifier.optional(),
  outcome: Outcome.optional(),
  fence_set: z.array(ControlBoundaryRef).max(64).optional(),
  payload: z.record(z.string(), z.unknown()).default({}),
});
export type ControlEventInput = z.input<typeof ControlEventInput>;
export type ParsedEventInput = z.output<typeof ControlEventInput>;

export const ControlEvent = ControlEventInput.extend({
  event_id: Identifier,
  event_schema_ref: z.enum([EVENT_SCHEMA_REF, BATON_EVENT_SCHEMA_REF]),
  project_id: z.string(),
  branch_id: z.string(),
  position: z.number().int().positive(),
  recorded_at: UtcTime,
  prev_event_digest: Digest.nullable(),
  event_digest: Digest,
});
export type ControlEvent = z.infer<typeof ControlEvent>;

/** Digest of an event: everything but the digest itself. */
export function eventDigest(event: Omit<ControlEvent, 'event_digest'> & { event_digest?: string }): string {
  const { event_digest: _d, ...rest } = event;
  return digestOf(rest);
}

/** The boundary an event establishes as its stream's head. */
export function boundaryOf(event: ControlEvent): ControlBoundaryRef {
  return {
    project_id: event.project_id,
    branch_id: event.branch_id,
    position: event.position,
    event_id: event.event_id,
    event_digest: event.event_digest,
  };
}
