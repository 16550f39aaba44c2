/**
 * `tsx bench/ab-cpu.ts [c] [ms]`: gateway CPU per delegated SendMessage
 * (utime+stime of the Baton process / requests) for this tree, one JSON line.
 * Run the same file in two checkouts, alternating, to compare a change within
 * one time window on a shared machine.
 */
import { completedTask, LoadGenerator, sendMessageBody } from './lib/load.ts';
import { cpuTicks, ticksToMs } from './lib/proc.ts';
import { API_KEY, startBaton, startHonestAgent } from './lib/world.ts';

const c = Number(process.argv[2] ?? 32);
const ms = Number(process.argv[3] ?? 5_000);
const agent = await startHonestAgent();
const baton = await startBaton(agent, 30);
try {
  const gen = new LoadGenerator(
    { origin: baton.url, path: '/agents/honest/a2a/jsonrpc', headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY }, body: sendMessageBody('ab'), check: completedTask({ verified: true }) },
    c,
  );
  await gen.phase(1_500, 300);
  const before = cpuTicks(baton.pid) ?? 0;
  const r = await gen.phase(ms, 2_000);
  const cpu = ticksToMs((cpuTicks(baton.pid) ?? 0) - before);
  await gen.close();
  process.stdout.write(`${JSON.stringify({ c, requests: r.requests, errors: r.errors, rps: Math.round(r.rps * 10) / 10, cpuMsPerRequest: Math.round((100 * cpu) / Math.max(1, r.requests)) / 100 })}\n`);
} finally {
  await baton.stop();
  await agent.stop();
}
process.exit(0);
