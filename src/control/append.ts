/** appendControl as a transaction program (RW-003 §1.2). */
import { ControlEvent, ControlEventInput, eventSchemaRefOf, type ParsedEventInput } from './event.ts';
import type { StreamHead } from './fence.ts';
import { streamOf } from './scope.ts';
import { assertPlacement, nextState, type AuthorityState } from './state.ts';
import { contextInvalidated, invalidRequest } from '../errors.ts';
import { canonicalText, memberTexts } from '../records/canonical.ts';
import { composeObjectText } from '../records/json-text.ts';
import { sha256Digest } from '../records/digest.ts';
import type { IdSource } from '../records/ids.ts';
import { summariseIssues } from '../records/envelope.ts';
import { tx, type EventRow, type HeadRow, type Program } from '../store/tx/ops.ts';

export interface AppendOptions {
  expectedHead?: { position: number; event_id: string };
  at: string;
}

/** Parses caller input once, at the store edge. */
export function parseEventInput(input: unknown): ParsedEventInput {
  const parsed = ControlEventInput.safeParse(input);
  if (!parsed.success) throw invalidRequest('control event is malformed', { issues: summariseIssues(parsed.error) });
  // Absent optionals must be absent, not undefined, for canonical digests.
  return Object.fromEntries(Object.entries(parsed.data).filter(([, v]) => v !== undefined)) as ParsedEventInput;
}

/**
 * An event input Baton composed itself, in typed code (issue #24 item 5:
 * trust what Baton itself built): the schema's defaults applied and absent
 * optionals left out, as {@link parseEventInput} gives them, without
 * validating again what no outside party wrote. Input from outside (an
 * operator, a peer) goes through parseEventInput.
 */
export function ownEventInput(input: ControlEventInput): ParsedEventInput {
  const out: Record<string, unknown> = { produced_records: [], evidence: [], payload: {} };
  for (const [k, v] of Object.entries(input)) if (v !== undefined) out[k] = v;
  return out as ParsedEventInput;
}

export function* appendControl(input: ParsedEventInput, opts: AppendOptions, ids: IdSource): Program<ControlEvent> {
  const scope = input.control_scope_ref;
  assertPlacement(scope.scope_kind, input.event_type);
  const stream = streamOf(scope);
  // Each member is written once; the input, the draft and the event are composed from the texts (issue #15).
  const { members, inputDigest } = inputTexts(input);
  if (input.idempotency_key !== undefined) {
    const prior = yield* tx('eventByIdempotency', stream, input.idempotency_key);
    if (prior) {
      if (prior.input_digest !== inputDigest) throw invalidRequest('idempotency key reused with different content', { key: input.idempotency_key });
      return ControlEvent.parse(JSON.parse(prior.document));
    }
  }
  const head = yield* tx('streamHead', stream, 'update');
  if (opts.expectedHead && (head?.position ?? 0) !== opts.expectedHead.position) {
    throw contextInvalidated('control stream head moved', { branch_id: stream.branch_id });
  }
  if (opts.expectedHead && head && head.event_id !== opts.expectedHead.event_id) {
    throw contextInvalidated('control stream head moved', { branch_id: stream.branch_id });
  }
  const { event, row, headRow } = composeEvent(input, members, inputDigest, head, opts.at, ids);
  yield* tx('insertEvent', row);
  yield* tx('upsertHead', headRow);
  return event;
}

/** An event composed on top of a head, with the rows that store it (no I/O). */
export interface ComposedEvent {
  event: ControlEvent;
  row: EventRow;
  headRow: HeadRow;
}

/**
 * Chains `input` onto `head` (absent for a new stream): position, previous
 * digest, state transition and event digest (RW-003 §1.2). Pure, so the
 * set-oriented writer (src/store/tx/batch.ts) and appendControl share it.
 */
export function composeEvent(
  input: ParsedEventInput,
  members: Map<string, string>,
  inputDigest: string,
  head: Pick<HeadRow, 'position' | 'event_digest' | 'state'> | undefined,
  at: string,
  ids: IdSource,
): ComposedEvent {
  const scope = input.control_scope_ref;
  const { project_id, branch_id } = streamOf(scope);
  const state = nextState(scope.scope_kind, (head?.state ?? 'unresolved') as AuthorityState, input.event_type, input.payload);
  const assigned = {
    event_id: ids.next('evt'),
    event_schema_ref: eventSchemaRefOf(input.event_type),
    project_id,
    branch_id,
    position: Number(head?.position ?? 0) + 1,
    recorded_at: at,
    prev_event_digest: head?.event_digest ?? null,
  };
  for (const [k, v] of Object.entries(assigned)) members.set(k, canonicalText(v));
  // The digest `eventDigest` gives for {...input, ...assigned}: everything but the digest itself.
  const event_digest = sha256Digest(composeObjectText(members));
  members.set('event_digest', canonicalText(event_digest));
  const event: ControlEvent = { ...{}, ...input, ...assigned, event_digest };
  const row: EventRow = {
    project_id,
    branch_id,
    position: event.position,
    event_id: event.event_id,
    event_type: event.event_type,
    idempotency_key: event.idempotency_key ?? null,
    input_digest: inputDigest,
    event_digest,
    document: composeObjectText(members),
  };
  return { event, row, headRow: { project_id, branch_id, scope_kind: scope.scope_kind, position: event.position, event_id: event.event_id, event_digest, state } };
}

/** The canonical member texts of an input and its digest, written once (issue #15). */
export function inputTexts(input: ParsedEventInput): { members: Map<string, string>; inputDigest: string } {
  const members = memberTexts(input);
  return { members, inputDigest: sha256Digest(composeObjectText(members)) };
}

export function headOf(row: HeadRow): StreamHead {
  return {
    project_id: row.project_id,
    branch_id: row.branch_id,
    position: Number(row.position),
    event_id: row.event_id,
    event_digest: row.event_digest,
    state: row.state as AuthorityState,
  };
}
