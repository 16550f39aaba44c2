import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PgStore } from '../../src/store/postgres/store.ts';
import type { Store } from '../../src/store/port.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { admission, chain, freshSpace, publishAgent } from '../store/support/fixtures.ts';
import { freshSchema, PG_URL } from '../store/support/pg.ts';
import { baton } from './run.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function seed(store: Store) {
  const space = freshSpace();
  await publishAgent(store, space);
  const c = await chain(store, space, { root: 10n, child: 5n, leaf: 3n });
  await store.ledger.admit(await admission(store, space, [c.root, c.child, c.leaf], c.leaf, { units: 2n }));
  await store.close();
  return { space, ...c };
}

async function expectCliSees(env: Record<string, string>, s: Awaited<ReturnType<typeof seed>>) {
  const show = await baton(['ledger', 'show', s.root], env);
  expect(show.stderr).toBe('');
  expect(show.code).toBe(0);
  expect(show.stdout).toContain(s.root);
  expect(show.stdout).toContain(`└─ ${s.child}`);
  expect(show.stdout).toMatch(/units\s+ceiling 10 +consumed 0 +reserved 2 +available 8/);
  expect(show.stdout).toMatch(/units\s+ceiling 3 +consumed 0 +reserved 2 +available 1/);
  const tail = await baton(['control', 'tail', `${s.space}/delegation:${s.child}`], env);
  expect(tail.code).toBe(0);
  expect(tail.stdout).toMatch(/head 1 {2}state active/);
  expect(tail.stdout).toContain('rw003.delegation.issued');
  const json = await baton(['ledger', 'show', s.root, '--json'], env);
  expect(JSON.parse(json.stdout).children[0].node_id).toBe(s.child);
}

describe('baton ledger / control commands', () => {
  it('show the tree and a stream from a SQLite file written by another process', async () => {
    const path = join(dir, 'cli.db');
    const s = await seed(SqliteStore.open(path, { create: true }));
    await expectCliSees({ BATON_SQLITE_PATH: path, BATON_LOG_LEVEL: 'silent' }, s);
  });

  it('refuse unknown roots and malformed stream names with a clear error', async () => {
    const path = join(dir, 'cli2.db');
    await seed(SqliteStore.open(path, { create: true }));
    const missing = await baton(['ledger', 'show', 'dlg_nope'], { BATON_SQLITE_PATH: path });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('invalid_request');
    const bad = await baton(['control', 'tail', 'nonsense'], { BATON_SQLITE_PATH: path });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('SPACE/KIND:ID');
    const none = await baton(['ledger', 'show', 'x'], { BATON_SQLITE_PATH: join(dir, 'never.db') });
    expect(none.stderr).toContain('storage_error');
  });

  it.skipIf(!PG_URL)('a second process on the same PostgreSQL sees the same budgets and fences', async () => {
    const db = await freshSchema();
    try {
      const s = await seed(await PgStore.open(db.url));
      await expectCliSees({ BATON_PG_URL: db.url, BATON_LOG_LEVEL: 'silent' }, s);
    } finally {
      await db.drop();
    }
  });
});
