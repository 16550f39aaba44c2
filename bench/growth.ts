/**
 * Flat growth (issue #15): admission and verification cost as retained
 * history grows from 10^3 to 10^6 records, in its own process:
 *   tsx bench/growth.ts '{"sizes":[1000,10000],"admissions":300,"requests":10,"verifyMs":2000}'
 *
 * One real gateway, composed exactly as src/main.ts does, over one SQLite
 * store in front of a real honest agent. Before each size, settled history is
 * seeded straight into that store (bench/lib/seed.ts: the rows real tasks
 * leave, in the gateway's namespace, space and preset); then, at that size:
 *  - delegated SendMessages through the gateway, one at a time (end to end);
 *  - admissions (fence capture + the fenced reserve transaction) on a depth-3
 *    budget chain in the same namespace, each settled after it is timed, so
 *    live work stays constant and only history grows;
 *  - verification against the store, for the task just sent: its stored
 *    chain re-evaluated with heads read from the store (the gateway's own
 *    DelegationAuthority.evaluate: signatures, attenuation, then each
 *    contract's record and delegation-stream head), and the verdict's store
 *    side (src/gateway/path/verify.ts `fencesCurrent`: every fenced stream
 *    head and authority scope re-read, plus the reservation read `judge` does).
 * Prints one JSON line.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { loadConfig, resolvedPaths } from '../src/config.ts';
import { loadChain } from '../src/contracts/attestation-chain.ts';
import { parseContract } from '../src/contracts/model.ts';
import type { ControlScopeRef } from '../src/control/scope.ts';
import { ControlBoundaryRef } from '../src/control/fence.ts';
import { fencesCurrent } from '../src/gateway/path/read-back.ts';
import { RemoteClient } from '../src/gateway/remote.ts';
import { Keyring } from '../src/keys/keyring.ts';
import { createLogger } from '../src/log.ts';
import { composeGateway } from '../src/main.ts';
import { randomIds } from '../src/records/ids.ts';
import type { RevisionRef } from '../src/records/revision-ref.ts';
import { SqliteStore } from '../src/store/sqlite/store.ts';
import { completedTask, sendMessageBody } from './lib/load.ts';
import { admission, chainOfDepth, publishAgent } from './lib/ledger.ts';
import { cleanupTemp } from './lib/proc.ts';
import { RETAINED_PER_TASK, seedTasks } from './lib/seed.ts';
import { round, summarise } from './lib/stats.ts';
import { API_KEY, batonConfig, ROOT_LIFETIME_S, startHonestAgent } from './lib/world.ts';

export interface GrowthOptions {
  sizes: number[];
  admissions: number;
  requests: number;
  verifyMs: number;
  /** Seed history whose roots are still unexpired (settled, inside their lifetime) instead of expired. */
  unexpired?: boolean;
}

export interface RetainedRow {
  /** Retained ledger records seeded (3 per task) and the tasks that makes. */
  retained: number;
  tasks: number;
  /** Seconds seeding took up to this size (cumulative) and for this step. */
  seedS: number;
  seedStepS: number;
  admission: { perSec: number; meanMs: number; p99Ms: number };
  verify: { perSec: number; meanUs: number; p99Us: number; chainMeanUs: number; verdictMeanUs: number; fencesCurrent: boolean; contracts: number };
  request: { meanMs: number; p50Ms: number; errors: number; errorSample?: string };
}

const opts = JSON.parse(process.argv[2] ?? '{}') as GrowthOptions;
const agent = await startHonestAgent();
const { file } = batonConfig(agent, ROOT_LIFETIME_S);
const config = loadConfig({ file, env: {} });
const store = SqliteStore.open(resolvedPaths(config).sqlite, { create: true });
const keyring = await Keyring.open(resolvedPaths(config).keys);
const server = createServer();
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const remote = new RemoteClient({ limits: config.remote });
const gw = await composeGateway(config, { store, keyring, publicUrl: url, logger: createLogger({ level: 'warn', destination: process.stderr }), remote });
server.on('request', gw.app);
const authority = gw.dispatcher.deps.authority;
const preset = config.presets[0]!.id;
const shape = {
  space: config.spaceId,
  namespace: config.ownerNamespace,
  preset,
  notAfter: opts.unexpired ? new Date(Date.now() + ROOT_LIFETIME_S * 1000).toISOString() : '2000-01-01T00:00:00.000Z',
};

const body = sendMessageBody('growth');
const check = completedTask({ verified: true });
async function sendOne(dispatcher: Agent): Promise<{ ms: number; problem?: string }> {
  const t0 = performance.now();
  const res = await request(`${url}/agents/honest/a2a/jsonrpc`, {
    dispatcher,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY },
    body: body(),
  });
  const problem = check(res.statusCode, await res.body.text());
  return { ms: performance.now() - t0, ...(problem ? { problem } : {}) };
}

/** Sequential delegated SendMessages (the first two unmeasured). */
async function requests(n: number): Promise<RetainedRow['request']> {
  // Connections of this phase only: one kept from the previous step idled through the admission and verification
  // phases (which starve the event loop's timers) and the synchronous seeding, and the gateway's server closed it
  // just as it was reused (ECONNRESET).
  const dispatcher = new Agent();
  try {
    return await timedRequests(dispatcher, n);
  } finally {
    await dispatcher.close();
  }
}

async function timedRequests(dispatcher: Agent, n: number): Promise<RetainedRow['request']> {
  for (let i = 0; i < 2; i++) await sendOne(dispatcher);
  const lat: number[] = [];
  let errors = 0;
  let errorSample: string | undefined;
  for (let i = 0; i < n; i++) {
    const r = await sendOne(dispatcher);
    lat.push(r.ms);
    if (r.problem) {
      errors++;
      errorSample ??= r.problem.slice(0, 300);
    }
  }
  const s = summarise(lat);
  return { meanMs: round(s.meanMs, 2), p50Ms: round(s.p50Ms, 2), errors, ...(errorSample ? { errorSample } : {}) };
}

// Admissions on a depth-3 budget chain of their own, in the gateway's namespace.
const fxSpace = randomIds.next('space');
await publishAgent(store, fxSpace);
const chain = await chainOfDepth(store, fxSpace, 3, config.ownerNamespace);
const leaf = chain[chain.length - 1]!;
async function admissions(count: number): Promise<RetainedRow['admission']> {
  const one = async (): Promise<number> => {
    const req = await admission(store, fxSpace, chain, leaf);
    const t0 = performance.now();
    await store.ledger.admit(req);
    const ms = performance.now() - t0;
    await store.ledger.settle({ reservation_id: req.reservation_id, outcome: { kind: 'measured', actual: new Map([['units', 1n]]) }, at: new Date().toISOString() });
    return ms;
  };
  for (let i = 0; i < Math.min(100, count); i++) await one();
  const lat: number[] = [];
  const start = performance.now();
  while (lat.length < count && performance.now() - start < 8_000) lat.push(await one());
  const s = summarise(lat);
  return { perSec: round(1000 / s.meanMs, 0), meanMs: round(s.meanMs, 3), p99Ms: round(s.p99Ms, 3) };
}

/** The newest attempt the gateway wrote (seeded rows always precede it). */
function latestAttempt(): { delegation_ref: RevisionRef; fence_set: unknown; reservation_id: string } {
  const row = store.handle.prepare(`SELECT document FROM records WHERE schema_ref LIKE '%#execution_attempt' ORDER BY seq DESC LIMIT 1`).get() as { document: string } | undefined;
  if (!row) throw new Error('no attempt stored');
  return (JSON.parse(row.document) as { body: { delegation_ref: RevisionRef; fence_set: unknown; reservation_id: string } }).body;
}

async function verification(ms: number): Promise<RetainedRow['verify']> {
  const attempt = latestAttempt();
  const contracts = (await loadChain(store, attempt.delegation_ref)).map((r) => parseContract(r));
  const scopes = contracts.at(-1)!.body.control_scopes as ControlScopeRef[];
  const fence = ControlBoundaryRef.array().parse(attempt.fence_set);
  const op = authority.operation('a2a.SendMessage', 'proposal');
  let current = true;
  const one = async () => {
    const t0 = performance.now();
    await authority.evaluate(contracts, op);
    const t1 = performance.now();
    current = (await fencesCurrent(store, fence, scopes)) && current;
    await store.ledger.reservation(attempt.reservation_id);
    return [t1 - t0, performance.now() - t1] as const;
  };
  for (let i = 0; i < 300; i++) await one();
  const total: number[] = [];
  let chainMs = 0;
  let verdictMs = 0;
  const start = performance.now();
  while (performance.now() - start < ms) {
    const [c, v] = await one();
    chainMs += c;
    verdictMs += v;
    total.push(c + v);
  }
  const s = summarise(total);
  return {
    perSec: round(1000 / s.meanMs, 0),
    meanUs: round(s.meanMs * 1000, 1),
    p99Us: round(s.p99Ms * 1000, 1),
    chainMeanUs: round((chainMs * 1000) / total.length, 1),
    verdictMeanUs: round((verdictMs * 1000) / total.length, 1),
    fencesCurrent: current,
    contracts: contracts.length,
  };
}

const rows: RetainedRow[] = [];
try {
  let tasks = 0;
  let seedS = 0;
  for (const size of opts.sizes) {
    const want = Math.ceil(size / RETAINED_PER_TASK);
    const step = seedTasks(store.handle, shape, want - tasks);
    tasks = want;
    seedS += step;
    process.stderr.write(`  growth: ${size} retained records (${tasks} tasks) seeded in ${step.toFixed(1)} s\n`);
    const request = await requests(opts.requests);
    const adm = await admissions(opts.admissions);
    const verify = await verification(opts.verifyMs);
    rows.push({ retained: size, tasks, seedS: round(seedS, 1), seedStepS: round(step, 1), admission: adm, verify, request });
    process.stderr.write(`  growth: ${JSON.stringify(rows.at(-1))}\n`);
  }
  process.stdout.write(`${JSON.stringify({ rows, unexpired: Boolean(opts.unexpired), rootLifetimeS: ROOT_LIFETIME_S })}\n`);
} finally {
  server.closeAllConnections();
  server.close();
  await remote.close();
  await store.close();
  await agent.stop();
  cleanupTemp();
}
process.exit(0);
