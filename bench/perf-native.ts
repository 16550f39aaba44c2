/**
 * `tsx bench/perf-native.ts [c] [seconds]`: where Baton's request thread
 * spends its time below JavaScript, by Linux perf (issue #24). V8's profile
 * (bench/profile-main.ts) charges SQLite's C code, the kernel's system calls
 * and libc to whichever JavaScript function called into them; perf samples
 * the thread itself and names better_sqlite3.node's own functions (the addon
 * keeps its symbol table). Session 34 found two costs this way that the V8
 * profile showed only as COMMIT time: the backstop checkpoint running inside
 * a request's COMMIT, and the page-cache walk after a page split
 * (src/store/sqlite/checkpointer.ts, database.ts PAGE_CACHE_KIB).
 *
 * Baton runs as the bench runs it (bench/lib/world.ts), gets the JIT warm-up
 * burst and 3 s at concurrency `c` (default 32), then `perf record` samples
 * its main thread only (cpu-clock, 999 Hz, call graphs) for `seconds`
 * (default 15) while the load goes on. Prints one JSON object: requests/s
 * over that window, the share of samples by object (node, JIT code, the
 * kernel, SQLite's addon, libc), the top functions by self share, and the
 * inclusive share of the SQLite and V8 functions named in {@link WATCH}.
 * Needs `perf` on PATH (Debian: linux-perf) and permission to trace
 * (perf_event_paranoid ≤ 1, or root); a development tool, not part of
 * `npm run bench`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { JIT_BURST, LoadGenerator, warmJit } from './lib/load.ts';
import { removeTemp, tempDir } from './lib/proc.ts';
import { round } from './lib/stats.ts';
import { batonSendMessage, startBaton, startHonestAgent } from './lib/world.ts';

const c = Number(process.argv[2] ?? 32);
const seconds = Number(process.argv[3] ?? 15);
if (!Number.isInteger(c) || c < 1 || !(seconds > 0 && seconds <= 120)) {
  console.error('usage: tsx bench/perf-native.ts [c ≥ 1] [seconds ≤ 120]');
  process.exit(2);
}
if (spawnSync('perf', ['--version']).status !== 0) {
  console.error('perf-native: needs perf on PATH (Debian: apt-get install linux-perf)');
  process.exit(2);
}

/** Functions whose inclusive share is reported: the WAL's writes and checkpoints, the COMMIT's cache walk, the pragma compiles, the scavenger. */
const WATCH = [
  'sqlite3_step',
  'sqlite3VdbeHalt',
  'pagerWalFrames',
  'walCheckpoint',
  'pcache1TruncateUnsafe',
  'sqlite3BtreeInsert',
  'Database::JS_exec',
  'sqlite3Prepare',
  'v8::internal::Heap::Scavenge',
  'uv__io_poll',
];

const work = tempDir('perfnative');
const data = join(work, 'perf.data');
const agent = await startHonestAgent();
const baton = await startBaton(agent, 3_600);
try {
  await warmJit(batonSendMessage(baton.url, 'warm'), JIT_BURST.full.requests, JIT_BURST.full.ms);
  const gen = new LoadGenerator(batonSendMessage(baton.url, 'perf'), c);
  await gen.phase(3_000);
  // perf stops itself: it records for as long as its `sleep` runs, while the measured phase runs beside it.
  const perf = spawn('perf', ['record', '-F', '999', '-g', '-t', String(baton.pid), '-o', data, '--', 'sleep', String(seconds)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let perfErr = '';
  perf.stderr!.setEncoding('utf8').on('data', (s: string) => (perfErr = (perfErr + s).slice(-2_000)));
  const exited = new Promise<number | null>((resolve) => perf.once('exit', resolve));
  const r = await gen.phase(seconds * 1_000);
  const code = await exited;
  await gen.close();
  if (code !== 0) throw new Error(`perf record exited with ${code}: ${perfErr}`);

  const report = (args: string[]) => {
    const out = spawnSync('perf', ['report', '-i', data, '--stdio', '-g', 'none', ...args], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
    if (out.status !== 0) throw new Error(`perf report failed: ${out.stderr}`);
    // Without the IPC columns perf adds where the samples carry none ("-  -").
    return out.stdout
      .split('\n')
      .filter((l) => /^\s+\d/.test(l))
      .map((l) => l.replace(/(\s+-)+\s*$/, ''));
  };
  const byObject = report(['--no-children', '--sort', 'dso']).map((l) => l.trim().split(/\s+/)).map(([pct, ...dso]) => [dso.join(' ').replace(/^\[JIT\].*/, '[JIT]'), Number.parseFloat(pct!)] as const);
  const self = report(['--no-children', '--sort', 'dso,symbol'])
    .slice(0, 30)
    .map((l) => /^\s+([\d.]+)%\s+(\S+)\s+\[.\]\s+(.+?)\s*$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => `${m[1]}% ${m[3]} (${m[2]})`);
  // Every watched function is listed; 0 where no sample fell in it.
  const inclusive: Record<string, number> = Object.fromEntries(WATCH.map((name) => [name, 0]));
  for (const l of report(['--children', '--sort', 'symbol'])) {
    const m = /^\s+([\d.]+)%\s+[\d.]+%\s+\[.\]\s+(.+?)\s*$/.exec(l);
    const name = m?.[2]?.replace(/\.(isra|part|constprop)\.\d+.*$/, '');
    if (m && name && WATCH.includes(name)) inclusive[name] = Math.max(inclusive[name]!, Number.parseFloat(m[1]!));
  }
  process.stdout.write(
    `${JSON.stringify({ c, seconds, requests: r.requests, errors: r.errors, rps: round(r.requests / seconds, 1), byObject: Object.fromEntries(byObject), selfTop: self, inclusive }, null, 1)}\n`,
  );
} finally {
  await baton.stop();
  await agent.stop();
  removeTemp(work);
}
process.exit(0);
