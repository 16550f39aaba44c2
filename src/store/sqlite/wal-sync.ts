/**
 * The WAL's sync for the group commit (group-commit.ts): a batch commits
 * without SQLite's inline sync, and its callers are answered once this has
 * made the WAL file durable, off the event loop (libuv's pool).
 */
import { close, closeSync, fdatasync, fdatasyncSync, fstatSync, fsync, open, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/** Makes every committed batch durable; calls back once, with the error when it could not. */
export type WalSync = (done: (err: Error | null) => void) => void;

/** How a store makes committed batches durable, and lets go of what it holds for that when it closes. */
export interface WalSyncer {
  sync: WalSync;
  syncNow(): void;
  close(): void;
}

/**
 * fdatasyncs the WAL file (and once its directory, as SQLite does on its
 * first sync of a new file). The file stays open between syncs: opening and
 * closing it for each one cost two more trips to libuv's pool per commit,
 * each a wake-up of the event loop (issue #24: at c=1, open and close were
 * 1.7 % of the main thread). It is the file SQLite writes now: SQLite keeps
 * one WAL file while a connection is open (it deletes it only on the last
 * close), and should the path ever name another file — checked by inode, a
 * synchronous stat, before each sync — that one is opened instead.
 * fdatasync, not fsync: it flushes the data and the size that reads need, as
 * SQLite's own sync does where it has fdatasync, and PostgreSQL's WAL default.
 */
export function walSync(dbPath: string): WalSyncer {
  const wal = `${dbPath}-wal`;
  let dirSynced = false;
  let held: { fd: number; ino: number } | undefined;
  /** Descriptors given up while a sync may still use them: closed once none is under way. */
  const retired: number[] = [];
  let inFlight = 0;
  const settle = () => {
    if (inFlight === 0) for (const fd of retired.splice(0)) closeSync(fd);
  };
  /** The WAL's descriptor, reopened when the path names another file than the one held. */
  const current = (): number => {
    const ino = statSync(wal).ino;
    if (held?.ino === ino) return held.fd;
    if (held) retired.push(held.fd);
    const fd = openSync(wal, 'r');
    held = { fd, ino: fstatSync(fd).ino };
    settle();
    return fd;
  };
  const syncDir = (done: (err: Error | null) => void) =>
    open(dirname(wal), 'r', (err, fd) => {
      if (err) return done(err);
      fsync(fd, (syncErr) => close(fd, () => done(syncErr)));
    });
  return {
    sync: (done) => {
      let fd: number;
      try {
        fd = current();
      } catch (err) {
        return done(err as Error);
      }
      inFlight++;
      fdatasync(fd, (err) => {
        inFlight--;
        settle();
        if (err || dirSynced) return done(err);
        syncDir((dirErr) => {
          dirSynced = !dirErr;
          done(dirErr);
        });
      });
    },
    syncNow: () => fdatasyncSync(current()),
    close: () => {
      if (held) retired.push(held.fd);
      held = undefined;
      settle();
    },
  };
}
