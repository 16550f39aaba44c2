/**
 * The WAL's fsync (src/store/sqlite/wal-sync.ts walSync): one descriptor
 * kept across syncs (issue #24: opening and closing the WAL for each commit
 * cost two more trips to libuv's pool), always the file the path names now,
 * and nothing left open once the store lets go.
 */
import { mkdtempSync, readdirSync, readlinkSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { walSync } from '../../src/store/sqlite/wal-sync.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-walsync-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** This process's open descriptors on `path` (Linux /proc). */
const opened = (path: string) =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false; // closed meanwhile (readdir's own descriptor)
    }
  });
const synced = (sync: (done: (err: Error | null) => void) => void) => new Promise<void>((resolve, reject) => sync((err) => (err ? reject(err) : resolve())));

describe.runIf(process.platform === 'linux')('walSync', () => {
  it('keeps one descriptor on the WAL across syncs, and closes it on close', async () => {
    const db = join(dir, 'kept.db');
    writeFileSync(`${db}-wal`, 'frames');
    const wal = walSync(db);
    expect(opened(`${db}-wal`)).toHaveLength(0); // opened on first use, not before
    for (let i = 0; i < 5; i++) await synced(wal.sync);
    wal.syncNow();
    await Promise.all([synced(wal.sync), synced(wal.sync)]);
    expect(opened(`${db}-wal`)).toHaveLength(1);
    wal.close();
    expect(opened(`${db}-wal`)).toHaveLength(0);
  });

  it('syncs the file the path names now: a replaced WAL is opened, and the old descriptor closed', async () => {
    const db = join(dir, 'replaced.db');
    writeFileSync(`${db}-wal`, 'old');
    const wal = walSync(db);
    await synced(wal.sync);
    renameSync(`${db}-wal`, `${db}-old`);
    writeFileSync(`${db}-wal`, 'new');
    // The old descriptor goes only once no sync is under way: one in flight is left to finish on it.
    await synced(wal.sync);
    expect(opened(`${db}-wal`)).toHaveLength(1);
    expect(opened(`${db}-old`)).toHaveLength(0);
    wal.close();
    expect(opened(`${db}-wal`)).toHaveLength(0);
  });

  it('a WAL that is not there fails the sync (the caller makes that storage_error)', async () => {
    const wal = walSync(join(dir, 'missing.db'));
    await expect(synced(wal.sync)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(() => wal.syncNow()).toThrow(/ENOENT/);
    wal.close();
  });
});
