import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { liveRootsAgreeWithTheRule, pruneForgetsExpiredRoots } from './support/live-roots.ts';

describe('sqlite: live roots', () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-live-roots-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('capacity counts over the live-root table agree with the rule over every ledger row', async () => {
    const store = SqliteStore.open(join(dir, 'ledger.db'), { create: true });
    try {
      await liveRootsAgreeWithTheRule(
        store,
        async (sql, values) => Number((store.handle.prepare(sql((name) => `@${name}`)).get(values) as { n: bigint }).n),
        60,
      );
    } finally {
      await store.close();
    }
  }, 120_000);

  it('opening a root forgets never-reserved roots that expired a margin before it', async () => {
    const store = SqliteStore.open(join(dir, 'prune.db'), { create: true });
    try {
      await pruneForgetsExpiredRoots(store, async (sql, values) => Number((store.handle.prepare(sql((name) => `@${name}`)).get(values) as { n: bigint }).n));
    } finally {
      await store.close();
    }
  });
});
