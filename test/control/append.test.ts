import { describe, expect, it } from 'vitest';
import canonicalize from 'canonicalize';
import { appendControl, parseEventInput } from '../../src/control/append.ts';
import { eventDigest } from '../../src/control/event.ts';
import { digestOf, sha256Digest } from '../../src/records/digest.ts';
import { sequentialIds } from '../../src/records/ids.ts';
import type { Call, EventRow, HeadRow } from '../../src/store/tx/ops.ts';

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
