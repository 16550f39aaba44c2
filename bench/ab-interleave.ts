/**
 * `tsx bench/ab-interleave.ts <other-checkout> [c] [rounds] [sliceMs]`: gateway
 * CPU per delegated SendMessage of this tree (A) against another checkout (B),
 * both running at once and measured in alternating slices (A B, then B A, …),
 * so that whatever else the machine does in a given minute lands on both.
 * Running ab-cpu.ts in two checkouts one after the other could not resolve a
 * change worth less than about 10 % on this shared VM (one tree's c=32 CPU per
 * call ranged 5.6–9.5 ms within minutes, issue #24 session 21); interleaving
 * short slices cancels drift slower than a slice.
 *
 * One honest agent serves both. Each Baton gets the JIT warm-up burst and
 * two unmeasured slices, then each measured slice is 300 ms at c unmeasured (the other side's loops have drained)
 * and `sliceMs` measured; CPU is utime+stime of the measured side's process
 * (the idle side is not counted) divided by its requests. Prints one JSON line:
 * both sides' totals, B/A, and the per-round ratios with their median and
 * range, and each side's median of its slices' p50 latencies. `<other-checkout>` needs its own node_modules.
 *
 * What it can resolve: the same tree against itself (a worktree of one
 * commit), c=32, 10 rounds of 3 s, came out at 1.079 (rounds 0.89–1.19) and,
 * with 8 rounds and no unmeasured ones, 0.904. Two processes of one build
 * differ by up to ~10 % for as long as they live (their JIT and heap
 * histories), which interleaving cannot cancel; a change worth less than that
 * needs several pairs of processes, or a deterministic count instead.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { JIT_BURST, LoadGenerator, warmJit } from './lib/load.ts';
import { cpuTimes, threadTimes, ticksToMs } from './lib/proc.ts';
import { round } from './lib/stats.ts';
import { BATON_MAIN, batonSendMessage, startBaton, startHonestAgent } from './lib/world.ts';

const other = process.argv[2];
if (!other || !existsSync(join(other, 'e2e/harness/baton-main.ts'))) {
  console.error('usage: tsx bench/ab-interleave.ts <other-checkout> [c] [rounds] [sliceMs]');
  process.exit(2);
}
const c = Number(process.argv[3] ?? 32);
const rounds = Number(process.argv[4] ?? 8);
const sliceMs = Number(process.argv[5] ?? 3_000);

interface Side {
  name: 'A' | 'B';
  url: string;
  pid: number;
  ticks: number;
  main: number;
  requests: number;
  errors: number;
  perRound: number[];
  /** Each measured slice's median latency: at c=1, what the added-p50 target is about. */
  p50s: number[];
}

const agent = await startHonestAgent();
const a = await startBaton(agent, 30, BATON_MAIN);
const b = await startBaton(agent, 30, resolve(other, 'e2e/harness/baton-main.ts'));
const sides: Side[] = [a, b].map((s, i) => ({ name: i === 0 ? 'A' : 'B', url: s.url, pid: s.pid, ticks: 0, main: 0, requests: 0, errors: 0, perRound: [], p50s: [] }));
try {
  for (const s of sides) await warmJit(batonSendMessage(s.url, 'warm'), Number(process.env.BENCH_JIT_WARM ?? JIT_BURST.full.requests), JIT_BURST.full.ms);
  const gens = new Map(sides.map((s) => [s, new LoadGenerator(batonSendMessage(s.url, 'ab'), c)]));
  // Two unmeasured rounds first: a side that sat idle through the other's burst starts its first slices still settling.
  for (let round = 0; round < 2; round++) for (const s of sides) await gens.get(s)!.phase(sliceMs, 100_000);
  for (let round = 0; round < rounds; round++) {
    for (const s of round % 2 === 0 ? sides : [...sides].reverse()) {
      const gen = gens.get(s)!;
      await gen.phase(300, 2_000);
      const before = cpuTimes(s.pid);
      const mainBefore = threadTimes(s.pid).main;
      const r = await gen.phase(sliceMs, 100_000);
      const after = cpuTimes(s.pid);
      const ticks = after.user + after.system - before.user - before.system;
      s.ticks += ticks;
      s.main += threadTimes(s.pid).main - mainBefore;
      s.requests += r.requests;
      s.errors += r.errors;
      s.perRound.push(ticksToMs(ticks) / Math.max(1, r.requests));
      s.p50s.push(r.p50Ms);
    }
  }
  for (const gen of gens.values()) await gen.close();
  const summary = (s: Side) => ({
    requests: s.requests,
    errors: s.errors,
    cpuMsPerRequest: round(ticksToMs(s.ticks) / Math.max(1, s.requests)),
    mainThreadMs: round(ticksToMs(s.main) / Math.max(1, s.requests)),
    perRound: s.perRound.map((x) => round(x)),
    p50Ms: round([...s.p50s].sort((p, q) => p - q)[Math.floor(s.p50s.length / 2)] ?? Number.NaN),
  });
  const [sa, sb] = sides as [Side, Side];
  const ratios = sa.perRound.map((x, i) => sb.perRound[i]! / x).sort((p, q) => p - q);
  const ratio = (x: number) => round(x, 3);
  process.stdout.write(
    `${JSON.stringify({
      c,
      rounds,
      sliceMs,
      A: summary(sa),
      B: { checkout: resolve(other), ...summary(sb) },
      bOverA: ratio(ticksToMs(sb.ticks) / Math.max(1, sb.requests) / (ticksToMs(sa.ticks) / Math.max(1, sa.requests))),
      roundRatios: { median: ratio(ratios[Math.floor(ratios.length / 2)]!), min: ratio(ratios[0]!), max: ratio(ratios.at(-1)!) },
    })}\n`,
  );
} finally {
  await a.stop();
  await b.stop();
  await agent.stop();
}
process.exit(0);
