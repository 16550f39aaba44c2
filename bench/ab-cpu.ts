/**
 * `tsx bench/ab-cpu.ts [c] [ms]`: gateway CPU per delegated SendMessage
 * (utime+stime of the Baton process / requests) for this tree, one JSON line,
 * with user and system time apart, and main thread and other threads apart
 * (GC helpers, the concurrent compiler, the fsync pool, the checkpoint worker).
 * The Baton first serves a c=32 burst of BENCH_JIT_WARM requests (default
 * 4,000; lib/load.ts warmJit), then BENCH_WARM_MS of warm-up at c (default 1,500 ms). Run the same file in two
 * checkouts, alternating, to compare a change within one time window on a
 * shared machine.
 */
import { JIT_BURST, LoadGenerator, warmJit } from './lib/load.ts';
import { cpuTimes, threadTimes, ticksToMs } from './lib/proc.ts';
import { batonSendMessage, startBaton, startHonestAgent } from './lib/world.ts';

const c = Number(process.argv[2] ?? 32);
const ms = Number(process.argv[3] ?? 5_000);
const agent = await startHonestAgent();
const baton = await startBaton(agent, 30);
try {
  const gen = new LoadGenerator(
    batonSendMessage(baton.url, 'ab'),
    c,
  );
  await warmJit(batonSendMessage(baton.url, 'warm'), Number(process.env.BENCH_JIT_WARM ?? JIT_BURST.full.requests), JIT_BURST.full.ms);
  await gen.phase(Number(process.env.BENCH_WARM_MS ?? 1_500), 300);
  const before = cpuTimes(baton.pid);
  const threadsBefore = threadTimes(baton.pid);
  const r = await gen.phase(ms, 2_000);
  const after = cpuTimes(baton.pid);
  const threadsAfter = threadTimes(baton.pid);
  await gen.close();
  const per = (ticks: number) => Math.round((100 * ticksToMs(ticks)) / Math.max(1, r.requests)) / 100;
  process.stdout.write(
    `${JSON.stringify({ c, requests: r.requests, errors: r.errors, rps: Math.round(r.rps * 10) / 10, cpuMsPerRequest: per(after.user + after.system - before.user - before.system), userMs: per(after.user - before.user), systemMs: per(after.system - before.system), mainThreadMs: per(threadsAfter.main - threadsBefore.main), otherThreadsMs: per(threadsAfter.others - threadsBefore.others) })}\n`,
  );
} finally {
  await baton.stop();
  await agent.stop();
}
process.exit(0);
