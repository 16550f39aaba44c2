/**
 * A retention purge leaves no readable copy of what it purged in the SQLite
 * files (issue 25 item 16): secure_delete zeroes the freed cells, and the
 * purge checkpoints and truncates the WAL, so neither the database file nor
 * its -wal file holds the message text or a delivered push body afterwards.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { taskInput } from '../../src/gateway/task-input.ts';
import { randomIds } from '../../src/records/ids.ts';
import { systemClock } from '../../src/records/time.ts';
import { purgeContent } from '../../src/retention/purge.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { actor } from '../store/support/fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-scrub-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Which of `markers` SQLite keeps on disk: in the database file or its WAL (never the bytes themselves, to keep failures readable). */
const onDisk = (path: string, ...markers: string[]) => {
  const bytes = Buffer.concat([readFileSync(path), existsSync(`${path}-wal`) ? readFileSync(`${path}-wal`) : Buffer.alloc(0)]);
  return markers.filter((m) => bytes.includes(m, 0, 'latin1'));
};

describe('sqlite: retention purge scrubs the files', () => {
  it('the message text and the delivered body are in neither the database file nor the WAL after a purge', async () => {
    const path = join(dir, 'scrub.db');
    const store = SqliteStore.open(path, { create: true });
    const MESSAGE = 'MSG-MARKER-7f3a9c-please-forget-me';
    const ARTIFACT = 'ARTIFACT-MARKER-51d2e8-also-forget';
    const PENDING = 'PENDING-MARKER-0b6c44-still-to-send';
    try {
      const deps = { ids: randomIds, clock: systemClock, gatewayActor: actor };
      await store.putRecord(taskInput('att_scrub', { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: `${MESSAGE} `.repeat(40) }] }, deps));
      const row = (id: string, body: string) => ({
        delivery_id: id, task_id: 'att_scrub', config_id: 'cfg', revision_id: 'rev', body, status: 'pending' as const, attempts: 0,
        next_at: '2026-01-01T00:00:00.000Z', lease_until: null, lease_owner: null, last_error: null, created_at: '2026-01-01T00:00:00.000Z', delivered_at: null, gateway_id: null,
      });
      await store.push.enqueue([row('dlv_done', JSON.stringify({ artifacts: [{ text: `${ARTIFACT} `.repeat(400) }] })), row('dlv_wait', JSON.stringify({ text: PENDING }))]);
      const [done] = await store.push.claim('node_a', '2026-01-01T00:00:01.000Z', '2026-01-01T00:01:00.000Z', 1, 'actor_baton_test');
      expect(done?.delivery_id).toBe('dlv_done');
      await store.push.finish('dlv_done', 'node_a', { status: 'delivered', at: '2026-01-01T00:00:02.000Z' });
      // Meaningful only if the bytes were on disk to begin with.
      expect(onDisk(path, MESSAGE, ARTIFACT, PENDING)).toEqual([MESSAGE, ARTIFACT, PENDING]);

      const r = await purgeContent({ store, clock: systemClock, ids: randomIds }, new Date(), actor, 'operator');
      expect(r).toMatchObject({ purged: 1, purged_deliveries: 1, reclaimed: true });
      // A pending delivery keeps its bytes: it is still to be sent identically.
      expect(onDisk(path, MESSAGE, ARTIFACT, PENDING)).toEqual([PENDING]);
      expect((await store.push.delivery('dlv_wait'))?.body).toBe(JSON.stringify({ text: PENDING }));
    } finally {
      await store.close();
    }
  });

  it("another connection's open read keeps the WAL: the purge says reclaimed: false, and the next purge truncates it", async () => {
    const path = join(dir, 'reader.db');
    const store = SqliteStore.open(path, { create: true });
    const reader = new Database(path, { readonly: true });
    const MESSAGE = 'MSG-MARKER-c41d07-held-by-a-reader';
    try {
      const deps = { ids: randomIds, clock: systemClock, gatewayActor: actor };
      await store.putRecord(taskInput('att_reader', { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: MESSAGE }] }, deps));
      reader.exec('BEGIN');
      expect(reader.prepare('SELECT count(*) AS n FROM content').get()).toEqual({ n: 1 }); // a snapshot with the message in it
      const held = await purgeContent({ store, clock: systemClock, ids: randomIds }, new Date(), actor, 'operator');
      expect(held).toMatchObject({ purged: 1, reclaimed: false });
      expect(onDisk(path, MESSAGE)).toEqual([MESSAGE]);
      reader.exec('COMMIT');
      const next = await purgeContent({ store, clock: systemClock, ids: randomIds }, new Date(), actor, 'operator');
      expect(next).toMatchObject({ purged: 0, reclaimed: true });
      expect(onDisk(path, MESSAGE)).toEqual([]);
    } finally {
      reader.close();
      await store.close();
    }
  });
});
