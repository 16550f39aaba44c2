/**
 * The loopback world for the HTTP benchmarks: one honest SDK agent
 * (`--step-ms 0`), Baton as its own process in front of it (configured the
 * way e2e/gateway/world.ts does: pinned JWKS for the agent origin, one
 * API-key caller, an owner preset), and the node:http + undici pass-through.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnAgent, spawnReady, type SpawnedAgent } from '../../e2e/harness/process.ts';
import { API_KEY } from '../../e2e/gateway/world.ts';
import { completedTask, sendMessageBody, type LoadTarget } from './load.ts';
import { removeTemp, spawnLines, tempDir } from './proc.ts';

export { API_KEY };
export const BATON_MAIN = fileURLToPath(new URL('../../e2e/harness/baton-main.ts', import.meta.url));
const PASSTHROUGH = fileURLToPath(new URL('../passthrough.ts', import.meta.url));
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * Preset lifetime of the roots Baton issues: the production default (3,600 s)
 * unless BENCH_ROOT_LIFETIME_S says otherwise. ADR-0014 capacity counts only
 * live work (src/store/capacity.ts): a root whose reservations are all settled
 * no longer counts as active and its nodes no longer count as retained, so a
 * closed loop of c requests holds at most about c roots whatever the lifetime.
 * Settled roots stay unexpired for the whole lifetime, though, and whatever
 * the store does per unexpired root is part of what the benchmarks measure.
 */
export const ROOT_LIFETIME_S = Number(process.env.BENCH_ROOT_LIFETIME_S ?? 3_600);

export interface Service {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export function startHonestAgent(): Promise<SpawnedAgent> {
  return spawnAgent({ behaviour: 'honest', name: 'honest', stepMs: 0 });
}

/** Writes a gateway config for `agent` into a fresh data dir; returns its path and dir. */
export function batonConfig(agent: SpawnedAgent, lifetimeSeconds = ROOT_LIFETIME_S): { dir: string; file: string } {
  const dir = tempDir('gw');
  const jwks = join(dir, 'honest.jwks.json');
  writeFileSync(jwks, JSON.stringify(agent.jwks));
  const config = {
    port: 0,
    dataDir: dir,
    logLevel: 'warn',
    trust: { pinnedJwks: { [agent.url]: jwks }, jkuAllowedOrigins: [] },
    delegatees: [{ id: 'honest', cardUrl: `${agent.url}/.well-known/agent-card.json`, acceptance: { minArtifacts: 1 }, allowHttp: true }],
    callers: [{ id: 'planner', apiKeySha256: sha256(API_KEY), preset: 'standard' }],
    presets: [{ id: 'standard', maxInvocations: 5, lifetimeSeconds, maxActiveRoots: 1024, maxPerMinute: 100_000 }],
  };
  const file = join(dir, 'baton.json');
  writeFileSync(file, JSON.stringify(config));
  return { dir, file };
}

/** Baton as its own process (e2e harness), on a fresh SQLite data dir; `main` names another checkout's harness entry (bench/ab-interleave.ts). */
export async function startBaton(agent: SpawnedAgent, lifetimeSeconds = ROOT_LIFETIME_S, main = BATON_MAIN): Promise<Service & { dir: string; warnings(): string[] }> {
  const { dir, file } = batonConfig(agent, lifetimeSeconds);
  const proc = await spawnReady<{ url: string }>(main, [file], {}, { timeoutMs: 60_000 });
  return {
    url: proc.ready.url,
    pid: proc.pid,
    dir,
    /** Baton's last warnings and errors (its log, pino levels 40–60, from the stderr tail): why a request went wrong, in its words. */
    warnings: () => proc.stderrTail().split('\n').filter((l) => /^\{"level":[456]0,/.test(l)).slice(-5),
    async stop() {
      await proc.stop();
      removeTemp(dir);
    },
  };
}

/** Baton under `node --cpu-prof`; the profile is written when it exits (SIGTERM → clean exit). */
export async function startProfiledBaton(agent: SpawnedAgent, profileDir: string, lifetimeSeconds = ROOT_LIFETIME_S): Promise<Service & { dir: string }> {
  const { dir, file } = batonConfig(agent, lifetimeSeconds);
  const proc = spawnLines(BATON_MAIN, [file], { execArgv: ['--cpu-prof', '--cpu-prof-dir', profileDir] });
  const ready = await proc.next<{ url: string }>(60_000);
  return {
    url: ready.url,
    pid: proc.pid,
    dir,
    async stop() {
      await proc.stop(30_000);
      removeTemp(dir);
    },
  };
}

/** The pass-through; with `readBack` it also re-reads each task with a GetTask on a separate pool. */
export async function startPassthrough(upstream: string, opts: { readBack?: boolean } = {}): Promise<Service> {
  const proc = await spawnReady<{ url: string }>(PASSTHROUGH, [upstream, ...(opts.readBack ? ['--read-back'] : [])], {}, { timeoutMs: 30_000 });
  return { url: proc.ready.url, pid: proc.pid, stop: proc.stop };
}

/** A delegated SendMessage to the honest agent through the Baton at `origin`; success is a read-back verified COMPLETED task. */
export function batonSendMessage(origin: string, idPrefix: string): LoadTarget {
  return {
    origin,
    path: '/agents/honest/a2a/jsonrpc',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY },
    body: sendMessageBody(idPrefix),
    check: completedTask({ verified: true }),
  };
}

