import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { refOf, sealRecord } from '../../src/records/envelope.ts';
import { sequentialIds } from '../../src/records/ids.ts';
import { manualClock } from '../../src/records/time.ts';
import { recordAt } from '../../src/store/record-at.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { expectCode, expectCodeAsync } from '../helpers/errors.ts';

const actor = { object_id: 'actor_owner', revision_id: 'rev_1', content_digest: `sha256:${'a'.repeat(64)}` };
const deps = { ids: sequentialIds('st'), clock: manualClock('2026-12-01T10:00:00.000Z') };
const grant = (body: Record<string, unknown>) => sealRecord({ type: 'grant', body, issuedBy: actor, lifecycle: 'active' }, deps);

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'baton-store-'));
  path = join(dir, 'baton.db');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('SQLite record store', () => {
  it('runs with WAL, synced by the group commit, and STRICT tables', async () => {
    const store = SqliteStore.open(path, { create: true });
    expect(store.handle.pragma('journal_mode', { simple: true })).toBe('wal');
    // FULL as opened (migrations); NORMAL once the group commit, which syncs the WAL after each COMMIT itself, took it over.
    expect(store.handle.pragma('synchronous', { simple: true })).toBe(1n);
    const ddl = store.handle.prepare("SELECT sql FROM sqlite_master WHERE name = 'records'").get() as { sql: string };
    expect(ddl.sql).toMatch(/STRICT/);
    await store.close();
  });

  it('stores, reads back and deduplicates records', async () => {
    const store = SqliteStore.open(path, { create: true });
    const rec = grant({ scope: ['read'] });
    expect(await store.putRecord(rec)).toBe('inserted');
    expect(await store.putRecord(structuredClone(rec))).toBe('exists');
    expect(await store.getRecord(rec.record_id)).toStrictEqual(rec);
    expect(await recordAt(store, refOf(rec))).toStrictEqual(rec);
    expect(await store.getRecord('grant_nope')).toBeUndefined();
    await store.close();
  });

  it('chains revisions through the head and refuses forks', async () => {
    const store = SqliteStore.open(path, { create: true });
    const r1 = grant({ n: 1 });
    await store.putRecord(r1);
    const r2 = sealRecord({ type: 'grant', body: { n: 2 }, issuedBy: actor, lifecycle: 'active', recordId: r1.record_id, prior: refOf(r1) }, deps);
    await store.putRecord(r2);
    const fork = sealRecord({ type: 'grant', body: { n: 3 }, issuedBy: actor, lifecycle: 'active', recordId: r1.record_id, prior: refOf(r1) }, deps);
    await expectCodeAsync(store.putRecord(fork), 'invalid_request');
    const orphan = sealRecord({ type: 'grant', body: { n: 9 }, issuedBy: actor, lifecycle: 'active', recordId: 'grant_ghost', prior: { ...refOf(r1), object_id: 'grant_ghost' } }, deps);
    await expectCodeAsync(store.putRecord(orphan), 'invalid_request');
    expect((await store.getRecord(r1.record_id))?.revision_id).toBe(r2.revision_id);
    expect((await store.getRecord(r1.record_id, r1.revision_id))?.body).toEqual({ n: 1 });
    expect((await store.listRevisions(r1.record_id)).map((r) => r.body)).toEqual([{ n: 1 }, { n: 2 }]);
    await store.close();
  });

  it('refuses a record whose digest does not match, and a reused revision id with other content', async () => {
    const store = SqliteStore.open(path, { create: true });
    const rec = grant({ scope: ['read'] });
    await expectCodeAsync(store.putRecord({ ...rec, body: { scope: ['write'] } }), 'invalid_request');
    await store.putRecord(rec);
    const clash = { ...grant({ other: true }), revision_id: rec.revision_id };
    const { computeContentDigest } = await import('../../src/records/envelope.ts');
    clash.content_digest = computeContentDigest(clash);
    await expectCodeAsync(store.putRecord(clash), 'invalid_request');
    await store.close();
  });

  it('is append-only even for raw SQL', async () => {
    const store = SqliteStore.open(path, { create: true });
    await store.putRecord(grant({}));
    expect(() => store.handle.prepare('UPDATE records SET document = ?').run('{}')).toThrow(/immutable/);
    expect(() => store.handle.prepare('DELETE FROM records').run()).toThrow(/immutable/);
    await store.close();
  });

  it('surfaces bit-rot in a stored record as storage_error on read', async () => {
    const store = SqliteStore.open(path, { create: true });
    const rec = grant({ amount: 10 });
    await store.putRecord(rec);
    store.handle.exec('DROP TRIGGER records_immutable_u');
    store.handle.prepare('UPDATE records SET document = replace(document, \'"amount":10\', \'"amount":99\')').run();
    await expectCodeAsync(store.getRecord(rec.record_id), 'storage_error');
    await store.close();
  });

  it('a corrupt file is storage_error, never an empty store', async () => {
    const store = SqliteStore.open(path, { create: true });
    for (let i = 0; i < 200; i++) await store.putRecord(grant({ i, pad: 'x'.repeat(500) }));
    await store.close();
    const bytes = readFileSync(path);
    bytes.fill(0x5a, 4096, 4096 * 6); // scribble over b-tree pages, keep the header
    writeFileSync(path, bytes);
    expectCode(() => SqliteStore.open(path), 'storage_error');
    writeFileSync(path, 'this is not a database at all, just text that is long enough to look like a header....');
    expectCode(() => SqliteStore.open(path), 'storage_error');
  });

  it('a missing file that was initialised before is storage_error, even with create', async () => {
    const store = SqliteStore.open(path, { create: true });
    await store.close();
    rmSync(path);
    rmSync(`${path}-wal`, { force: true });
    rmSync(`${path}-shm`, { force: true });
    expectCode(() => SqliteStore.open(path, { create: true }), 'storage_error');
  });

  it('without create, a fresh path is storage_error rather than a silently new database', () => {
    expectCode(() => SqliteStore.open(join(dir, 'never.db')), 'storage_error');
  });

  it('refuses a schema newer than this build', async () => {
    const store = SqliteStore.open(path, { create: true });
    await store.close();
    const raw = new Database(path);
    raw.prepare('INSERT INTO schema_migrations(version, applied_at) VALUES (999, ?)').run('x');
    raw.close();
    expectCode(() => SqliteStore.open(path), 'storage_error');
  });
});
