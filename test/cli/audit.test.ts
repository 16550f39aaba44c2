import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { AuditReport } from '../../src/audit/verify.ts';
import { randomIds } from '../../src/records/ids.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { scanAll, scansHeadState, seed } from '../audit/support/seed.ts';
import { baton } from './run.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-cli-audit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A SQLite file with real records and events, written and closed by this process. */
async function seeded() {
  const path = join(dir, `${randomIds.next('db')}.db`);
  const store = SqliteStore.open(path, { create: true });
  const s = await seed(store);
  await store.close();
  return { path, env: { BATON_SQLITE_PATH: path, BATON_LOG_LEVEL: 'silent' }, ...s };
}

/** Tampers the file directly, as anyone with access to it could: the immutability triggers are just more SQL. */
function tamper(path: string, sql: string, ...params: unknown[]) {
  const db = new Database(path);
  try {
    for (const t of ['records_immutable_u', 'records_immutable_d', 'control_immutable_u', 'control_immutable_d']) db.exec(`DROP TRIGGER IF EXISTS ${t}`);
    expect(db.prepare(sql).run(...params).changes).toBe(1);
  } finally {
    db.close();
  }
}

describe('baton audit verify', () => {
  it('exits 0 on what the store wrote, and 1 naming the record after one byte of it changed', async () => {
    const s = await seeded();
    const clean = await baton(['audit', 'verify'], s.env);
    expect(clean.stderr).toBe('');
    expect(clean.code).toBe(0);
    expect(clean.stdout).toMatch(/^records \d+ \(heads \d+\) {2}events \d+ in \d+ streams \(heads \d+\) {2}content \d+ \(\d+ purged by retention\)$/m);
    expect(clean.stdout.trim().endsWith('audit: clean')).toBe(true);

    const target = s.revisions[1]!;
    tamper(s.path, `UPDATE records SET document = replace(document, '"n":2', '"n":3') WHERE revision_id = ?`, target.revision_id);
    const broken = await baton(['audit', 'verify'], s.env);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain(`BREAK record_digest_mismatch  record ${target.record_id} revision ${target.revision_id}`);
    expect(broken.stdout.trim().endsWith('audit: 1 break')).toBe(true);

    const json = await baton(['audit', 'verify', '--json'], s.env);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as AuditReport;
    expect(report.break_count).toBe(1);
    expect(report.breaks[0]).toMatchObject({ kind: 'record_digest_mismatch', where: { record_id: target.record_id, revision_id: target.revision_id } });
  });

  it('exits 1 naming the event whose document changed', async () => {
    const s = await seeded();
    const id = s.attempt.event_ids[2]!;
    tamper(s.path, `UPDATE control_events SET document = replace(document, '"step":3', '"step":4') WHERE event_id = ?`, id);
    const r = await baton(['audit', 'verify'], s.env);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`BREAK event_digest_mismatch  stream ${s.attempt.project_id} ${s.attempt.branch_id} position 3 event ${id}`);
  });

  it('exits 1 on a deleted middle event, naming the gap', async () => {
    const s = await seeded();
    tamper(s.path, 'DELETE FROM control_events WHERE project_id = ? AND branch_id = ? AND position = 2', s.attempt.project_id, s.attempt.branch_id);
    const r = await baton(['audit', 'verify', '--json'], s.env);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as AuditReport;
    expect(report.breaks).toEqual([
      {
        kind: 'event_position_gap',
        where: { project_id: s.attempt.project_id, branch_id: s.attempt.branch_id, position: '3', event_id: s.attempt.event_ids[2] },
        detail: `expected position 2, found 3 after ${s.attempt.event_ids[0]}`,
      },
    ]);
  });

  it('exits 1 naming the stream whose head state was flipped from revoked to active', async () => {
    const s = await seeded();
    const store = SqliteStore.open(s.path);
    try {
      // The check below needs the scan to carry control_heads.state (src/store/audit-sql.ts scanEvents): a scan that
      // drops it would let a flipped head state pass unseen, so its absence fails here rather than skipping.
      expect(scansHeadState(await scanAll(store.audit)), 'AuditEventRow carries control_heads.state').toBe(true);
    } finally {
      await store.close();
    }
    const { project_id, branch_id } = s.authority.revoked;
    tamper(s.path, "UPDATE control_heads SET state = 'active' WHERE project_id = ? AND branch_id = ?", project_id, branch_id);
    const r = await baton(['audit', 'verify'], s.env);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`BREAK head_state_mismatch  stream ${project_id} ${branch_id}: state: stored active, recomputed revoked`);
    expect(r.stdout.trim().endsWith('audit: 1 break')).toBe(true);
  });

  it('exits 2 when there is no store to audit', async () => {
    const r = await baton(['audit', 'verify'], { BATON_SQLITE_PATH: join(dir, 'never.db') });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('storage_error');
  });
});
