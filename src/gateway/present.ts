/**
 * What the caller sees of a remote task: Baton's ids instead of the
 * remote's (RW-003 §10.3), and a state that says `COMPLETED` only for a
 * verified `succeeded`. An unverified or mixed result is reported as still
 * WORKING with the projected outcome in metadata — never as FAILED, which
 * would invite a retry of an effect that may already have happened.
 */
import type { Outcome } from '../control/event.ts';
import type { JsonValue } from '../records/strict-json.ts';
import type { AttemptBody } from './attempt-record.ts';
import { digestOf } from '../records/digest.ts';

type Json = { [key: string]: JsonValue };

/** The A2A extension that carries the child Delegation Contract chain to the delegatee. */
export const CONTRACT_EXTENSION = 'urn:rw-agent-delegation:0.1.1:delegation-contract';
/** Metadata key under which Baton reports its projection to the caller. */
export const OUTCOME_METADATA = 'urn:baton:outcome:v1';

const STATE_FOR: Record<Outcome, string> = {
  succeeded: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  cancelled: 'TASK_STATE_CANCELED',
  expired: 'TASK_STATE_FAILED',
  unknown: 'TASK_STATE_WORKING',
  partially_applied: 'TASK_STATE_WORKING',
};

export function presentTask(remote: Json, attempt: AttemptBody, outcome: Outcome | undefined): Json {
  const status = (remote.status ?? {}) as Json;
  const projected: Json =
    outcome === undefined
      ? status
      : {
          ...status,
          state: STATE_FOR[outcome],
          ...(outcome === 'unknown' || outcome === 'partially_applied'
            ? { message: { messageId: `${attempt.attempt_id}-status`, role: 'ROLE_AGENT', parts: [{ text: `Baton could not verify this result (${outcome}); it is held for reconciliation.` }] } }
            : {}),
        };
  return {
    ...remote,
    id: attempt.attempt_id,
    contextId: attempt.context_id,
    status: projected.message ? { ...projected, message: withIds(projected.message, attempt) } : projected,
    ...(Array.isArray(remote.history) ? { history: remote.history.map((m) => withIds(m, attempt)) } : {}),
    metadata: {
      ...((remote.metadata as Json | undefined) ?? {}),
      [OUTCOME_METADATA]: {
        attempt_id: attempt.attempt_id,
        delegation_id: attempt.delegation_ref.object_id,
        root_delegation_id: attempt.root_ref.object_id,
        outcome: outcome ?? null,
        receipt: attempt.receipt_ref ?? null,
        verified: outcome === 'succeeded',
        ...(attempt.cancel_cause ? { cancel_cause: attempt.cancel_cause } : {}),
        ...(attempt.reassigned_from ? { reassigned_from: attempt.reassigned_from } : {}),
      } as unknown as JsonValue,
    },
  };
}

/**
 * Rewrites a message or event's task/context ids to Baton's, inside a
 * status update's message too. The agent's own message ids are the agent's
 * identifiers (they may embed its task id): an agent message is shown under
 * an id Baton derives from it, stable across reads.
 */
export function withIds(value: JsonValue, attempt: AttemptBody): JsonValue {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const status = value.status;
  const nested: Json = status && typeof status === 'object' && !Array.isArray(status) && status.message ? { status: { ...status, message: withIds(status.message, attempt) } } : {};
  return {
    ...value,
    ...('taskId' in value ? { taskId: attempt.attempt_id } : {}),
    ...('contextId' in value ? { contextId: attempt.context_id } : {}),
    ...(value.role === 'ROLE_AGENT' && typeof value.messageId === 'string' ? { messageId: `${attempt.attempt_id}-m-${digestOf(value.messageId).slice(7, 23)}` } : {}),
    ...nested,
  };
}
