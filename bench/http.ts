/**
 * Delegated SendMessage on loopback, side by side in one run: directly to the
 * agent, through the node:http + undici pass-through, through the read-back
 * pass-through (the same two agent round trips as Baton: SendMessage, then
 * GetTask on a separate pool) and through Baton, at concurrency 1 and 32;
 * with the CPU each process spent per request. `measure` is shared with
 * the MCP phase (bench/mcp.ts).
 */
import { completedTask, JIT_BURST, LoadGenerator, sendMessageBody, warmJit, type LoadTarget, type PhaseResult } from './lib/load.ts';
import { cpuTicks, ticksToMs } from './lib/proc.ts';
import { round } from './lib/stats.ts';
import { batonSendMessage, ROOT_LIFETIME_S, startBaton, startHonestAgent, startPassthrough, type Service } from './lib/world.ts';

export type Route = 'direct' | 'passthrough' | 'readback' | 'baton';

/** What one closed-loop phase measured (every protocol's row shares these). */
export interface LoadFigures {
  concurrency: number;
  rps: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  meanMs: number;
  requests: number;
  errors: number;
  errorSample?: string;
  capped: boolean;
  /** The c=32 JIT warm-up burst before the phase (absent in runs before session 21, and in MCP phases before session 22). */
  jitWarm?: { requests: number; errors: number };
}

export interface HttpRow extends LoadFigures {
  route: Route;
  /** CPU ms per request of the proxy process (pass-through or Baton), of the agent, and of the load generator. */
  cpuMsPerRequest: { proxy?: number; agent: number; client: number };
  /** Agent-side calls per request (the read-back shows up as GetTask). */
  agentCallsPerRequest?: Record<string, number>;
  /** Preset lifetime of the roots Baton issued in this phase. */
  rootLifetimeS?: number;
}

export interface HttpResults {
  rows: HttpRow[];
  /** `batonMaxRequests`: only in results of runs before the cap was dropped. */
  timing: { warmupMs: number; durationMs: number; minWarm: number; batonMaxRequests?: number; jitWarm?: { requests: number; ms: number } };
}

const BASE_HEADERS = { 'content-type': 'application/json', 'a2a-version': '1.0' };

export async function measure(
  target: LoadTarget,
  concurrency: number,
  t: { warmupMs: number; durationMs: number; minWarm: number; jitWarm?: { requests: number; ms: number } },
  pids: { proxy?: number; agent: number },
): Promise<Omit<HttpRow, 'route' | 'agentCallsPerRequest'>> {
  // Every route, at every level, first serves a c=32 burst (lib/load.ts warmJit): the phase then measures a process past its JIT warm-up.
  const burst = t.jitWarm ? await warmJit(target, t.jitWarm.requests, t.jitWarm.ms) : undefined;
  const gen = new LoadGenerator(target, concurrency);
  try {
    const warmed = (await gen.phase(t.warmupMs)).requests;
    // A slow route gets few requests in the warm-up time; give it at least `minWarm` of them at the phase's concurrency (time-bounded).
    if (warmed < t.minWarm) await gen.phase(2 * t.warmupMs, t.minWarm - warmed);
    const before = { proxy: pids.proxy === undefined ? undefined : cpuTicks(pids.proxy), agent: cpuTicks(pids.agent), client: process.cpuUsage() };
    const r: PhaseResult = await gen.phase(t.durationMs);
    const after = { proxy: pids.proxy === undefined ? undefined : cpuTicks(pids.proxy), agent: cpuTicks(pids.agent), client: process.cpuUsage(before.client) };
    const per = (ms: number) => round(ms / Math.max(1, r.requests), 3);
    return {
      concurrency,
      rps: round(r.rps, 1),
      p50Ms: round(r.p50Ms, 3),
      p90Ms: round(r.p90Ms, 3),
      p99Ms: round(r.p99Ms, 3),
      meanMs: round(r.meanMs, 3),
      requests: r.requests,
      errors: r.errors,
      ...(r.errorSample ? { errorSample: r.errorSample } : {}),
      capped: r.capped,
      ...(burst ? { jitWarm: burst } : {}),
      cpuMsPerRequest: {
        ...(before.proxy !== undefined && after.proxy !== undefined ? { proxy: per(ticksToMs(after.proxy - before.proxy)) } : {}),
        agent: per(ticksToMs((after.agent ?? 0) - (before.agent ?? 0))),
        client: per((after.client.user + after.client.system) / 1000),
      },
    };
  } finally {
    await gen.close();
  }
}

type Counts = Record<string, number | undefined>;
/** Calls the agent saw between two readings (warm-up and measurement), per message sent in them (Baton forwards as a stream). */
function callsPer(before: Counts, after: Counts): Record<string, number> {
  const sent = (c: Counts) => (c.SendMessage ?? 0) + (c.SendStreamingMessage ?? 0);
  const issued = Math.max(1, sent(after) - sent(before));
  return Object.fromEntries(
    Object.keys(after)
      .filter((k) => (after[k] ?? 0) - (before[k] ?? 0) > 0)
      .map((k) => [k, round(((after[k] ?? 0) - (before[k] ?? 0)) / issued, 2)]),
  );
}

/** One concurrency level on a fresh agent and pass-through, so every level starts from the same state. */
export async function benchHttp(quick: boolean, log: (s: string) => void): Promise<HttpResults> {
  const t = quick
    ? { warmupMs: 1_000, durationMs: 2_500, minWarm: 40, jitWarm: JIT_BURST.quick }
    : { warmupMs: 3_000, durationMs: 8_000, minWarm: 150, jitWarm: JIT_BURST.full };
  const rows: HttpRow[] = [];
  for (const c of [1, 32]) {
    const agent = await startHonestAgent();
    const pass: Service = await startPassthrough(agent.url);
    const readback: Service = await startPassthrough(agent.url, { readBack: true });
    try {
      log(`  c=${c}: direct`);
      const direct = { origin: agent.url, path: '/a2a/jsonrpc', headers: BASE_HEADERS, body: sendMessageBody('direct'), check: completedTask() };
      rows.push({ route: 'direct', ...(await measure(direct, c, t, { agent: agent.pid })) });

      log(`  c=${c}: pass-through`);
      const via = { ...direct, origin: pass.url, body: sendMessageBody('pass') };
      rows.push({ route: 'passthrough', ...(await measure(via, c, t, { proxy: pass.pid, agent: agent.pid })) });

      log(`  c=${c}: read-back pass-through`);
      const rb = { ...direct, origin: readback.url, body: sendMessageBody('readback') };
      const rbBefore = (await agent.log()).counts;
      const rbRow = await measure(rb, c, t, { proxy: readback.pid, agent: agent.pid });
      rows.push({ route: 'readback', ...rbRow, agentCallsPerRequest: callsPer(rbBefore, (await agent.log()).counts) });

      const lifetime = ROOT_LIFETIME_S;
      log(`  c=${c}: baton (fresh instance, root lifetime ${lifetime} s)`);
      const baton = await startBaton(agent, lifetime);
      try {
        const before = (await agent.log()).counts;
        const row = await measure(batonSendMessage(baton.url, 'baton'), c, t, { proxy: baton.pid, agent: agent.pid });
        rows.push({ route: 'baton', ...row, agentCallsPerRequest: callsPer(before, (await agent.log()).counts), rootLifetimeS: lifetime });
      } finally {
        await baton.stop();
      }
    } finally {
      await readback.stop();
      await pass.stop();
      await agent.stop();
    }
  }
  return { rows, timing: t };
}
