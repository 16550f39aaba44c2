/**
 * `tsx bench/wal-frames.ts [c] [calls]`: which pages one delegated SendMessage
 * makes SQLite write, counted, not timed (issue #24). A c=1 call cost about
 * 1.5× the CPU of a c=32 one, and the difference is the store's write
 * transactions: each writes every page it dirtied to the WAL as a frame (two
 * pwrite64 calls: the 24-byte frame header, then the page), and a batch of
 * programs at c=32 shares its hot pages where a lone transaction at c=1 does
 * not. This reads the frames off the system calls instead of guessing them.
 *
 * Baton runs as the bench runs it (bench/lib/world.ts), is warmed past its
 * JIT warm-up, then `strace` follows it for `calls` calls at concurrency `c`
 * (defaults 1 and 40). Each frame header's page number (its first four bytes,
 * big-endian; SQLite's WAL format) is mapped to its B-tree and page type with
 * SQLite's dbstat table over a copy of the database taken at the end. Prints
 * one JSON object: frames per call and per commit, and frames per call by
 * B-tree. Needs `strace` (Debian package); a development tool, not part of
 * `npm run bench`.
 */
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { round } from './lib/stats.ts';
import { requireStrace, tracedCalls } from './lib/traced.ts';

const c = Number(process.argv[2] ?? 1);
const calls = Number(process.argv[3] ?? 40);
requireStrace('wal-frames');

// -xx -s 8: each write's first 8 bytes, every one in hex (-x would print a printable byte as itself), enough for a frame header's page number and commit size.
await tracedCalls('walframes', ['-f', '-xx', '-s', '8', '-e', 'trace=pwrite64'], c, calls, ({ trace, work, baton, requests, errors }) => {
  // A copy of the database and its WAL as they stand: dbstat over it names each page's B-tree.
  const copy = join(work, 'copy.db');
  cpSync(join(baton.dir, 'baton.db'), copy);
  if (existsSync(join(baton.dir, 'baton.db-wal'))) cpSync(join(baton.dir, 'baton.db-wal'), `${copy}-wal`);
  const db = new Database(copy, { readonly: true });
  const pages = new Map<number, string>();
  for (const p of db.prepare('SELECT pageno, name, pagetype FROM dbstat').all() as Array<{ pageno: number; name: string; pagetype: string }>) pages.set(p.pageno, `${p.name} ${p.pagetype}`);
  db.close();

  let frames = 0;
  let commits = 0;
  const byTree = new Map<string, number>();
  // A frame header is the only 24-byte write SQLite makes (pages are page-sized, the WAL header 32 bytes).
  const header = /pwrite64\(\d+, "((?:\\x[0-9a-f]{2}){8})"\.\.\., 24, /;
  for (const line of readFileSync(trace, 'utf8').split('\n')) {
    const m = header.exec(line);
    if (!m) continue;
    const bytes = [...m[1]!.matchAll(/\\x([0-9a-f]{2})/g)].map((x) => parseInt(x[1]!, 16));
    const page = ((bytes[0]! << 24) >>> 0) + (bytes[1]! << 16) + (bytes[2]! << 8) + bytes[3]!;
    // A commit frame carries the database size in pages after the commit; other frames carry 0.
    if (bytes.slice(4).some((b) => b !== 0)) commits++;
    frames++;
    const tree = pages.get(page) ?? '(page freed or not in the copy)';
    byTree.set(tree, (byTree.get(tree) ?? 0) + 1);
  }
  const per = (n: number) => round(n / Math.max(1, requests), 2);
  process.stdout.write(
    `${JSON.stringify(
      {
        c,
        calls: requests,
        errors,
        framesPerCall: per(frames),
        commitsPerCall: per(commits),
        framesPerCommit: round(frames / Math.max(1, commits), 1),
        byTree: Object.fromEntries([...byTree].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, per(v)])),
      },
      null,
      1,
    )}\n`,
  );
});
process.exit(0);
