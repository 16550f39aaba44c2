/**
 * Baton under `node --cpu-prof` for a short concurrency-32 load (BENCH_PROFILE_C), then the
 * .cpuprofile summarised: self time by function and by area (a package, a
 * src/ directory, node internals, GC), and inclusive time of Baton's own
 * functions.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { JIT_BURST, LoadGenerator, warmJit } from './lib/load.ts';
import { removeTemp, ROOT, tempDir, threadTimes, ticksToMs } from './lib/proc.ts';
import { round } from './lib/stats.ts';
import { batonSendMessage, ROOT_LIFETIME_S, startHonestAgent, startProfiledBaton } from './lib/world.ts';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface ProfileEntry {
  name: string;
  where: string;
  ms: number;
  pct: number;
}

export interface ProfileResults {
  requests: number;
  errors: number;
  rps: number;
  /** Sampled wall time of the main thread, and the part of it not idle. */
  profiledMs: number;
  busyMs: number;
  selfTop: ProfileEntry[];
  byArea: Array<{ area: string; ms: number; pct: number }>;
  /**
   * Self time again, but a sample in Node's internals or native code is
   * charged to the nearest JavaScript on its stack that is a package or a
   * src/ directory ({@link ownerOf}): signing and hashing land on src/records/,
   * a socket write on whatever wrote. Absent in results from before it was measured.
   */
  byOwner?: Array<{ area: string; ms: number; pct: number }>;
  inclusiveSrc: ProfileEntry[];
  /** Whether only the samples inside the measured load window were counted. */
  windowed: boolean;
  /**
   * CPU per request over the load window from /proc: the main thread (what
   * the profile samples) and the process's other threads, which it does not
   * (V8's GC helpers and concurrent compiler, libuv's pool, worker threads).
   * Absent in results from before it was measured.
   */
  threadsMsPerRequest?: { main: number; others: number };
}

function shortUrl(url: string): string {
  const root = `file://${ROOT}`;
  let u = url.startsWith(root) ? url.slice(root.length) : url.replace(/^file:\/\//, '');
  const nm = u.lastIndexOf('node_modules/');
  if (nm >= 0) u = u.slice(nm);
  return u;
}

export function areaOf(frame: CallFrame): string {
  const { functionName: f, url } = frame;
  if (f === '(idle)' || f === '(program)' || f === '(garbage collector)' || f === '(root)') return f;
  if (!url) return '(native/builtin)';
  if (url.startsWith('node:')) return 'node: internals';
  const u = shortUrl(url);
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u);
  if (nm) return nm[1]!;
  const src = /^(src\/[^/]+)\//.exec(u);
  if (src) return `${src[1]}/`;
  return u.split('/')[0] ?? u;
}

/** Areas that are not a package or src/ directory: their samples are charged on to a caller by {@link ownerOf}. */
const UNOWNED = new Set(['(native/builtin)', 'node: internals', '(program)', '(garbage collector)', '(root)', '(idle)']);

/**
 * The area that owns a sample at `id`: the nearest frame, from the sample up,
 * in a package or a src/ directory; undefined when there is none (GC, the
 * event loop's own work). Memoised per node in `memo`.
 */
function ownerOf(id: number, byId: Map<number, ProfileNode>, parent: Map<number, number>, memo: Map<number, string | undefined>): string | undefined {
  if (memo.has(id)) return memo.get(id);
  const a = areaOf(byId.get(id)!.callFrame);
  const up = parent.get(id);
  const owner = !UNOWNED.has(a) ? a : up === undefined ? undefined : ownerOf(up, byId, parent, memo);
  memo.set(id, owner);
  return owner;
}

// tsx-compiled src/ files report meaningless line numbers, so they are named by file only.
export const keyOf = (f: CallFrame) =>
  `${f.functionName || '(anonymous)'}\u0000${f.url ? (f.url.includes('/node_modules/') || f.url.startsWith('node:') ? `${shortUrl(f.url)}:${f.lineNumber + 1}` : shortUrl(f.url)) : ''}`;

/** Self and inclusive times (ms) from samples × timeDeltas. */
export function summariseProfile(p: CpuProfile, top = 15, window?: { fromUs: number; toUs: number }): Omit<ProfileResults, 'requests' | 'errors' | 'rps' | 'windowed'> {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map<number, number>();
  const samples = p.samples ?? [];
  const deltas = p.timeDeltas ?? [];
  let ts = p.startTime;
  for (let i = 0; i < samples.length; i++) {
    ts += deltas[i] ?? 0;
    // Sample timestamps and process.hrtime share CLOCK_MONOTONIC, so the load window selects them.
    if (window && (ts < window.fromUs || ts > window.toUs)) continue;
    // timeDeltas[i] is the gap before sample i; attribute the following gap to it.
    const us = deltas[i + 1] ?? deltas[i] ?? 0;
    selfUs.set(samples[i]!, (selfUs.get(samples[i]!) ?? 0) + us);
  }
  let total = 0;
  let idle = 0;
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  const owners = new Map<string, number>();
  const ownerMemo = new Map<number, string | undefined>();
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    total += us;
    if (node.callFrame.functionName === '(idle)') {
      idle += us;
      continue;
    }
    const k = keyOf(node.callFrame);
    self.set(k, (self.get(k) ?? 0) + us);
    const a = areaOf(node.callFrame);
    areas.set(a, (areas.get(a) ?? 0) + us);
    // A stack with no owner on it keeps the sample's own area.
    const o = ownerOf(id, byId, parent, ownerMemo) ?? a;
    owners.set(o, (owners.get(o) ?? 0) + us);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      if (!f.url.includes('/src/')) continue;
      const ik = keyOf(f);
      if (seen.has(ik)) continue;
      seen.add(ik);
      inclusive.set(ik, (inclusive.get(ik) ?? 0) + us);
    }
  }
  const busy = total - idle;
  const entry = ([k, us]: [string, number]): ProfileEntry => {
    const [name, where] = k.split('\u0000') as [string, string];
    return { name, where, ms: round(us / 1000, 1), pct: round((100 * us) / busy, 1) };
  };
  const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]);
  const shares = (m: Map<string, number>) =>
    sorted(m)
      .slice(0, 14)
      .map(([area, us]) => ({ area, ms: round(us / 1000, 1), pct: round((100 * us) / busy, 1) }));
  return {
    profiledMs: round(total / 1000, 0),
    busyMs: round(busy / 1000, 0),
    selfTop: sorted(self).slice(0, top).map(entry),
    byArea: shares(areas),
    byOwner: shares(owners),
    inclusiveSrc: sorted(inclusive).slice(0, top).map(entry),
  };
}

export async function profileBaton(quick: boolean, log: (s: string) => void): Promise<ProfileResults> {
  const dir = tempDir('prof');
  const agent = await startHonestAgent();
  try {
    const baton = await startProfiledBaton(agent, dir, ROOT_LIFETIME_S);
    let r;
    let window: { fromUs: number; toUs: number } | undefined;
    let threads: ProfileResults['threadsMsPerRequest'];
    try {
      // BENCH_PROFILE_C profiles another concurrency (bench/profile-main.ts; the full run's step is c=32).
      const c = Number(process.env.BENCH_PROFILE_C ?? 32);
      // Past the JIT warm-up first, as the A2A phases are (lib/load.ts warmJit); the window below is what the summary counts.
      const burst = quick ? JIT_BURST.quick : JIT_BURST.full;
      await warmJit(batonSendMessage(baton.url, 'warm'), burst.requests, burst.ms);
      const gen = new LoadGenerator(batonSendMessage(baton.url, 'prof'), c);
      try {
        await gen.phase(1_000, 400);
        log(`  profiling c=${c} load`);
        const fromUs = Number(process.hrtime.bigint() / 1000n);
        const before = threadTimes(baton.pid);
        const measured = (r = await gen.phase(quick ? 3_000 : 6_000, 2_500));
        const after = threadTimes(baton.pid);
        window = { fromUs, toUs: Number(process.hrtime.bigint() / 1000n) };
        const per = (ticks: number) => round(ticksToMs(ticks) / Math.max(1, measured.requests), 2);
        threads = { main: per(after.main - before.main), others: per(after.others - before.others) };
      } finally {
        await gen.close();
      }
    } finally {
      await baton.stop();
    }
    // The main thread's profile is the one with the most busy samples (tsx's loader thread writes one too).
    const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
    if (files.length === 0) throw new Error('no .cpuprofile written');
    const profiles = files.map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as CpuProfile);
    // BENCH_PROFILE_TOP lists more functions (bench/profile-main.ts).
    const top = Number(process.env.BENCH_PROFILE_TOP ?? 15);
    let summaries = profiles.map((p) => summariseProfile(p, top, window));
    let windowed = true;
    if (summaries.every((s) => s.busyMs === 0)) {
      // The clocks did not line up: fall back to the whole process lifetime (start-up included).
      summaries = profiles.map((p) => summariseProfile(p, top));
      windowed = false;
    }
    const mainIndex = summaries.reduce((best, s, i) => (s.busyMs > summaries[best]!.busyMs ? i : best), 0);
    const main = summaries[mainIndex]!;
    // BENCH_PROFILE_OUT keeps the main thread's .cpuprofile (for DevTools, or a summary of your own).
    if (process.env.BENCH_PROFILE_OUT) writeFileSync(process.env.BENCH_PROFILE_OUT, JSON.stringify(profiles[mainIndex]));
    return { requests: r.requests, errors: r.errors, rps: round(r.rps, 1), ...main, windowed, ...(threads ? { threadsMsPerRequest: threads } : {}) };
  } finally {
    await agent.stop();
    removeTemp(dir);
  }
}
