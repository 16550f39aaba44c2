/**
 * What a ledger program would otherwise digest under the write lock, computed
 * before the store queues it (DESIGN "A turn is a pure plan, then one
 * commit": no canonicalisation or hashing while the write lock is held):
 *
 * - the request digests an admission and each budget node are stored with,
 *   by which a replay is told from a reuse (ADR-0014 idempotent effects);
 * - the audit events the program appends to its attempt stream (RW-003 §1.2
 *   chaining), composed on the head the caller expects that stream to have.
 *   The transaction appends them as composed only where that is still the
 *   head (TxBatch.appendPlanned), and composes them on the head it finds
 *   otherwise, so a wrong expectation costs time, never a wrong chain.
 *
 * A program run without a preparation computes all of it itself, as before.
 * Pure: no I/O.
 */
import { composeEvent, inputTexts, ownEventInput, type ComposedEvent } from '../control/append.ts';
import type { ControlEventInput, ParsedEventInput } from '../control/event.ts';
import { streamKey, streamOf, type StreamId } from '../control/scope.ts';
import { digestOf } from '../records/digest.ts';
import { refOf } from '../records/envelope.ts';
import type { IdSource } from '../records/ids.ts';
import { invalidRequest } from '../errors.ts';
import type { HeadRow } from '../store/tx/ops.ts';
import type { AdmissionRequest, OpenBudgetRequest, SettlementRequest, TaskAdmissionRequest } from './types.ts';

export const stringAmounts = (a: Record<string, bigint>): Record<string, string> =>
  Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v.toString()]));

/** An admission's request digest: equal for a replay of it, different for another admission under its ids. */
export function admissionDigest(req: AdmissionRequest): string {
  return digestOf({
    effect_id: req.effect_id,
    reservation_id: req.reservation_id,
    node_id: req.node_id,
    kind: req.kind,
    amounts: stringAmounts(req.amounts),
    fence_set: req.fence_set,
    scopes: req.scopes,
    decision: req.decision.content_digest,
    attempt_scope: req.attempt_scope,
    records: (req.records ?? []).map((r) => r.content_digest),
    follow: req.follow?.attempt_id ?? null,
  });
}

/** A budget node's request digest: what the node *is*, so a second gateway importing the same contract finds the same node. */
export function openDigest(req: OpenBudgetRequest): string {
  // The announcer, time, issuing preset and the plan's event are not part of what the node is.
  const { at: _at, actor_ref: _actor, record, dimensions, preset: _preset, issued_event_id: _event, planned_issue: _planned, ...rest } = req;
  return digestOf({
    ...{}, ...rest,
    record: record?.content_digest ?? null,
    dimensions: dimensions.map((d) => ({ ...{}, ...d, ceiling: d.ceiling.toString() })),
  });
}

/** The permission observation an admission appends to its attempt stream (no fence reads that stream). */
export function permissionEventInput(req: AdmissionRequest): ParsedEventInput {
  return ownEventInput({
    event_type: 'rw003.permission.evaluated',
    control_scope_ref: req.attempt_scope,
    actor_ref: req.actor_ref,
    produced_records: [refOf(req.decision)],
    fence_set: req.fence_set,
    idempotency_key: `admit:${req.effect_id}`,
    payload: { decision: 'allow', reservation_id: req.reservation_id, effect_id: req.effect_id },
  });
}

/** Audit events that ride along with a ledger operation: Baton's own, and only to attempt streams (never an authority stream). */
export function rideAlongEvents(events: readonly ControlEventInput[] | undefined): ParsedEventInput[] {
  return (events ?? []).map((event) => {
    const parsed = ownEventInput(event);
    if (parsed.control_scope_ref.scope_kind !== 'attempt') throw invalidRequest('only audit events may ride along with a ledger operation');
    return parsed;
  });
}

/** An admission's audit events in the order its program appends them: the permission observation, then what rides along. */
export const admissionEvents = (req: AdmissionRequest): ParsedEventInput[] => [permissionEventInput(req), ...rideAlongEvents(req.events)];

/** Events composed before the transaction, one after another on `base`. */
export interface PlannedEvents {
  /** The head they were composed on (undefined: a new stream). */
  base: HeadRow | undefined;
  composed: ComposedEvent[];
}

export interface Prepared {
  /** The admission's request digest ({@link admissionDigest}). */
  admission?: string;
  /** Each new budget's request digest by node id ({@link openDigest}). */
  opens?: ReadonlyMap<string, string>;
  /** The audit events, composed on the head expected for their stream. */
  events?: PlannedEvents;
}

/** The head a caller expects a stream to have (undefined: none, a new stream). */
export type ExpectedHead = (stream: StreamId) => HeadRow | undefined;

/**
 * `inputs` composed one after another on the head expected for their stream,
 * with `ids` and `at` as the transaction would use them; undefined when they
 * go to more than one stream. Throws what composing them there would throw.
 */
export function planEvents(inputs: readonly ParsedEventInput[], expected: ExpectedHead, at: string, ids: IdSource): PlannedEvents | undefined {
  const first = inputs[0];
  if (!first) return undefined;
  const stream = streamOf(first.control_scope_ref);
  if (inputs.some((i) => streamKey(streamOf(i.control_scope_ref)) !== streamKey(stream))) return undefined;
  const base = expected(stream);
  const composed: ComposedEvent[] = [];
  for (const input of inputs) {
    const { members, inputDigest } = inputTexts(input);
    composed.push(composeEvent(input, members, inputDigest, composed.at(-1)?.headRow ?? base, at, ids));
  }
  return { base, composed };
}

export function prepareAdmission(req: AdmissionRequest, expected: ExpectedHead, ids: IdSource): Prepared {
  const events = safely(() => planEvents(admissionEvents(req), expected, req.at, ids));
  return { admission: admissionDigest(req), ...(events ? { events } : {}) };
}

export function prepareTask(req: TaskAdmissionRequest, expected: ExpectedHead, ids: IdSource): Prepared {
  return { ...{}, ...prepareAdmission(req.admission, expected, ids), opens: new Map(req.budgets.map((b) => [b.node_id, openDigest(b)])) };
}

export function prepareSettlement(req: SettlementRequest, expected: ExpectedHead, ids: IdSource): Prepared {
  const events = safely(() => planEvents(rideAlongEvents(req.events), expected, req.at, ids));
  return events ? { events } : {};
}

/** Undefined where the events are refused here: the program refuses them again in its transaction, and names the refusal. */
function safely<T>(plan: () => T | undefined): T | undefined {
  try {
    return plan();
  } catch {
    return undefined;
  }
}
