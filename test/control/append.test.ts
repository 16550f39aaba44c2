import { describe, expect, it } from 'vitest';
import canonicalize from 'canonicalize';
import { appendControl, headOf, ownEventInput, parseEventInput, type AppendOptions } from '../../src/control/append.ts';
import { eventDigest } from '../../src/control/event.ts';
import { digestOf, sha256Digest } from '../../src/records/digest.ts';
import { sequentialIds } from '../../src/records/ids.ts';
import type { Call, EventRow, HeadRow } from '../../src/store/tx/ops.ts';
import { expectCode } from '../helpers/errors.ts';

const actor = { object_id: 'actor_owner', revision_id: 'rev_1', content_digest: `sha256:${'a'.repeat(64)}` };

/** Runs the program against one stream whose head is `head`, answering only what appendControl asks. */
function run(input: unknown, head: HeadRow | undefined): { event: Record<string, unknown>; row: EventRow } {
  const program = appendControl(parseEventInput(input), { at: '2026-12-01T10:00:00.000Z' }, sequentialIds('t'));
  let row: EventRow | undefined;
  let next = program.next();
  while (!next.done) {
    const call = next.value as Call;
    const answer = call.op === 'streamHead' ? head : undefined;
    if (call.op === 'insertEvent') row = call.args[0] as EventRow;
    next = program.next(answer);
  }
  return { event: next.value as unknown as Record<string, unknown>, row: row! };
}

describe('appendControl digests and document (issue #15: members written once, composed)', () => {
  it('stores the JCS text of the event; its digest and input digest are those of the whole objects', () => {
    const input = {
      event_type: 'rw003.execution.started',
      control_scope_ref: { space_id: 'sp1', scope_kind: 'attempt', scope_id: 'att_1' },
      actor_ref: actor,
      produced_records: [{ object_id: 'att_1', revision_id: 'rev_2', content_digest: `sha256:${'b'.repeat(64)}` }],
      idempotency_key: 'start_att_1',
      payload: { note: 'é\u20ac', nested: { list: [1, 2.5, null, true] } },
    };
    const head: HeadRow = { project_id: 'sp1', branch_id: 'x', scope_kind: 'attempt', position: 3, event_id: 'evt_3', event_digest: `sha256:${'c'.repeat(64)}`, state: 'active' };
    for (const h of [undefined, head]) {
      const { event, row } = run(input, h);
      expect(row.document).toBe(canonicalize(event));
      expect(JSON.parse(row.document)).toStrictEqual(event);
      expect(row.event_digest).toBe(eventDigest(event as never));
      const { event_digest: _d, ...draft } = event;
      expect(row.event_digest).toBe(sha256Digest(canonicalize(draft)!));
      expect(row.input_digest).toBe(digestOf(parseEventInput(input)));
      expect(event.prev_event_digest).toBe(h?.event_digest ?? null);
    }
  });
});

/** Runs the program against a scripted store, recording every call it makes. */
function script(input: unknown, answers: { head?: HeadRow; prior?: EventRow }, opts: Partial<AppendOptions> = {}) {
  const calls: Call[] = [];
  const program = appendControl(parseEventInput(input), { at: '2026-12-01T10:00:00.000Z', ...opts }, sequentialIds('t'));
  let next = program.next();
  while (!next.done) {
    const call = next.value as Call;
    calls.push(call);
    next = program.next(call.op === 'streamHead' ? answers.head : call.op === 'eventByIdempotency' ? answers.prior : undefined);
  }
  return { event: next.value as unknown as Record<string, unknown>, calls };
}

describe('appendControl (RW-003 §1.2 append decision)', () => {
  const scope = { space_id: 'sp1', scope_kind: 'delegation', scope_id: 'dlg_1' } as const;
  const stream = { project_id: 'rw-control:sp1', branch_id: 'delegation:dlg_1' };
  const input = { event_type: 'rw003.delegation.amended', control_scope_ref: scope, actor_ref: actor, payload: { lifecycle: 'suspended' } };
  const keyed = { ...input, idempotency_key: 'amend_1' };
  const head: HeadRow = { ...stream, scope_kind: 'delegation', position: 3, event_id: 'evt_3', event_digest: `sha256:${'c'.repeat(64)}`, state: 'active' };

  it('locks the head, chains the event one past it, and writes the event row and the new head', () => {
    const { event, calls } = script(input, { head });
    expect(calls.map((c) => c.op)).toEqual(['streamHead', 'insertEvent', 'upsertHead']);
    expect(calls[0]!.args).toEqual([stream, 'update']);
    expect(event).toMatchObject({ ...stream, event_id: 'evt_t_000001', position: 4, prev_event_digest: head.event_digest });
    const row = calls[1]!.args[0] as EventRow;
    expect(row).toMatchObject({ ...stream, position: 4, event_id: 'evt_t_000001', event_type: 'rw003.delegation.amended', idempotency_key: null });
    expect(calls[2]!.args[0]).toEqual({ ...stream, scope_kind: 'delegation', position: 4, event_id: 'evt_t_000001', event_digest: event.event_digest, state: 'suspended' });
  });

  it('a new stream starts at position 1 with no previous digest', () => {
    const { event, calls } = script(input, {});
    expect(event).toMatchObject({ position: 1, prev_event_digest: null });
    expect(calls[2]!.args[0]).toMatchObject({ position: 1, state: 'suspended' });
  });

  it('with an idempotency key, looks the key up on the stream first and stores it on the row', () => {
    const { calls } = script(keyed, { head });
    expect(calls.map((c) => c.op)).toEqual(['eventByIdempotency', 'streamHead', 'insertEvent', 'upsertHead']);
    expect(calls[0]!.args).toEqual([stream, 'amend_1']);
    expect((calls[2]!.args[0] as EventRow).idempotency_key).toBe('amend_1');
  });

  it('a replayed key with the same content returns the stored event and writes nothing', () => {
    const first = script(keyed, { head });
    const prior = first.calls[2]!.args[0] as EventRow;
    const { event, calls } = script(keyed, { head, prior });
    expect(calls.map((c) => c.op)).toEqual(['eventByIdempotency']);
    expect(event).toEqual(first.event);
  });

  it('a replayed key with different content is refused, naming the key', () => {
    const prior = script(keyed, { head }).calls[2]!.args[0] as EventRow;
    const err = expectCode(() => script({ ...keyed, payload: { lifecycle: 'active' } }, { head, prior }), 'invalid_request');
    expect(err.message).toBe('idempotency key reused with different content');
    expect(err.details).toEqual({ key: 'amend_1' });
  });

  it('an expected head must be the current one: position and event id', () => {
    expect(script(input, { head }, { expectedHead: { position: 3, event_id: 'evt_3' } }).event).toMatchObject({ position: 4 });
    expect(script(input, {}, { expectedHead: { position: 0, event_id: 'evt_none' } }).event).toMatchObject({ position: 1 });
    for (const [expectedHead, h] of [
      [{ position: 2, event_id: 'evt_3' }, head],
      [{ position: 3, event_id: 'evt_other' }, head],
      [{ position: 3, event_id: 'evt_3' }, undefined],
    ] as const) {
      const err = expectCode(() => script(input, { head: h }, { expectedHead }), 'context_invalidated');
      expect(err.message).toBe('control stream head moved');
      expect(err.details).toEqual({ branch_id: 'delegation:dlg_1' });
    }
  });
});

describe('parseEventInput and headOf', () => {
  it('refuses malformed input with invalid_request and the issues', () => {
    const err = expectCode(() => parseEventInput({ event_type: 'rw003.nope' }), 'invalid_request');
    expect(err.message).toBe('control event is malformed');
    expect((err.details.issues as Array<{ path: string }>).map((i) => i.path)).toEqual(['event_type', 'control_scope_ref', 'actor_ref']);
  });

  it('a head row becomes a stream head with a numeric position', () => {
    const row = { project_id: 'rw-control:sp1', branch_id: 'agent:a', scope_kind: 'agent', position: '7', event_id: 'evt_7', event_digest: `sha256:${'d'.repeat(64)}`, state: 'tripped' };
    expect(headOf(row as unknown as HeadRow)).toStrictEqual({ project_id: 'rw-control:sp1', branch_id: 'agent:a', position: 7, event_id: 'evt_7', event_digest: `sha256:${'d'.repeat(64)}`, state: 'tripped' });
  });
});

describe("Baton's own event inputs (issue #24 item 5: trust what Baton itself built)", () => {
  const scope = { space_id: 'sp1', scope_kind: 'attempt' as const, scope_id: 'att_1' };
  const cases = {
    'the bare minimum (every default applies)': { event_type: 'rw003.execution.started' as const, control_scope_ref: scope, actor_ref: actor },
    'absent optionals given as undefined': { event_type: 'rw003.execution.terminal' as const, control_scope_ref: scope, actor_ref: actor, outcome: undefined, idempotency_key: 'terminal:rec_1', fence_set: undefined, payload: { reasons: ['x'] } },
    'every member given': {
      event_type: 'rw003.permission.evaluated' as const,
      control_scope_ref: scope,
      actor_ref: actor,
      produced_records: [actor],
      evidence: [actor],
      idempotency_key: 'admit:eff_1',
      fence_set: [{ project_id: 'rw-control:sp1', branch_id: 'agent:a', position: 1, event_id: 'evt_1', event_digest: `sha256:${'b'.repeat(64)}` }],
      payload: { decision: 'allow' },
    },
  };
  for (const [name, input] of Object.entries(cases)) {
    it(`are what parsing them would give, and digest the same: ${name}`, () => {
      const own = ownEventInput(input);
      expect(own).toStrictEqual(parseEventInput(input));
      expect(canonicalize(own)).toBe(canonicalize(parseEventInput(input)));
    });
  }
});
