/**
 * `baton audit verify` over content stored apart from the records (src/audit/content.ts, issue #17): a real
 * SQLite store holds task inputs, task views and an approval request's message and rendering, one of them
 * purged by a recorded retention purge; the content table is then tampered with as someone with the file
 * could, and the audit must name exactly what was done.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ContentAudit } from '../../src/audit/content.ts';
import type { AuditBreak, AuditReport } from '../../src/audit/report.ts';
import { auditStore } from '../../src/audit/scan.ts';
import { taskInput } from '../../src/gateway/task-input.ts';
import { canonicalText } from '../../src/records/canonical.ts';
import { detachedOf, ride, type DetachedContent } from '../../src/records/detached.ts';
import { digestOf } from '../../src/records/digest.ts';
import { sealRecord } from '../../src/records/envelope.ts';
import { randomIds } from '../../src/records/ids.ts';
import { schemaRefFor } from '../../src/records/schema-ref.ts';
import { systemClock } from '../../src/records/time.ts';
import { purgeContent } from '../../src/retention/purge.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { actor } from '../store/support/fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-audit-content-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const deps = { ids: randomIds, clock: systemClock, gatewayActor: actor };
/** Stored before the purge's cut-off (set on the row: the store stamps content with the time it is written). */
const OLD = '2026-01-01T00:00:00.000Z';
const CUTOFF = '2026-06-01T00:00:00.000Z';

interface Fixture {
  store: SqliteStore;
  /** A task input whose message was purged by `purge`. */
  old: { record_id: string; digest: string };
  /** A task input whose message (over 64 KiB) is still held. */
  input: { record_id: string; digest: string };
  /** An attempt revision naming its task view. */
  attempt: { record_id: string; digest: string };
  /** An approval request naming its message (params) and rendering. */
  approval: { record_id: string; params: string; rendering: string };
  purge: string;
  /** Runs SQL on the file directly. */
  sql(text: string, ...args: unknown[]): void;
  audit(): Promise<AuditReport>;
}

async function fixture(): Promise<Fixture> {
  const store = SqliteStore.open(join(dir, `${randomIds.next('db')}.db`), { create: true });
  const sql = (text: string, ...args: unknown[]) => void store.handle.prepare(text).run(...args);
  const digestOfInput = (r: object) => (r as { body: { message_digest: string } }).body.message_digest;

  const old = taskInput('att_old', { messageId: 'm0', role: 'ROLE_USER', parts: [{ text: 'an old message' }] }, deps);
  await store.putRecord(old);
  sql('UPDATE content SET stored_at = ? WHERE digest = ?', OLD, digestOfInput(old));
  const purged = await purgeContent({ store, clock: systemClock, ids: randomIds }, new Date(CUTOFF), actor, 'operator');
  expect(purged.purged).toBe(1);

  // Over the default 64 KiB bound of a strict parse: stored content is bounded like a stored document (64 MiB).
  const input = taskInput('att_1', { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'x'.repeat(70_000) }] }, deps);
  await store.putRecord(input);

  const view: DetachedContent = detachedOf('task_view', { id: 'task_1', status: { state: 'TASK_STATE_WORKING' } });
  const attempt = ride(sealRecord({ type: 'execution_attempt', issuedBy: actor, lifecycle: 'active', body: { attempt_id: 'att_1', state: 'open', view_digest: view.digest } }, deps), [view]);
  await store.putRecord(attempt);
  // An attempt with no task view yet names no content.
  await store.putRecord(sealRecord({ type: 'execution_attempt', issuedBy: actor, lifecycle: 'active', body: { attempt_id: 'att_2', state: 'open' } }, deps));

  const params = detachedOf('task_input', { message: { messageId: 'm2', role: 'ROLE_USER', parts: [{ text: 'pay 42' }] } });
  const rendering = detachedOf('task_input', '[0] text: "pay 42"');
  const approval = ride(
    sealRecord({ type: 'approval_request', issuedBy: actor, lifecycle: 'active', body: { task_id: 'task_2', content: 'apart', params_digest: params.digest, rendering_digest: rendering.digest } }, deps),
    [params, rendering],
  );
  await store.putRecord(approval);

  return {
    store,
    old: { record_id: old.record_id, digest: digestOfInput(old) },
    input: { record_id: input.record_id, digest: digestOfInput(input) },
    attempt: { record_id: attempt.record_id, digest: view.digest },
    approval: { record_id: approval.record_id, params: params.digest, rendering: rendering.digest },
    purge: purged.purge_id,
    sql,
    audit: () => auditStore(store.audit, { pageSize: 2 }, store.content),
  };
}

/** Runs `fn` against a fresh fixture, closing its store after. */
const withFixture = (fn: (f: Fixture) => Promise<void>) => async () => {
  const f = await fixture();
  try {
    await fn(f);
  } finally {
    await f.store.close();
  }
};

const byWhere = (breaks: AuditBreak[]) => [...breaks].sort((a, b) => (a.where.record_id ?? '').localeCompare(b.where.record_id ?? ''));

describe('audit: content stored apart, in a real store', () => {
  it(
    'finds nothing in what the store and a retention purge wrote, and counts the content checked and purged',
    withFixture(async (f) => {
      const report = await f.audit();
      expect(report.breaks).toEqual([]);
      expect(report).toMatchObject({ break_count: 0, content_checked: 5, content_purged: 1 });
      // Without the content store, the records alone are audited.
      expect(await auditStore(f.store.audit)).not.toHaveProperty('content_checked');
    }),
  );

  it(
    'a content row gone from the table is content_missing on the record that names it',
    withFixture(async (f) => {
      for (const d of [f.input.digest, f.attempt.digest, f.approval.rendering]) f.sql('DELETE FROM content WHERE digest = ?', d);
      const report = await f.audit();
      expect(byWhere(report.breaks)).toEqual(
        byWhere([
          { kind: 'content_missing', where: { record_id: f.input.record_id }, detail: `names content ${f.input.digest}, which is not in the content store` },
          { kind: 'content_missing', where: { record_id: f.attempt.record_id }, detail: `names content ${f.attempt.digest}, which is not in the content store` },
          { kind: 'content_missing', where: { record_id: f.approval.record_id }, detail: `names content ${f.approval.rendering}, which is not in the content store` },
        ]),
      );
      expect(report).toMatchObject({ break_count: 3, content_checked: 2, content_purged: 1 });
    }),
  );

  it(
    'content rewritten in place is content_tampered, naming what it now hashes to',
    withFixture(async (f) => {
      const forged = canonicalText({ messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'pay 4200' }] });
      f.sql('UPDATE content SET document = ? WHERE digest = ?', forged, f.input.digest);
      f.sql('UPDATE content SET document = ? WHERE digest = ?', '{"id":', f.attempt.digest);
      const report = await f.audit();
      expect(byWhere(report.breaks)).toEqual(
        byWhere([
          { kind: 'content_tampered', where: { record_id: f.input.digest }, detail: `content does not hash to its digest (recomputed ${digestOf(JSON.parse(forged))})` },
          { kind: 'content_tampered', where: { record_id: f.attempt.digest }, detail: 'content does not hash to its digest (recomputed (unreadable))' },
        ]),
      );
      expect(report).toMatchObject({ break_count: 2, content_checked: 5, content_purged: 1 });
    }),
  );

  it(
    'content made to look purged, by no purge record or by one whose cut-off does not cover it, is content_purge_unaccounted',
    withFixture(async (f) => {
      const at = '2026-12-01T00:00:00.000Z';
      // Named by no purge at all: a record id that is no retention purge.
      f.sql('UPDATE content SET document = NULL, purged_at = ?, purge_ref = ? WHERE digest = ?', at, 'rp_forged', f.input.digest);
      // Named by the real purge, but stored after its cut-off, or exactly at it (the purge takes stored_at < before).
      f.sql('UPDATE content SET document = NULL, purged_at = ?, purge_ref = ?, stored_at = ? WHERE digest = ?', at, f.purge, '2026-07-01T00:00:00.000Z', f.attempt.digest);
      f.sql('UPDATE content SET document = NULL, purged_at = ?, purge_ref = ?, stored_at = ? WHERE digest = ?', at, f.purge, CUTOFF, f.approval.params);
      const report = await f.audit();
      expect(byWhere(report.breaks)).toEqual(
        byWhere([
          { kind: 'content_purge_unaccounted', where: { record_id: f.input.digest }, detail: 'content is gone but no retention purge record accounts for it (purge_ref rp_forged)' },
          {
            kind: 'content_purge_unaccounted',
            where: { record_id: f.attempt.digest },
            detail: `purged by ${f.purge} whose cut-off ${CUTOFF} is not after it was stored (2026-07-01T00:00:00.000Z)`,
          },
          { kind: 'content_purge_unaccounted', where: { record_id: f.approval.params }, detail: `purged by ${f.purge} whose cut-off ${CUTOFF} is not after it was stored (${CUTOFF})` },
        ]),
      );
      expect(report).toMatchObject({ break_count: 3, content_checked: 5, content_purged: 1 });
    }),
  );

  it(
    "a row written past the table's CHECKs (no document, yet no purge noted) is content_purge_unaccounted",
    withFixture(async (f) => {
      f.sql('PRAGMA ignore_check_constraints = ON');
      f.sql('UPDATE content SET document = NULL WHERE digest = ?', f.input.digest);
      // A real purge named, but no purge time: not what a purge writes.
      f.sql('UPDATE content SET document = NULL, purge_ref = ? WHERE digest = ?', f.purge, f.attempt.digest);
      f.sql('PRAGMA ignore_check_constraints = OFF');
      const report = await f.audit();
      expect(byWhere(report.breaks)).toEqual(
        byWhere([
          { kind: 'content_purge_unaccounted', where: { record_id: f.input.digest }, detail: 'content is gone but no retention purge record accounts for it (purge_ref none)' },
          { kind: 'content_purge_unaccounted', where: { record_id: f.attempt.digest }, detail: `content is gone but no retention purge record accounts for it (purge_ref ${f.purge})` },
        ]),
      );
    }),
  );

  it(
    'a record whose document no longer parses is the record audit\'s break; the content audit goes on',
    withFixture(async (f) => {
      f.sql('DROP TRIGGER records_immutable_u');
      f.sql('UPDATE records SET document = ? WHERE record_id = ?', '{"body":', f.approval.record_id);
      const report = await f.audit();
      expect(report.breaks.map((b) => [b.kind, b.where.record_id])).toEqual([['record_unparseable', f.approval.record_id]]);
      expect(report).toMatchObject({ content_checked: 5, content_purged: 1 });
    }),
  );
});

describe('audit: which records name content', () => {
  const rec = (type: Parameters<typeof schemaRefFor>[0], body: Record<string, unknown>, record_id = `${type}_1`) => ({ record_id, schema_ref: schemaRefFor(type), document: JSON.stringify({ body }) });
  const D = (c: string) => `sha256:${c.repeat(64)}`;
  /** The digests the records name, as the audit reports them missing when the content table is empty. */
  const named = (rows: ReturnType<typeof rec>[]) => {
    const breaks: AuditBreak[] = [];
    const a = new ContentAudit((b) => breaks.push(b));
    rows.forEach((r) => a.record(r));
    expect(a.finish()).toEqual({ content_checked: 0, content_purged: 0 });
    return breaks.map((b) => {
      expect(b.kind).toBe('content_missing');
      return [b.where.record_id, /^names content (\S+), which is not in the content store$/.exec(b.detail)?.[1]];
    });
  };

  it('only content a record keeps apart, by the field its type names it with', () => {
    expect(
      named([
        rec('task_input', { content: 'apart', message_digest: D('1'), view_digest: D('9'), params_digest: D('9'), rendering_digest: D('9') }),
        rec('execution_attempt', { view_digest: D('2'), message_digest: D('9'), content: 'apart', params_digest: D('9') }),
        rec('approval_request', { content: 'apart', params_digest: D('3'), rendering_digest: D('4'), message_digest: D('9'), view_digest: D('9') }),
      ]),
    ).toEqual([
      ['task_input_1', D('1')],
      ['execution_attempt_1', D('2')],
      ['approval_request_1', D('3')],
      ['approval_request_1', D('4')],
    ]);
  });

  it('names nothing: inline content, a digest that is not a string, another record type', () => {
    expect(
      named([
        // Older records kept the message inline, with its digest.
        rec('task_input', { message: { parts: [] }, message_digest: D('1') }),
        rec('task_input', { content: 'apart', message_digest: null }, 'task_input_2'),
        rec('approval_request', { params: {}, params_digest: D('3'), rendering_digest: D('4') }),
        rec('grant', { content: 'apart', message_digest: D('5'), view_digest: D('6'), params_digest: D('7') }),
        rec('retention_purge', { before: CUTOFF, content: 'apart', message_digest: D('8') }),
      ]),
    ).toEqual([]);
    expect(named([rec('approval_request', { content: 'apart', rendering_digest: D('4') })])).toEqual([['approval_request_1', D('4')]]);
  });

  it('only a retention_purge record accounts for purged content, by the cut-off its revisions state', () => {
    const purgedRow = (ref: string) => ({ digest: D('1'), document: null, stored_at: OLD, purged_at: '2026-12-01T00:00:00.000Z', purge_ref: ref });
    const run = (rows: ReturnType<typeof rec>[], ref: string) => {
      const breaks: AuditBreak[] = [];
      const a = new ContentAudit((b) => breaks.push(b));
      rows.forEach((r) => a.record(r));
      a.content(purgedRow(ref));
      return { counts: a.finish(), kinds: breaks.map((b) => b.kind) };
    };
    // A later revision (the count, after the purge) that no longer states the cut-off keeps the first one's.
    expect(run([rec('retention_purge', { before: CUTOFF }, 'rp_1'), rec('retention_purge', { purged: 1 }, 'rp_1')], 'rp_1')).toEqual({ counts: { content_checked: 1, content_purged: 1 }, kinds: [] });
    // Any other record with a `before` is no purge.
    expect(run([rec('task_input', { before: CUTOFF }, 'ti_1')], 'ti_1')).toEqual({ counts: { content_checked: 1, content_purged: 0 }, kinds: ['content_purge_unaccounted'] });
  });
});
