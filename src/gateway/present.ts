/**
 * What the caller sees of a remote task: Baton's ids instead of the
 * remote's (RW-003 §10.3: a remote task id never substitutes for Baton's),
 * and a state that says `COMPLETED` only for a verified `succeeded`. An
 * unverified or mixed result is reported as still WORKING with the
 * projected outcome in metadata — never as FAILED, which would invite a
 * retry of an effect that may already have happened.
 *
 * Pure functions over A2A v1.0 wire JSON. Three rules hold for everything
 * that leaves through them:
 * - the contract chain Baton attached downstream (and any other
 *   `urn:rw-agent-delegation:` extension metadata) is never echoed back;
 * - no downstream identifier survives: the delegatee's task and context ids
 *   are replaced wherever they occur, free text included, and
 *   `referenceTaskIds` (remote ids) are dropped;
 * - Baton's own projection sits under one versioned, namespaced metadata
 *   key, camelCase like the rest of A2A's JSON (A2A §5.5 ProtoJSON).
 */
import type { Outcome } from '../control/event.ts';
import type { RevisionRef } from '../records/revision-ref.ts';
import type { JsonValue } from '../records/strict-json.ts';
import type { AttemptBody } from '../attempts/record.ts';

type Json = { [key: string]: JsonValue };

/** The A2A extension that carries the child Delegation Contract chain to the delegatee. */
export const CONTRACT_EXTENSION = 'urn:rw-agent-delegation:0.1.1:delegation-contract';
/** Every RW-003 extension key shares this prefix; none is ever shown to a caller. */
const RW003_PREFIX = 'urn:rw-agent-delegation:';
/**
 * Metadata key under which Baton reports its projection to the caller.
 * v2: camelCase members (v1 used snake_case, which A2A's JSON never does).
 */
export const OUTCOME_METADATA = 'urn:baton:outcome:v2';

/** Baton's projection of one attempt, as shown under {@link OUTCOME_METADATA}. */
export interface OutcomeMetadata {
  attemptId: string;
  delegationId: string;
  rootDelegationId: string;
  outcome: Outcome | null;
  verified: boolean;
  receipt: { objectId: string; revisionId: string; contentDigest: string } | null;
  cancelCause?: { cause: string; at: string; detail?: string };
  reassignedFrom?: string;
  /** The task view (artifacts, history) was purged by retention; outcome and receipt remain. */
  content?: 'purged';
  /** Set on push notifications: the attempt revision that closed the task, and when. */
  revisionId?: string;
  closedAt?: string;
  /**
   * Shown to an upstream Baton only (separate stores, issue #16): the signed
   * consumption receipt of the task's newest effect (compact JWS,
   * src/federation/consumption.ts). A Baton never relays a downstream's.
   */
  consumptionReceipt?: string;
}

const STATE_FOR: Record<Outcome, string> = {
  succeeded: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  cancelled: 'TASK_STATE_CANCELED',
  expired: 'TASK_STATE_FAILED',
  unknown: 'TASK_STATE_WORKING',
  partially_applied: 'TASK_STATE_WORKING',
};

/** The A2A state a projected outcome is shown as (undefined: keep the observed state). */
export function stateForOutcome(outcome: Outcome | undefined): string | undefined {
  return outcome === undefined ? undefined : STATE_FOR[outcome];
}

const camelRef = (r: RevisionRef | undefined) => (r ? { objectId: r.object_id, revisionId: r.revision_id, contentDigest: r.content_digest } : null);

/** The outcome metadata object for an attempt (camelCase, no remote identifier). */
export function outcomeMetadata(attempt: AttemptBody, outcome: Outcome | undefined): OutcomeMetadata {
  return {
    attemptId: attempt.attempt_id,
    delegationId: attempt.delegation_ref.object_id,
    rootDelegationId: attempt.root_ref.object_id,
    outcome: outcome ?? null,
    // An MCP call without a read route is recorded as observed, never verified (issue #26).
    verified: outcome === 'succeeded' && attempt.verification !== 'observed',
    receipt: camelRef(attempt.receipt_ref),
    ...(attempt.cancel_cause ? { cancelCause: { ...attempt.cancel_cause } } : {}),
    ...(attempt.reassigned_from ? { reassignedFrom: attempt.reassigned_from } : {}),
    // Retention purged the task view (artifacts, history): the outcome and its receipt remain (README "Data retention").
    ...(attempt.content_purged ? { content: 'purged' as const } : {}),
  };
}

/** The remote's task as the caller sees it: Baton's ids, projected state, scrubbed history and metadata. */
export function presentTask(remote: Json, attempt: AttemptBody, outcome: Outcome | undefined): Json {
  const status = presentStatus((remote.status ?? {}) as Json, attempt, outcome);
  const { id: _id, contextId: _ctx, status: _status, history, artifacts, metadata, ...rest } = remote;
  const swap = idSwaps(attempt);
  return {
    ...{}, ...(scrub(rest, swap) as Json),
    id: attempt.attempt_id,
    contextId: attempt.context_id,
    status,
    ...(Array.isArray(artifacts) ? { artifacts: artifacts.map((a) => scrub(a, swap)) } : {}),
    ...(Array.isArray(history) ? { history: history.map((m) => presentMessage(m, attempt)) } : {}),
    metadata: { ...{}, ...withoutRw003(metadata, swap), [OUTCOME_METADATA]: outcomeMetadata(attempt, outcome) as unknown as JsonValue },
  };
}

function presentStatus(status: Json, attempt: AttemptBody, outcome: Outcome | undefined): Json {
  const shown: Json = { ...{}, ...status, ...(status.message !== undefined && status.message !== null ? { message: presentMessage(status.message, attempt) } : {}) };
  const state = stateForOutcome(outcome);
  if (state === undefined) return scrub(shown, idSwaps(attempt)) as Json;
  const held = outcome === 'unknown' || outcome === 'partially_applied';
  const { message: remoteMessage, ...noMessage } = shown;
  return {
    ...{}, ...(scrub(noMessage, idSwaps(attempt)) as Json),
    state,
    ...(held
      ? { message: { messageId: `${attempt.attempt_id}-status`, role: 'ROLE_AGENT', taskId: attempt.attempt_id, contextId: attempt.context_id, parts: [{ text: `Baton could not verify this result (${outcome}); it is held for reconciliation.` }] } }
      : remoteMessage !== undefined ? { message: remoteMessage } : {}),
  };
}

/**
 * A message (history entry, status message, stream event) as the caller
 * sees it: Baton's ids, no remote `referenceTaskIds`, no RW-003 metadata.
 */
export function presentMessage(value: JsonValue, attempt: AttemptBody): JsonValue {
  if (!isObject(value)) return value;
  const { referenceTaskIds: _refs, metadata, taskId, contextId, ...rest } = value;
  const swap = idSwaps(attempt);
  const meta = withoutRw003(metadata, swap);
  return {
    ...{}, ...(scrub(rest, swap) as Json),
    ...(taskId !== undefined ? { taskId: attempt.attempt_id } : {}),
    ...(contextId !== undefined ? { contextId: attempt.context_id } : {}),
    ...(Object.keys(meta).length > 0 ? { metadata: meta } : {}),
  };
}

/** A stream event (statusUpdate / artifactUpdate body) with Baton's ids and scrubbed content. */
export function withIds(value: JsonValue, attempt: AttemptBody): JsonValue {
  if (!isObject(value)) return value;
  const { status, metadata, ...rest } = value;
  const swap = idSwaps(attempt);
  const out: Json = {
    ...{}, ...(scrub(rest, swap) as Json),
    ...('taskId' in value ? { taskId: attempt.attempt_id } : {}),
    ...('contextId' in value ? { contextId: attempt.context_id } : {}),
  };
  if (isObject(status)) out.status = presentStatus(status, attempt, undefined);
  else if (status !== undefined) out.status = status;
  if (metadata !== undefined) out.metadata = withoutRw003(metadata, swap);
  if ('role' in value && 'parts' in value) return presentMessage(out, attempt);
  return out;
}

/** The downstream identifiers of an attempt, each mapped to Baton's stand-in. */
export function idSwaps(attempt: AttemptBody): Array<[string, string]> {
  const swaps: Array<[string, string]> = [];
  // A2A ids are UUID-like; an id shorter than MIN_SCRUBBED could be ordinary text and is only replaced in the id fields themselves.
  if (attempt.remote.task_id) swaps.push([attempt.remote.task_id, attempt.attempt_id]);
  if (attempt.remote.context_id && attempt.remote.context_id !== attempt.remote.task_id) swaps.push([attempt.remote.context_id, attempt.context_id]);
  return swaps;
}

const MIN_SCRUBBED = 8;

/** Replaces every occurrence of a downstream id in every string of `value` (keys included). */
export function scrub(value: JsonValue, swaps: ReadonlyArray<[string, string]>): JsonValue {
  if (swaps.length === 0) return value;
  if (typeof value === 'string') return swapText(value, swaps);
  if (Array.isArray(value)) return value.map((v) => scrub(v, swaps));
  if (!isObject(value)) return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) Object.defineProperty(out, swapText(k, swaps), { value: scrub(v, swaps), enumerable: true, writable: true, configurable: true });
  return out;
}

function swapText(s: string, swaps: ReadonlyArray<[string, string]>): string {
  let out = s;
  // Looked for first: most strings of a reply name no downstream id, and split/join copied each of them.
  for (const [from, to] of swaps) if (from.length >= MIN_SCRUBBED && out.includes(from)) out = out.split(from).join(to);
  return out;
}

/** Metadata minus every RW-003 extension key (the contract chain above all), scrubbed. */
export function withoutRw003(metadata: JsonValue | undefined, swaps: ReadonlyArray<[string, string]>): Json {
  if (!isObject(metadata)) return {};
  const kept: Json = {};
  for (const [k, v] of Object.entries(metadata)) if (!k.startsWith(RW003_PREFIX) && k !== OUTCOME_METADATA) Object.defineProperty(kept, k, { value: v, enumerable: true, writable: true, configurable: true });
  return scrub(kept, swaps) as Json;
}

/** Push notifications name the attempt revision that closed the task (README "Push notifications"). */
export function withClosingRevision(task: Json, closed: { revision_id: string; issued_at: string }): Json {
  const metadata = (task.metadata as Json | undefined) ?? {};
  const outcome = (metadata[OUTCOME_METADATA] as Json | undefined) ?? {};
  return { ...{}, ...task, metadata: { ...{}, ...metadata, [OUTCOME_METADATA]: { ...{}, ...outcome, revisionId: closed.revision_id, closedAt: closed.issued_at } } };
}

/** The outcome metadata with this gateway's signed consumption receipt for an upstream Baton (issue #16). */
export function withConsumptionReceipt(task: Json, jws: string | undefined): Json {
  if (jws === undefined) return task;
  const metadata = (task.metadata as Json | undefined) ?? {};
  const outcome = (metadata[OUTCOME_METADATA] as Json | undefined) ?? {};
  return { ...{}, ...task, metadata: { ...{}, ...metadata, [OUTCOME_METADATA]: { ...{}, ...outcome, consumptionReceipt: jws } } };
}

function isObject(v: JsonValue | undefined): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
