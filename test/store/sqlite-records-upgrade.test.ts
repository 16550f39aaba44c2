/**
 * SQLite migration 21 (src/store/core-sql.ts): records lose the UNIQUE index
 * on content_digest by a copy into a table without it, and record_heads with
 * them for its foreign key. A store schema 20 left, with revisions and heads in
 * it, must come out with every row, its sequence, its heads, its foreign key,
 * its immutability and its append view, and with no index on the digest.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalText } from '../../src/records/canonical.ts';
import { refOf, sealRecord, type Envelope } from '../../src/records/envelope.ts';
import { sequentialIds } from '../../src/records/ids.ts';
import { recordRowOf } from '../../src/records/put.ts';
import { manualClock } from '../../src/records/time.ts';
import { recordAt } from '../../src/store/record-at.ts';
import { RECORD_APPEND_COLS } from '../../src/store/sqlite/appends.ts';
import { fitsSql } from '../../src/store/tx/rows-sql.ts';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { expectCodeAsync } from '../helpers/errors.ts';
import { databaseAtSchema } from './support/older-schema.ts';

const LATEST = BigInt(MIGRATIONS[MIGRATIONS.length - 1]!.version);
const OPENER = fileURLToPath(new URL('./support/opener.ts', import.meta.url));
const actor = { object_id: 'actor_owner', revision_id: 'rev_1', content_digest: `sha256:${'a'.repeat(64)}` };
const deps = { ids: sequentialIds('up'), clock: manualClock('2026-12-01T10:00:00.000Z') };
const grant = (body: Record<string, unknown>, prior?: Envelope) =>
  sealRecord({ type: 'grant', body, issuedBy: actor, lifecycle: 'active', ...(prior ? { recordId: prior.record_id, prior: refOf(prior) } : {}) }, deps);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'baton-upgrade-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A database as a build at schema 20 left it, holding `records` appended through its record_appends view. */
function schema20(path: string, records: Envelope[]): void {
  const db = databaseAtSchema(path, 20);
  const append = db.prepare(`INSERT INTO record_appends(${RECORD_APPEND_COLS.join(', ')}) VALUES (${RECORD_APPEND_COLS.map(() => '?').join(', ')})`);
  db.transaction(() => {
    for (const r of records) {
      const row = recordRowOf(r, canonicalText(r), '2026-12-01T10:00:00.000Z');
      append.run(row.record_id, row.revision_id, row.content_digest, row.schema_ref, row.prior_revision, row.document, row.stored_at, r.prior_revision_ref?.content_digest ?? null);
    }
  })();
  expect(db.prepare("SELECT count(*) AS n FROM pragma_index_list('records') WHERE \"unique\" = 1").get(), 'schema 20: revision_id and content_digest unique').toEqual({ n: 2 });
  db.close();
}

const digestIndexes = (db: Database.Database) =>
  (db.prepare("SELECT name FROM pragma_index_list('records')").all() as Array<{ name: string }>).filter((i) =>
    (db.prepare('SELECT name FROM pragma_index_info(?)').all(i.name) as Array<{ name: string }>).some((c) => c.name === 'content_digest'),
  );

describe('SQLite migration 21: records without the content_digest index', () => {
  it('keeps every revision, its sequence and its head, and drops only the index', async () => {
    const path = join(dir, 'baton.db');
    const a1 = grant({ n: 1 });
    const a2 = grant({ n: 2 }, a1);
    const b1 = grant({ other: true });
    schema20(path, [a1, a2, b1]);
    const before = new Database(path).defaultSafeIntegers(true); // as the store reads them
    const rows = before.prepare('SELECT seq, revision_id, content_digest, document FROM records ORDER BY seq').all();
    const heads = before.prepare('SELECT record_id, revision_id FROM record_heads ORDER BY record_id').all();
    before.close();

    const store = SqliteStore.open(path);
    try {
      const db = store.handle;
      expect(db.prepare('SELECT max(version) AS v FROM schema_migrations').get()).toEqual({ v: LATEST });
      expect(db.prepare('SELECT seq, revision_id, content_digest, document FROM records ORDER BY seq').all()).toEqual(rows);
      expect(db.prepare('SELECT record_id, revision_id FROM record_heads ORDER BY record_id').all()).toEqual(heads);
      expect(digestIndexes(db)).toEqual([]);
      expect(db.prepare("SELECT count(*) AS n FROM pragma_index_list('records') WHERE \"unique\" = 1").get(), 'revision_id stays unique').toEqual({ n: 1n });
      expect(db.pragma('foreign_key_check')).toEqual([]);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.pragma('secure_delete', { simple: true }), 'off only while the copy ran').toBe(1n);
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name LIKE '%_next'").all(), 'no scratch table left').toEqual([]);

      // Reads by the exact ref, and the head, as before.
      expect(await store.getRecord(a1.record_id)).toStrictEqual(a2);
      expect(await recordAt(store, refOf(a1))).toStrictEqual(a1);
      expect(await recordAt(store, refOf(b1))).toStrictEqual(b1);
      // Appends go on through the rebuilt view: the head moves, a fork is refused.
      const a3 = grant({ n: 3 }, a2);
      expect(await store.putRecord(a3)).toBe('inserted');
      expect((await store.getRecord(a1.record_id))?.revision_id).toBe(a3.revision_id);
      await expectCodeAsync(store.putRecord(grant({ n: 4 }, a2)), 'invalid_request');
      // Still immutable, and a head must still name a stored revision.
      expect(() => db.prepare('UPDATE records SET document = ?').run('{}')).toThrow(/immutable/);
      expect(() => db.prepare('DELETE FROM records').run()).toThrow(/immutable/);
      expect(() => db.prepare("INSERT INTO record_heads(record_id, revision_id) VALUES ('grant_x', 'rev_none')").run()).toThrow(/FOREIGN KEY/);
    } finally {
      await store.close();
    }
  });

  it('several processes opening a schema-20 store at once: one migrates it, every one opens it', async () => {
    const path = join(dir, 'race.db');
    // Enough rows that the copy holds the write lock while the others have read the schema version and wait for it.
    schema20(path, Array.from({ length: 20_000 }, (_, i) => grant({ i, pad: 'x'.repeat(1_000) })));
    const openers = Array.from({ length: 3 }, () => spawn(process.execPath, ['--import', 'tsx', OPENER, path], { stdio: ['pipe', 'pipe', 'inherit'] }));
    const lines = openers.map((child) => createInterface({ input: child.stdout! })[Symbol.asyncIterator]());
    const next = async (i: number) => JSON.parse((await lines[i]!.next()).value as string) as Record<string, unknown>;
    expect(await Promise.all(openers.map((_, i) => next(i)))).toEqual(openers.map(() => ({ ready: true })));
    for (const child of openers) child.stdin!.write('go\n');
    expect(await Promise.all(openers.map((_, i) => next(i)))).toEqual(openers.map(() => ({ opened: Number(LATEST) })));
    const store = SqliteStore.open(path);
    try {
      expect(store.handle.prepare('SELECT count(*) AS n FROM records').get()).toEqual({ n: 20_000n });
      expect(store.handle.prepare('SELECT version FROM schema_migrations WHERE version = 21').all(), 'applied once').toHaveLength(1);
    } finally {
      await store.close();
    }
  }, 60_000);

  it('the append view\'s fit check reaches the prior revision by its id, not by a walk of records', async () => {
    const store = SqliteStore.open(join(dir, 'plans.db'), { create: true });
    try {
      const plan = store.handle.prepare(`EXPLAIN QUERY PLAN SELECT ${fitsSql({ record: '?', prior: '?', digest: '?' })}`).all('grant_1', 'rev_1', 'grant_1', 'rev_1', 'sha256:x') as Array<{ detail: string }>;
      expect(plan.map((p) => p.detail)).toContain('SEARCH r USING INDEX sqlite_autoindex_records_1 (revision_id=?)');
      expect(plan.filter((p) => /^SCAN (r|records)\b/.test(p.detail))).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('leaves an upgraded store with the schema a fresh one has', async () => {
    const upgraded = join(dir, 'upgraded.db');
    schema20(upgraded, [grant({ n: 1 })]);
    const fresh = join(dir, 'fresh.db');
    const schema = (path: string, create: boolean) => {
      const store = SqliteStore.open(path, { create });
      const sql = store.handle.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").all();
      return store.close().then(() => sql);
    };
    expect(await schema(upgraded, false)).toEqual(await schema(fresh, true));
  });
});
