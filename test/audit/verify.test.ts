import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditStore } from '../../src/audit/scan.ts';
import { AuditVerifier, type AuditReport, type BreakKind } from '../../src/audit/verify.ts';
import { eventDigest, eventSchemaRefOf, type ControlEvent } from '../../src/control/event.ts';
import type { StreamId } from '../../src/control/scope.ts';
import { canonicalText } from '../../src/records/canonical.ts';
import { digestOf } from '../../src/records/digest.ts';
import { computeContentDigest, refOf, sealRecord } from '../../src/records/envelope.ts';
import { randomIds } from '../../src/records/ids.ts';
import { systemClock } from '../../src/records/time.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { actor, attemptScope, freshSpace } from '../store/support/fixtures.ts';
import { scanAll, scansHeadState, seed, verifyRows, withHeadStates, type HeadStateRow, type Scanned, type Seeded } from './support/seed.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-audit-'));
let store: SqliteStore;
let seeded: Seeded;
/** The rows exactly as the store's scans return them. */
let scanned: Scanned;
/** The same rows, each event with its head's stored state and scope_kind. */
let clean: Scanned;

/** control_heads' projected columns, read straight from the file. */
const headStates = (s: SqliteStore) => s.handle.prepare('SELECT project_id, branch_id, state, scope_kind FROM control_heads').all() as HeadStateRow[];

beforeAll(async () => {
  store = SqliteStore.open(join(dir, 'audit.db'), { create: true });
  seeded = await seed(store);
  scanned = await scanAll(store.audit);
  clean = withHeadStates(scanned, headStates(store));
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A deep copy of the clean rows to tamper with. */
const copy = (): Scanned => structuredClone(clean);
const kinds = (r: AuditReport) => r.breaks.map((b) => b.kind);
const recordRow = (rows: Scanned, revisionId: string) => rows.records.find((r) => r.revision_id === revisionId)!;
const eventRows = (rows: Scanned) => rows.events.filter((e) => e.branch_id === seeded.attempt.branch_id);
const eventRow = (rows: Scanned, position: number) => eventRows(rows).find((e) => e.position === BigInt(position))!;
/** Flips one character of `text` at the first occurrence of `from`. */
const flip = (text: string, from: string, to: string) => {
  expect(text).toContain(from);
  return text.replace(from, to);
};
/** An event document re-sealed with a consistent digest after `edit`, as an attacker with the key-less digest rule would. */
const reseal = (document: string, edit: (e: ControlEvent) => void) => {
  const e = JSON.parse(document) as ControlEvent;
  edit(e);
  e.event_digest = eventDigest(e);
  return { document: canonicalText(e), digest: e.event_digest };
};

function expectOnly(report: AuditReport, kind: BreakKind, where: Record<string, string>) {
  expect(kinds(report)).toEqual([kind]);
  expect(report.breaks[0]!.where).toMatchObject(where);
  expect(report.break_count).toBe(1);
}

describe('audit rules over rows from a real store', () => {
  it('finds nothing in what the store wrote, and counts everything', () => {
    const report = verifyRows(clean);
    expect(report.breaks).toEqual([]);
    expect(report.break_count).toBe(0);
    expect(report.records_checked).toBe(clean.records.length);
    expect(report.records_checked).toBeGreaterThanOrEqual(4); // 3 revisions + 1 single (+ the admission's decision)
    expect(report.record_heads_checked).toBe(clean.recordHeads.length);
    expect(report.events_checked).toBe(clean.events.length);
    expect(report.streams_checked).toBe(clean.controlHeads.length);
    expect(report.control_heads_checked).toBe(clean.controlHeads.length);
    expect(report.head_states_checked).toBe(clean.controlHeads.length);
    expect(eventRows(clean).map((e) => e.position)).toEqual([1n, 2n, 3n, 4n]);
  });

  it('scans in bounded pages with the same result at any page size', async () => {
    expect(await scanAll(store.audit, 1)).toEqual(scanned);
    expect(await auditStore(store.audit, { pageSize: 1 })).toEqual(verifyRows(scanned));
  });

  describe('records', () => {
    it('a changed byte in a document is a digest mismatch on that revision', () => {
      const rows = copy();
      const [, second] = seeded.revisions;
      const row = recordRow(rows, second!.revision_id);
      row.document = flip(row.document, '"n":2', '"n":7');
      expectOnly(verifyRows(rows), 'record_digest_mismatch', { record_id: second!.record_id, revision_id: second!.revision_id });
    });

    it('a document that does not parse, strictly, or is not an envelope', () => {
      const cases = [
        (d: string) => d.slice(0, -1), // truncated
        (d: string) => `{"body":{},${d.slice(1)}`, // duplicate key: JSON.parse would keep the last one silently
        () => '[1]',
        () => '{"record_id":"x"}',
      ];
      for (const mutate of cases) {
        const rows = copy();
        const row = recordRow(rows, seeded.single.revision_id);
        row.document = mutate(row.document);
        const report = verifyRows(rows);
        expect(kinds(report)[0], row.document.slice(0, 40)).toBe('record_unparseable');
        expect(report.breaks[0]!.where.revision_id).toBe(seeded.single.revision_id);
      }
    });

    it('bytes that are not the canonical form are a break even when the digest still matches', () => {
      const rows = copy();
      const row = recordRow(rows, seeded.single.revision_id);
      row.document = row.document.replace('{', '{ ');
      expectOnly(verifyRows(rows), 'record_not_canonical', { revision_id: seeded.single.revision_id });
    });

    it('a content_digest column that disagrees with the bytes', () => {
      const rows = copy();
      recordRow(rows, seeded.single.revision_id).content_digest = `sha256:${'0'.repeat(64)}`;
      expectOnly(verifyRows(rows), 'record_digest_mismatch', { revision_id: seeded.single.revision_id });
    });

    it('a re-sealed document whose content_digest field was rewritten but not the column', () => {
      const rows = copy();
      const row = recordRow(rows, seeded.single.revision_id);
      const doc = JSON.parse(row.document) as Record<string, unknown>;
      doc.body = { only: false };
      doc.content_digest = computeContentDigest(doc);
      row.document = canonicalText(doc);
      const report = verifyRows(rows);
      expectOnly(report, 'record_digest_mismatch', { revision_id: seeded.single.revision_id });
      expect(report.breaks[0]!.detail).toContain(`column ${seeded.single.content_digest}`);
    });

    it('record_id, revision_id, schema_ref and prior_revision columns must match the document', () => {
      for (const [col, value] of [
        ['revision_id', 'rev_forged'],
        ['schema_ref', 'rw-agent-delegation/0.1.1#agent_card'],
        ['prior_revision', 'rev_forged'],
      ] as const) {
        const rows = copy();
        const row = recordRow(rows, seeded.revisions[2]!.revision_id);
        row[col] = value;
        const report = verifyRows(rows);
        expect(kinds(report)).toEqual(['record_column_mismatch']);
        expect(report.breaks[0]!.detail).toContain(`${col}: stored ${value}`);
      }
      const rows = copy();
      const row = recordRow(rows, seeded.single.revision_id);
      row.record_id = 'grant_elsewhere';
      row.head_revision_id = row.revision_id;
      expect(kinds(verifyRows(rows))).toEqual(['record_column_mismatch']);
    });

    it('a missing middle revision breaks the chain at the next one', () => {
      const rows = copy();
      const [, second, third] = seeded.revisions;
      rows.records = rows.records.filter((r) => r.revision_id !== second!.revision_id);
      const report = verifyRows(rows);
      expectOnly(report, 'record_chain_break', { revision_id: third!.revision_id });
      expect(report.breaks[0]!.detail).toContain(`revision ${second!.revision_id}`);
    });

    it('a missing first revision leaves a first stored revision that names a prior', () => {
      const rows = copy();
      rows.records = rows.records.filter((r) => r.revision_id !== seeded.revisions[0]!.revision_id);
      expectOnly(verifyRows(rows), 'record_chain_break', { revision_id: seeded.revisions[1]!.revision_id });
    });

    it('a later revision that names no prior', () => {
      const rows = copy();
      const third = seeded.revisions[2]!;
      const { prior_revision_ref: _p, ...rest } = third;
      const doc = { ...rest, content_digest: '' };
      doc.content_digest = computeContentDigest(doc);
      const row = recordRow(rows, third.revision_id);
      Object.assign(row, { document: canonicalText(doc), content_digest: doc.content_digest, prior_revision: null });
      expectOnly(verifyRows(rows), 'record_chain_break', { revision_id: third.revision_id });
    });

    it('the store refuses a prior reference with the right revision id but another digest (the audit would flag it)', async () => {
      const own = SqliteStore.open(join(dir, 'prior-digest.db'), { create: true });
      try {
        const deps = { ids: randomIds, clock: systemClock };
        const r1 = sealRecord({ type: 'grant', body: { n: 1 }, issuedBy: actor, lifecycle: 'active' }, deps);
        const forged = { ...refOf(r1), content_digest: `sha256:${'0'.repeat(64)}` };
        const r2 = sealRecord({ type: 'grant', body: { n: 2 }, issuedBy: actor, lifecycle: 'active', recordId: r1.record_id, prior: forged }, deps);
        await own.putRecord(r1);
        await expect(own.putRecord(r2)).rejects.toMatchObject({ code: 'invalid_request' });
        expect((await auditStore(own.audit)).break_count).toBe(0);
      } finally {
        await own.close();
      }
    });

    it('a head that is not the last revision, or is missing, or has no revisions', () => {
      const [first, , third] = seeded.revisions;
      let rows = copy();
      rows.records.filter((r) => r.record_id === first!.record_id).forEach((r) => (r.head_revision_id = first!.revision_id));
      const report = verifyRows(rows);
      expectOnly(report, 'record_head_mismatch', { record_id: first!.record_id, revision_id: third!.revision_id });
      expect(report.breaks[0]!.detail).toBe(`head names ${first!.revision_id}; the last revision is ${third!.revision_id}`);

      rows = copy();
      recordRow(rows, seeded.single.revision_id).head_revision_id = null;
      expectOnly(verifyRows(rows), 'record_head_mismatch', { record_id: seeded.single.record_id });

      rows = copy();
      rows.recordHeads.push({ record_id: 'grant_ghost', revision_id: 'rev_ghost', last_seq: null });
      expectOnly(verifyRows(rows), 'record_head_dangling', { record_id: 'grant_ghost' });
    });
  });

  describe('control events', () => {
    const where = (position: number) => ({ branch_id: seeded.attempt.branch_id, position: String(position), event_id: seeded.attempt.event_ids[position - 1]! });

    it('a changed byte in an event document is a digest mismatch on that event', () => {
      const rows = copy();
      const row = eventRow(rows, 3);
      row.document = flip(row.document, '"step":3', '"step":8');
      const report = verifyRows(rows);
      expect(kinds(report)).toEqual(['event_digest_mismatch', 'event_column_mismatch']); // the input digest no longer matches either
      expect(report.breaks[0]!.where).toMatchObject(where(3));
      expect(report.breaks[1]!.detail).toMatch(/^input_digest: /);
    });

    it('a document that does not parse, or is not a control event', () => {
      for (const document of ['{"event_id":', '{"event_id":"evt_x"}']) {
        const rows = copy();
        eventRow(rows, 2).document = document;
        expectOnly(verifyRows(rows), 'event_unparseable', where(2));
      }
    });

    it('non-canonical bytes with a matching digest', () => {
      const rows = copy();
      const row = eventRow(rows, 1);
      row.document = `${row.document}\n`;
      expectOnly(verifyRows(rows), 'event_not_canonical', where(1));
    });

    it('an event_digest column that disagrees with the bytes', () => {
      const rows = copy();
      eventRow(rows, 4).event_digest = `sha256:${'1'.repeat(64)}`;
      // One break: the head and the next link are checked against the document's digest, which is intact.
      expectOnly(verifyRows(rows), 'event_digest_mismatch', where(4));
    });

    it('event_id, event_type, position, idempotency_key and input_digest columns must match the document', () => {
      for (const [col, value] of [
        ['event_id', 'evt_forged'],
        ['event_type', 'rw003.execution.terminal'],
        ['idempotency_key', 'other-key'],
        ['input_digest', `sha256:${'2'.repeat(64)}`],
      ] as const) {
        const rows = copy();
        eventRow(rows, 2)[col] = value;
        const report = verifyRows(rows);
        expect(kinds(report), col).toEqual(['event_column_mismatch']);
        expect(report.breaks[0]!.detail).toContain(`${col}: stored ${value}`);
      }
    });

    it('a deleted middle event is a gap at the event after it', () => {
      const rows = copy();
      rows.events = rows.events.filter((e) => !(e.branch_id === seeded.attempt.branch_id && e.position === 2n));
      const report = verifyRows(rows);
      expectOnly(report, 'event_position_gap', where(3));
      expect(report.breaks[0]!.detail).toBe(`expected position 2, found 3 after ${seeded.attempt.event_ids[0]}`);
    });

    it('a deleted first event is a gap at position 1', () => {
      const rows = copy();
      rows.events = rows.events.filter((e) => !(e.branch_id === seeded.attempt.branch_id && e.position === 1n));
      expectOnly(verifyRows(rows), 'event_position_gap', where(2));
    });

    it('a re-sealed event that passes its own digest breaks the link to the next one', () => {
      const rows = copy();
      const row = eventRow(rows, 2);
      const forged = reseal(row.document, (e) => (e.payload = { step: 'forged' }));
      Object.assign(row, { document: forged.document, event_digest: forged.digest });
      const report = verifyRows(rows);
      expect(kinds(report)).toEqual(['event_column_mismatch', 'event_chain_break']);
      expect(report.breaks[0]!.detail).toMatch(/^input_digest: /); // the payload is part of the input
      expect(report.breaks[1]!.where).toMatchObject(where(3));
      expect(report.breaks[1]!.detail).toContain(`the previous event's digest is ${forged.digest}`);
    });

    it('a first event must link to nothing', () => {
      const rows = copy();
      const row = eventRow(rows, 1);
      const forged = reseal(row.document, (e) => (e.prev_event_digest = `sha256:${'3'.repeat(64)}`));
      Object.assign(row, { document: forged.document, event_digest: forged.digest });
      const report = verifyRows(rows);
      expect(kinds(report)).toEqual(['event_chain_break', 'event_chain_break']);
      expect(report.breaks[0]!.detail).toContain('the first event must have null');
    });

    it('a head that does not name the last event, a stream without a head, a head without a stream', () => {
      let rows = copy();
      for (const e of eventRows(rows)) Object.assign(e, { head_position: 3n, head_event_id: seeded.attempt.event_ids[2] });
      let report = verifyRows(rows);
      expectOnly(report, 'control_head_mismatch', where(4));
      expect(report.breaks[0]!.detail).toContain('position: stored 3, document 4');

      rows = copy();
      for (const e of eventRows(rows)) e.head_event_digest = `sha256:${'4'.repeat(64)}`;
      expectOnly(verifyRows(rows), 'control_head_mismatch', where(4));

      rows = copy();
      for (const e of eventRows(rows)) Object.assign(e, { head_position: null, head_event_id: null, head_event_digest: null });
      report = verifyRows(rows);
      expectOnly(report, 'control_head_mismatch', where(4));
      expect(report.breaks[0]!.detail).toMatch(/^stream has no head/);

      rows = copy();
      rows.controlHeads.push({ project_id: 'rw-control:nowhere', branch_id: 'agent:ghost', position: 2n, event_id: 'evt_ghost', event_digest: `sha256:${'5'.repeat(64)}`, last_position: null });
      expectOnly(verifyRows(rows), 'control_head_dangling', { branch_id: 'agent:ghost', position: '2' });
    });
  });

  describe('head states', () => {
    const auth = () => seeded.authority;
    const streamRows = (rows: Scanned, s: StreamId) => rows.events.filter((e) => e.project_id === s.project_id && e.branch_id === s.branch_id);
    /** Sets a head column as an UPDATE of control_heads would: on every event row of the stream. */
    const setHead = (rows: Scanned, s: StreamId, cols: { head_state?: string; head_scope_kind?: string }) => streamRows(rows, s).forEach((e) => Object.assign(e, cols));
    /** The fields appendControl assigns; the rest is the input that input_digest covers. */
    const ASSIGNED = new Set(['event_id', 'event_schema_ref', 'project_id', 'branch_id', 'position', 'recorded_at', 'prev_event_digest', 'event_digest']);
    /**
     * Appends an event the store would have refused, as someone writing the file could:
     * correctly chained and digested, with the head moved onto it.
     */
    const forgeNext = (rows: Scanned, s: StreamId, fields: Partial<ControlEvent> & Pick<ControlEvent, 'event_type'>, head_state?: string) => {
      const stream = streamRows(rows, s);
      const last = stream[stream.length - 1]!;
      const prev = JSON.parse(last.document) as ControlEvent;
      const { idempotency_key: _k, outcome: _o, ...base } = prev;
      const draft = { ...base, payload: {}, event_id: 'evt_forged', event_schema_ref: eventSchemaRefOf(fields.event_type), position: prev.position + 1, prev_event_digest: prev.event_digest, ...fields };
      const event = { ...draft, event_digest: eventDigest(draft) };
      const row = {
        ...last,
        position: BigInt(event.position),
        event_id: event.event_id,
        event_type: event.event_type,
        idempotency_key: null,
        input_digest: digestOf(Object.fromEntries(Object.entries(event).filter(([k]) => !ASSIGNED.has(k)))),
        event_digest: event.event_digest,
        document: canonicalText(event),
      };
      rows.events.splice(rows.events.indexOf(last) + 1, 0, row);
      for (const e of streamRows(rows, s)) Object.assign(e, { head_position: row.position, head_event_id: row.event_id, head_event_digest: row.event_digest }, head_state ? { head_state } : {});
      return { project_id: s.project_id, branch_id: s.branch_id, position: String(row.position), event_id: row.event_id };
    };

    it('every stream the seed moved folds to the state and kind its head stores', () => {
      for (const s of Object.values(auth())) {
        expect(new Set(streamRows(clean, s).map((e) => `${e.head_state}/${e.head_scope_kind}`)), s.branch_id).toEqual(new Set([`${s.state}/${s.scope_kind}`]));
      }
      expect(streamRows(clean, auth().agent).map((e) => e.event_type)).toContain('rw003.circuit_breaker.tripped');
      expect(verifyRows(clean).breaks).toEqual([]);
    });

    it('a revoked head flipped to active in the database is a head_state_mismatch on exactly that stream', async () => {
      const path = join(dir, 'head-state.db');
      const own = SqliteStore.open(path, { create: true });
      try {
        const s = await seed(own);
        const raw = new Database(path);
        try {
          // control_heads is a projection the store rewrites on every append: no immutability trigger guards it.
          expect(raw.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'control_heads'").all()).toEqual([]);
          const flip = raw.prepare("UPDATE control_heads SET state = 'active' WHERE project_id = ? AND branch_id = ? AND state = 'revoked'");
          expect(flip.run(s.authority.revoked.project_id, s.authority.revoked.branch_id).changes).toBe(1);
        } finally {
          raw.close();
        }
        // What a fence now sees: the revoked delegation permits effects again.
        expect(await own.control.streamHead(s.authority.revoked)).toMatchObject({ state: 'active' });
        const expected = [
          {
            kind: 'head_state_mismatch',
            where: { project_id: s.authority.revoked.project_id, branch_id: s.authority.revoked.branch_id },
            detail: 'state: stored active, recomputed revoked',
          },
        ];
        const rows = await scanAll(own.audit, 2);
        expect(verifyRows(withHeadStates(rows, headStates(own))).breaks).toEqual(expected);
        // Through the store's own scan, once it selects control_heads.state (src/store/audit-sql.ts).
        if (scansHeadState(rows)) expect((await auditStore(own.audit, { pageSize: 2 })).breaks).toEqual(expected);
      } finally {
        await own.close();
      }
    });

    it('a flipped state or scope_kind on any kind of stream, named stored against recomputed', () => {
      for (const [s, cols, detail] of [
        [auth().agent, { head_state: 'tripped' }, 'state: stored tripped, recomputed active'],
        [auth().space, { head_state: 'active' }, 'state: stored active, recomputed retired'],
        [auth().reassigned, { head_state: 'revoked' }, 'state: stored revoked, recomputed active'],
        [seeded.attempt, { head_state: 'active' }, 'state: stored active, recomputed unresolved'],
        [auth().agent, { head_scope_kind: 'attempt' }, 'scope_kind: stored attempt, recomputed agent'],
        [auth().revoked, { head_state: 'active', head_scope_kind: 'space' }, 'state: stored active, recomputed revoked; scope_kind: stored space, recomputed delegation'],
      ] as const) {
        const rows = copy();
        setHead(rows, s, cols);
        const report = verifyRows(rows);
        expect(report.breaks, detail).toEqual([{ kind: 'head_state_mismatch', where: { project_id: s.project_id, branch_id: s.branch_id }, detail }]);
      }
    });

    it('an event the append path refuses is event_state_invalid, and the fold carries on without it', () => {
      // A reassignment of a delegation revoked for cause, naming no contract revision.
      let rows = copy();
      let where = forgeNext(rows, auth().revoked, { event_type: 'rw003.delegation.reassigned', payload: {} });
      let report = verifyRows(rows);
      expectOnly(report, 'event_state_invalid', where);
      expect(report.breaks[0]!.detail).toMatch(/^rw003\.delegation\.reassigned on a delegation stream in state revoked: .+; the fold keeps revoked$/);
      // The forger also sets the head active, which is what the event was for.
      rows = copy();
      forgeNext(rows, auth().revoked, { event_type: 'rw003.delegation.reassigned', payload: {} }, 'active');
      expect(verifyRows(rows).breaks.map((b) => [b.kind, b.detail.slice(0, 40)])).toEqual([
        ['event_state_invalid', expect.any(String)],
        ['head_state_mismatch', 'state: stored active, recomputed revoked'],
      ]);
      // An event type that does not belong on the stream's kind.
      rows = copy();
      where = forgeNext(rows, auth().agent, { event_type: 'rw003.delegation.revoked' }, 'revoked');
      report = verifyRows(rows);
      expect(kinds(report)).toEqual(['event_state_invalid', 'head_state_mismatch']);
      expect(report.breaks[0]!.where).toEqual(where);
      expect(report.breaks[0]!.detail).toContain('does not belong on a agent stream');
      // A control_scope_ref that addresses another stream than the one the event is on.
      rows = copy();
      const other = { space_id: seeded.space, scope_kind: 'delegation' as const, scope_id: 'dlg_elsewhere' };
      where = forgeNext(rows, auth().revoked, { event_type: 'rw003.delegation.revoked', control_scope_ref: other });
      report = verifyRows(rows);
      expectOnly(report, 'event_state_invalid', where);
      expect(report.breaks[0]!.detail).toBe(`control_scope_ref addresses rw-control:${seeded.space} delegation:dlg_elsewhere, not the event's stream`);
    });

    it('a stream with an unreadable event or a misplaced head is not judged on its state as well', () => {
      let rows = copy();
      streamRows(rows, auth().space)[0]!.document = '{"event_id":';
      setHead(rows, auth().space, { head_state: 'active' });
      let report = verifyRows(rows);
      expect(kinds(report)).toEqual(['event_unparseable']);
      expect(report.head_states_checked).toBe(clean.controlHeads.length - 1);

      rows = copy();
      const first = streamRows(rows, auth().revoked)[0]!;
      for (const e of streamRows(rows, auth().revoked)) Object.assign(e, { head_position: first.position, head_event_id: first.event_id, head_event_digest: first.event_digest, head_state: 'active' });
      report = verifyRows(rows);
      expect(kinds(report)).toEqual(['control_head_mismatch']);
    });

    it('a head whose state or scope_kind is absent or null is not judged, whatever the other says', () => {
      const agent = auth().agent;
      for (const cols of [
        { head_state: undefined, head_scope_kind: 'space' },
        { head_state: null, head_scope_kind: 'agent' },
        { head_state: 'tripped', head_scope_kind: undefined },
        { head_state: 'tripped', head_scope_kind: null },
      ]) {
        const rows = copy();
        for (const e of streamRows(rows, agent)) {
          for (const [k, v] of Object.entries(cols)) if (v === undefined) delete (e as unknown as Record<string, unknown>)[k];
          else Object.assign(e, { [k]: v });
        }
        expect(verifyRows(rows), JSON.stringify(cols)).toMatchObject({ break_count: 0, head_states_checked: clean.controlHeads.length - 1 });
      }
    });

    it('a stream none of whose events addresses it recomputes no scope_kind, and its head kind is not judged', () => {
      const rows = copy();
      const first = eventRow(rows, 1);
      const event = JSON.parse(first.document) as ControlEvent;
      const draft = { ...event, branch_id: 'attempt:ghost', event_id: 'evt_ghost' }; // its control_scope_ref still addresses the real attempt
      const forged = { ...draft, event_digest: eventDigest(draft) };
      const row = {
        ...first,
        branch_id: forged.branch_id,
        event_id: forged.event_id,
        event_digest: forged.event_digest,
        document: canonicalText(forged),
        head_position: 1n,
        head_event_id: forged.event_id,
        head_event_digest: forged.event_digest,
        head_state: 'unresolved',
        head_scope_kind: 'attempt',
      };
      rows.events.push(row);
      const report = verifyRows(rows);
      expect(kinds(report)).toEqual(['event_state_invalid']);
      expect(report.head_states_checked).toBe(clean.controlHeads.length + 1);
    });

    it('an unreadable event is skipped by the fold, which goes on from the state before it', () => {
      const rows = copy();
      const stream = streamRows(rows, auth().reassigned);
      const revocation = stream.find((e) => e.event_type === 'rw003.delegation.revoked')!;
      const reassignment = stream.find((e) => e.event_type === 'rw003.delegation.reassigned')!;
      revocation.document = '{"event_id":';
      expect(verifyRows(rows).breaks.map((b) => [b.kind, b.where.event_id, b.detail.replace(/^stored document is not strict JSON: .*/, 'not strict JSON')])).toEqual([
        ['event_unparseable', revocation.event_id, 'not strict JSON'],
        [
          'event_state_invalid',
          reassignment.event_id,
          'rw003.delegation.reassigned on a delegation stream in state active: only a delegation revoked for reassignment can be reassigned; the fold keeps active',
        ],
      ]);
    });

    it('rows without the head columns still audit the chains, and say how many head states were checked', () => {
      const report = verifyRows(scanned);
      expect(report.break_count).toBe(0);
      expect(report.head_states_checked).toBe(scansHeadState(scanned) ? clean.controlHeads.length : 0);
      const rows = copy();
      for (const e of rows.events) Object.assign(e, { head_state: null, head_scope_kind: null });
      expect(verifyRows(rows)).toMatchObject({ break_count: 0, head_states_checked: 0 });
    });
  });

  describe('what each break names, exactly', () => {
    const D0 = `sha256:${'0'.repeat(64)}`;
    const D1 = `sha256:${'1'.repeat(64)}`;
    const recordWhere = (row: { seq: bigint; record_id: string; revision_id: string }) => ({ seq: String(row.seq), record_id: row.record_id, revision_id: row.revision_id });
    const eventWhere = (row: { project_id: string; branch_id: string; position: bigint; event_id: string }) => ({
      project_id: row.project_id,
      branch_id: row.branch_id,
      position: String(row.position),
      event_id: row.event_id,
    });
    /** A record document edited and re-sealed with a consistent content digest, document and column alike. */
    const resealRecord = (row: { document: string; content_digest: string }, edit: (doc: Record<string, unknown>) => void) => {
      const doc = JSON.parse(row.document) as Record<string, unknown>;
      edit(doc);
      doc.content_digest = computeContentDigest(doc);
      Object.assign(row, { document: canonicalText(doc), content_digest: doc.content_digest });
    };
    /** Nested deeper than canonicalisation goes (128), within what the verifier parses (256). */
    const deep = (): unknown => {
      let v: unknown = 'bottom';
      for (let i = 0; i < 150; i++) v = { d: v };
      return v;
    };
    /** Re-seals an event row's document after `edit`, moving the head's digest along as a forger would. */
    const resealEvent = (rows: Scanned, position: number, edit: (e: ControlEvent) => void) => {
      const row = eventRow(rows, position);
      const before = row.event_digest;
      const forged = reseal(row.document, edit);
      Object.assign(row, { document: forged.document, event_digest: forged.digest });
      for (const e of eventRows(rows)) if (e.head_event_digest === before) e.head_event_digest = forged.digest;
      return { row, before, digest: forged.digest };
    };

    it('an unreadable revision is one break: its columns stand in for it in the chain and at the head', () => {
      for (const rev of seeded.revisions) {
        const rows = copy();
        const row = recordRow(rows, rev.revision_id);
        row.document = row.document.slice(0, -1);
        expect(verifyRows(rows).breaks, rev.revision_id).toEqual([{ kind: 'record_unparseable', where: recordWhere(row), detail: expect.stringMatching(/^stored document is not strict JSON: \S/) }]);
      }
    });

    it('a stored document that is JSON but no object', () => {
      for (const document of ['null', '1', '"grant"', '[1]']) {
        const rows = copy();
        const row = recordRow(rows, seeded.single.revision_id);
        row.document = document;
        expect(verifyRows(rows).breaks, document).toEqual([{ kind: 'record_unparseable', where: recordWhere(row), detail: 'stored document is not a JSON object' }]);
      }
    });

    it('a document that is no envelope names the first five things wrong with it', () => {
      const rows = copy();
      const row = recordRow(rows, seeded.single.revision_id);
      row.document = '{"record_id":"x"}';
      const missing = (field: string, what = 'string') => `${field}: Invalid input: expected ${what}, received undefined`;
      expect(verifyRows(rows).breaks).toEqual([
        {
          kind: 'record_unparseable',
          where: recordWhere(row),
          detail: `not a record envelope: ${[missing('revision_id'), missing('schema_ref'), missing('issued_by_actor_ref', 'object'), missing('issued_at'), missing('content_digest')].join('; ')}`,
        },
      ]);
    });

    it('bytes that are not canonical, and a document too deep to canonicalise whose digest cannot be recomputed', () => {
      let rows = copy();
      let row = recordRow(rows, seeded.single.revision_id);
      row.document = row.document.replace('{', '{ ');
      expect(verifyRows(rows).breaks[0]!.detail).toBe(`stored bytes (${Buffer.byteLength(row.document)} B) are not the canonical text the digest covers`);

      rows = copy();
      row = recordRow(rows, seeded.single.revision_id);
      row.document = JSON.stringify({ ...(JSON.parse(row.document) as object), body: { deep: deep() } });
      const c = seeded.single.content_digest;
      expect(verifyRows(rows).breaks).toEqual([
        { kind: 'record_not_canonical', where: recordWhere(row), detail: `stored bytes (${Buffer.byteLength(row.document)} B) are not the canonical text the digest covers` },
        { kind: 'record_digest_mismatch', where: recordWhere(row), detail: `recomputed (none); column ${c}; document ${c}` },
      ]);
    });

    it("a document whose own content_digest field was rewritten, bytes and column intact", () => {
      const rows = copy();
      const row = recordRow(rows, seeded.single.revision_id);
      row.document = canonicalText({ ...(JSON.parse(row.document) as object), content_digest: D0 });
      const c = seeded.single.content_digest;
      expect(verifyRows(rows).breaks).toEqual([{ kind: 'record_digest_mismatch', where: recordWhere(row), detail: `recomputed ${c}; column ${c}; document ${D0}` }]);
    });

    it('a record_id column that disagrees with the document', () => {
      const rows = copy();
      const row = recordRow(rows, seeded.single.revision_id);
      Object.assign(row, { record_id: 'grant_elsewhere', head_revision_id: row.revision_id });
      expect(verifyRows(rows).breaks).toEqual([{ kind: 'record_column_mismatch', where: recordWhere(row), detail: `record_id: stored grant_elsewhere, document ${seeded.single.record_id}` }]);
    });

    it('a prior reference that names another object or another digest of the revision before', () => {
      const [, second, third] = seeded.revisions;
      for (const [patch, named] of [
        [{ object_id: 'grant_other' }, 'object grant_other'],
        [{ content_digest: D0 }, `digest ${D0}`],
        [{ object_id: 'grant_other', content_digest: D0 }, `object grant_other, digest ${D0}`],
      ] as const) {
        const rows = copy();
        const row = recordRow(rows, third!.revision_id);
        resealRecord(row, (doc) => Object.assign(doc.prior_revision_ref as object, patch));
        expect(verifyRows(rows).breaks, named).toEqual([
          {
            kind: 'record_chain_break',
            where: recordWhere(row),
            detail: `prior revision names ${named}; the one before it is ${second!.revision_id} ${second!.content_digest} (seq ${recordRow(rows, second!.revision_id).seq})`,
          },
        ]);
      }
    });

    it('what a chain break and a head break say', () => {
      const [first, second, third] = seeded.revisions;
      let rows = copy();
      rows.records = rows.records.filter((r) => r.revision_id !== first!.revision_id);
      expect(verifyRows(rows).breaks[0]!.detail).toBe(`the first stored revision names a prior revision ${first!.revision_id}`);

      rows = copy();
      const row = recordRow(rows, third!.revision_id);
      resealRecord(row, (doc) => delete doc.prior_revision_ref);
      row.prior_revision = null;
      expect(verifyRows(rows).breaks[0]!.detail).toBe(`names no prior revision; the one before it is ${second!.revision_id} (seq ${recordRow(rows, second!.revision_id).seq})`);

      rows = copy();
      recordRow(rows, seeded.single.revision_id).head_revision_id = null;
      expect(verifyRows(rows).breaks[0]!.detail).toBe(`record has no head; its last revision is ${seeded.single.revision_id}`);

      rows = copy();
      rows.recordHeads.push({ record_id: 'grant_ghost', revision_id: 'rev_ghost', last_seq: null });
      expect(verifyRows(rows).breaks[0]!.detail).toBe('head names revision rev_ghost but the record has no stored revision');
    });

    it('an event that is no control event names what is wrong, at the root too', () => {
      let rows = copy();
      let row = eventRow(rows, 2);
      row.document = canonicalText({ ...(JSON.parse(row.document) as object), smuggled: 1 });
      expect(verifyRows(rows).breaks[0]).toEqual({ kind: 'event_unparseable', where: eventWhere(row), detail: 'not a control event: (root): Unrecognized key: "smuggled"' });

      rows = copy();
      row = eventRow(rows, 2);
      row.document = '{"event_id":"evt_x"}';
      expect(verifyRows(rows).breaks[0]!.detail).toMatch(/^not a control event: event_type: [^;]+; control_scope_ref: [^;]+; actor_ref: [^;]+; event_schema_ref: [^;]+; project_id: [^;]+$/);
    });

    it("an event whose own event_digest field was rewritten: the digest break, and the head no longer names it", () => {
      const rows = copy();
      const row = eventRow(rows, 4);
      row.document = canonicalText({ ...(JSON.parse(row.document) as object), event_digest: D1 });
      const d = row.event_digest;
      expect(verifyRows(rows).breaks).toEqual([
        { kind: 'event_digest_mismatch', where: eventWhere(row), detail: `recomputed ${d}; column ${d}; document ${D1}` },
        { kind: 'control_head_mismatch', where: eventWhere(row), detail: `head does not name the last event: event_digest: stored ${d}, document ${D1}` },
      ]);
    });

    it('an event too deep to canonicalise: neither its digest nor its input digest can be recomputed', () => {
      const rows = copy();
      const row = eventRow(rows, 4);
      row.document = JSON.stringify({ ...(JSON.parse(row.document) as object), payload: { deep: deep() } });
      const d = row.event_digest;
      expect(verifyRows(rows).breaks).toEqual([
        { kind: 'event_not_canonical', where: eventWhere(row), detail: `stored bytes (${Buffer.byteLength(row.document)} B) are not the canonical text the digest covers` },
        { kind: 'event_digest_mismatch', where: eventWhere(row), detail: `recomputed (none); column ${d}; document ${d}` },
        { kind: 'event_column_mismatch', where: eventWhere(row), detail: `input_digest: stored ${row.input_digest}, document (absent)` },
      ]);
    });

    it("a re-sealed event naming another project or branch than its row: the column, and a scope ref that does not address it", () => {
      for (const field of ['project_id', 'branch_id'] as const) {
        const rows = copy();
        const { row } = resealEvent(rows, 4, (e) => (e[field] = `${e[field]}-elsewhere`));
        expect(verifyRows(rows).breaks, field).toEqual([
          { kind: 'event_column_mismatch', where: eventWhere(row), detail: `${field}: stored ${row[field]}, document ${row[field]}-elsewhere` },
          {
            kind: 'event_state_invalid',
            where: eventWhere(row),
            detail: `control_scope_ref addresses ${seeded.attempt.project_id} ${seeded.attempt.branch_id}, not the event's stream`,
          },
        ]);
      }
    });

    it('a position column moved on: the gap, and the column against the document', () => {
      const rows = copy();
      for (const e of eventRows(rows)) e.head_position = 5n;
      const row = eventRow(rows, 4);
      row.position = 5n;
      expect(verifyRows(rows).breaks).toEqual([
        { kind: 'event_position_gap', where: eventWhere(row), detail: `expected position 4, found 5 after ${seeded.attempt.event_ids[2]}` },
        { kind: 'event_column_mismatch', where: eventWhere(row), detail: 'position: stored 5, document 4' },
      ]);
    });

    it('what the event chain breaks say', () => {
      let rows = copy();
      const d2 = eventRow(rows, 2).event_digest;
      const third = resealEvent(rows, 3, (e) => (e.prev_event_digest = null));
      expect(verifyRows(rows).breaks).toEqual([
        { kind: 'event_chain_break', where: eventWhere(third.row), detail: `prev_event_digest is null; the previous event's digest is ${d2}` },
        { kind: 'event_chain_break', where: eventWhere(eventRow(rows, 4)), detail: `prev_event_digest is ${third.before}; the previous event's digest is ${third.digest}` },
      ]);

      rows = copy();
      const first = resealEvent(rows, 1, (e) => (e.prev_event_digest = D1));
      expect(verifyRows(rows).breaks[0]).toEqual({ kind: 'event_chain_break', where: eventWhere(first.row), detail: `prev_event_digest is ${D1}; the first event must have null` });

      rows = copy();
      rows.events = rows.events.filter((e) => !(e.branch_id === seeded.attempt.branch_id && e.position === 1n));
      expect(verifyRows(rows).breaks[0]!.detail).toBe('expected position 1, found 2');
    });

    it('what a head break on a stream says', () => {
      const [, , e3, e4] = seeded.attempt.event_ids;
      let rows = copy();
      for (const e of eventRows(rows)) Object.assign(e, { head_position: 3n, head_event_id: e3 });
      expect(verifyRows(rows).breaks[0]!.detail).toBe(`head does not name the last event: position: stored 3, document 4; event_id: stored ${e3}, document ${e4}`);

      rows = copy();
      for (const e of eventRows(rows)) e.head_event_id = e3!;
      expect(verifyRows(rows).breaks[0]!.detail).toBe(`head does not name the last event: event_id: stored ${e3}, document ${e4}`);

      rows = copy();
      rows.controlHeads.push({ project_id: 'rw-control:nowhere', branch_id: 'agent:ghost', position: 2n, event_id: 'evt_ghost', event_digest: D1, last_position: null });
      expect(verifyRows(rows).breaks[0]!.detail).toBe('head names position 2 (evt_ghost) but the stream has no stored event');
    });
  });

  it('streams with the same branch in two projects are two streams', async () => {
    const own = SqliteStore.open(join(dir, 'two-projects.db'), { create: true });
    try {
      for (const space of [freshSpace(), freshSpace()]) {
        for (const event_type of ['rw003.permission.evaluated', 'rw003.execution.started'] as const) {
          await own.control.appendControl({ event_type, control_scope_ref: attemptScope(space, 'att_same'), actor_ref: actor, payload: {} });
        }
      }
      const rows = await scanAll(own.audit);
      expect(new Set(rows.events.map((e) => e.branch_id))).toEqual(new Set(['attempt:att_same']));
      expect(verifyRows(rows)).toMatchObject({ break_count: 0, events_checked: 4, streams_checked: 2 });
    } finally {
      await own.close();
    }
  });

  it('keeps the first maxBreaks breaks and counts all of them', () => {
    const rows = copy();
    for (const r of rows.records) r.content_digest = `sha256:${'6'.repeat(64)}`;
    const report = verifyRows(rows, 2);
    expect(report.break_count).toBe(rows.records.length);
    expect(report.breaks).toHaveLength(2);
    expect(new AuditVerifier({ maxBreaks: 0 }).finish().breaks).toEqual([]);
  });

  it('reports are plain JSON', () => {
    const rows = copy();
    rows.events = rows.events.filter((e) => e.position !== 2n);
    const report = verifyRows(rows);
    expect(JSON.parse(JSON.stringify(report))).toEqual(report);
  });
});
