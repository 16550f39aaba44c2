/**
 * `tsx bench/syscalls.ts [c] [calls]`: the system calls one delegated
 * SendMessage makes Baton issue, counted per call on the request thread and
 * on all other threads (issue #24). Counts, not times: they hold from run to
 * run where this machine's CPU time per call moves by 30-40 % within an hour,
 * and on a VM whose system calls cost microseconds each they explain a share
 * of the request thread that no JavaScript profile shows (a `--cpu-prof`
 * profile charges them to the JS function that made the call, e.g. the
 * COMMIT's WAL writes to the group commit's `transaction`).
 *
 * Baton runs as the bench runs it (bench/lib/world.ts), is warmed past its
 * JIT warm-up, then `strace -f` follows it for `calls` calls at concurrency
 * `c` (defaults 1 and 100). Beside the counts it times, in this process, two
 * shapes on the filesystem Baton's database is on: a WAL frame as SQLite
 * writes one (two pwrite64 calls: the 24-byte frame header, then a 4 KiB
 * page) and a bare system call (fstat), so a count can be read as time on
 * this machine. Prints one JSON object. Needs `strace` (Debian package); a
 * development tool, not part of `npm run bench`.
 */
import { closeSync, fstatSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { round } from './lib/stats.ts';
import { requireStrace, tracedCalls } from './lib/traced.ts';

const c = Number(process.argv[2] ?? 1);
const calls = Number(process.argv[3] ?? 100);
requireStrace('syscalls');

/** Microseconds per WAL-frame-shaped write pair and per bare system call, in `dir`. */
function calibrate(dir: string): { frameWriteUs: number; bareSyscallUs: number } {
  const fd = openSync(join(dir, 'calibrate.bin'), 'w');
  const header = Buffer.alloc(24, 1);
  const page = Buffer.alloc(4096, 2);
  const frames = 4_000;
  // Written twice over the same 16 MiB: the second pass overwrites, as SQLite does once the WAL starts over.
  const pass = () => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < frames; i++) {
      writeSync(fd, header, 0, header.length, i * 4_120);
      writeSync(fd, page, 0, page.length, i * 4_120 + 24);
    }
    return Number(process.hrtime.bigint() - t0) / 1_000 / frames;
  };
  pass();
  const frameWriteUs = pass();
  const n = 20_000;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fstatSync(fd);
  const bareSyscallUs = Number(process.hrtime.bigint() - t0) / 1_000 / n;
  closeSync(fd);
  return { frameWriteUs: round(frameWriteUs, 2), bareSyscallUs: round(bareSyscallUs, 2) };
}

// -f follows every thread; with -o each line of the trace starts with the thread id.
await tracedCalls('syscalls', ['-f'], c, calls, ({ trace, baton, requests, errors }) => {
  const main = new Map<string, number>();
  const others = new Map<string, number>();
  // A call interrupted by another thread's line is printed as "<unfinished ...>", then "<... name resumed>": counted once, at its start.
  const start = /^(\d+)\s+([a-z0-9_]+)\(/;
  for (const line of readFileSync(trace, 'utf8').split('\n')) {
    const m = start.exec(line);
    if (!m) continue;
    const into = Number(m[1]) === baton.pid ? main : others;
    into.set(m[2]!, (into.get(m[2]!) ?? 0) + 1);
  }
  const per = (n: number) => round(n / Math.max(1, requests), 2);
  const table = (m: Map<string, number>) => Object.fromEntries([...m].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, per(v)]));
  const total = (m: Map<string, number>) => per([...m.values()].reduce((a, b) => a + b, 0));
  const result = {
    c,
    calls: requests,
    errors,
    requestThread: { total: total(main), bySyscall: table(main) },
    otherThreads: { total: total(others), bySyscall: table(others) },
    calibration: calibrate(baton.dir),
  };
  process.stdout.write(`${JSON.stringify(result, null, 1)}\n`);
});
process.exit(0);
