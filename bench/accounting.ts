/**
 * Per-request accounting of Baton's main path, in its own process:
 *   tsx bench/accounting.ts '{"requests":50}'
 * Composes the gateway exactly as src/main.ts does (composeGateway) but over
 * a store wrapped to count and time every call, with WebCrypto and
 * node:crypto hashing counted, and entries put in weak collections, then sends sequential delegated SendMessages
 * to a real honest agent and prints one JSON line with the per-request tally.
 * Only this process is instrumented; the throughput runs are not.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import type { AddressInfo } from 'node:net';

type Tally = Map<string, { n: number; ms: number }>;
const tally: Tally = new Map();
const note = (key: string, ms: number) => {
  const t = tally.get(key) ?? { n: 0, ms: 0 };
  t.n++;
  t.ms += ms;
  tally.set(key, t);
};

// Count signatures, verifications and digests before any module signs anything.
const subtle = Object.getPrototypeOf(globalThis.crypto.subtle) as Record<string, (...a: unknown[]) => Promise<unknown>>;
for (const m of ['sign', 'verify', 'digest', 'importKey']) {
  const orig = subtle[m]!;
  subtle[m] = function (this: unknown, ...args: unknown[]) {
    const t0 = performance.now();
    return orig.apply(this, args).finally(() => note(`webcrypto.${m}`, performance.now() - t0));
  };
}
/**
 * The SQLite write lock, as this process holds it: from each BEGIN IMMEDIATE
 * to the COMMIT or ROLLBACK that ends it. Another process's writer waits that
 * long (`--workers`), and nothing is to be hashed inside it (DESIGN "A turn is
 * a pure plan, then one commit").
 */
const lock = { since: undefined as number | undefined, us: 0 };
const nodeCrypto = createRequire(import.meta.url)('node:crypto') as Record<string, (...a: unknown[]) => unknown>;
for (const m of ['createHash', 'hash', 'sign', 'verify']) {
  const orig = nodeCrypto[m]!;
  nodeCrypto[m] = (...args: unknown[]) => (note(lock.since === undefined ? `node:crypto.${m}` : `node:crypto.${m} under the write lock`, 0), orig(...args));
}
syncBuiltinESMExports();

// Entries put in weak collections (the records' caches keyed by object): each costs the collector ephemeron work.
const weakSetAdd = WeakSet.prototype.add;
WeakSet.prototype.add = function (this: WeakSet<object>, value: object) {
  note('WeakSet.add', 0);
  return weakSetAdd.call(this, value);
};
const weakMapSet = WeakMap.prototype.set;
WeakMap.prototype.set = function (this: WeakMap<object, unknown>, key: object, value: unknown) {
  note('WeakMap.set', 0);
  return weakMapSet.call(this, key, value);
};

// Every SQL statement better-sqlite3 executes, by text (issue #24: statements per delegated call).
const sql = new Map<string, { n: number; us: number }>();
const sqlTexts = new Map<string, string>();
const Database = (await import('better-sqlite3')).default;
const stmtProto = Object.getPrototypeOf(new Database(':memory:').prepare('SELECT 1')) as Record<string, (...a: unknown[]) => unknown>;
for (const m of ['run', 'get', 'all', 'iterate']) {
  const orig = stmtProto[m]!;
  stmtProto[m] = function (this: { source: string }, ...args: unknown[]) {
    // Normalised once per statement source: the tally must not add its own allocations to what a call allocates.
    let text = sqlTexts.get(this.source);
    if (text === undefined) sqlTexts.set(this.source, (text = this.source.replace(/\s+/g, ' ').trim().slice(0, 100)));
    let t = sql.get(text);
    if (t === undefined) sql.set(text, (t = { n: 0, us: 0 }));
    t.n++;
    const t0 = performance.now();
    if (text === 'BEGIN IMMEDIATE') lock.since = t0;
    try {
      return orig.apply(this, args);
    } finally {
      const t1 = performance.now();
      t.us += (t1 - t0) * 1000;
      if (lock.since !== undefined && (text === 'COMMIT' || text === 'ROLLBACK')) {
        lock.us += (t1 - lock.since) * 1000;
        lock.since = undefined;
      }
    }
  };
}
const BOOKENDS = /^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/;

const { createServer } = await import('node:http');
const { request } = await import('undici');
const { loadConfig, resolvedPaths } = await import('../src/config.ts');
const { composeGateway } = await import('../src/main.ts');
const { createLogger } = await import('../src/log.ts');
const { Keyring } = await import('../src/keys/keyring.ts');
const { RemoteClient } = await import('../src/gateway/remote.ts');
const { SqliteStore } = await import('../src/store/sqlite/store.ts');
const { batonConfig, startHonestAgent, API_KEY } = await import('./lib/world.ts');
const { cleanupTemp } = await import('./lib/proc.ts');
const { sendMessageBody, completedTask } = await import('./lib/load.ts');

const WRITES = new Set([
  'store.putRecord',
  'store.control.appendControl',
  'store.ledger.openBudget',
  'store.ledger.admit',
  'store.ledger.admitTask',
  'store.ledger.settle',
  'store.ledger.narrow',
  'store.work.claim',
  'store.work.claimIdle',
  'store.work.renew',
  'store.work.release',
  'store.work.done',
]);

/** A proxy that counts and times every method call on `obj` (and on its control/ledger parts). */
function counted<T extends object>(obj: T, prefix: string): T {
  const parts = new Map<PropertyKey, unknown>();
  return new Proxy(obj, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if ((prop === 'control' || prop === 'ledger' || prop === 'work') && v && typeof v === 'object') {
        if (!parts.has(prop)) parts.set(prop, counted(v as object, `${prefix}${String(prop)}.`));
        return parts.get(prop);
      }
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        const t0 = performance.now();
        const r = (v as (...a: unknown[]) => unknown).apply(target, args);
        if (r instanceof Promise) return r.finally(() => note(`${prefix}${String(prop)}`, performance.now() - t0));
        note(`${prefix}${String(prop)}`, performance.now() - t0);
        return r;
      };
    },
  });
}

/**
 * Bytes this process allocates while the measured requests run, freed or not
 * (V8's sampling heap profiler with objects collected by either GC kept),
 * per request, by area and by allocating function: allocation drives the
 * scavenges that cost the main thread and V8's helper threads (issue #24).
 */
async function startAllocationSampling(): Promise<{ stop(requests: number): Promise<unknown> }> {
  const { Session } = await import('node:inspector/promises');
  const { areaOf, keyOf } = await import('./profile.ts');
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  type Node = { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: Node[] };
  return {
    async stop(requests) {
      const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: Node } };
      session.disconnect();
      const byArea = new Map<string, number>();
      const byFunction = new Map<string, number>();
      let total = 0;
      // What the records module (canonical text, digests, parsing) and builtins allocate, charged to the nearest Baton caller outside src/records/.
      const forCaller = new Map<string, number>();
      const visit = (n: Node, caller: string) => {
        total += n.selfSize;
        const area = areaOf(n.callFrame);
        byArea.set(area, (byArea.get(area) ?? 0) + n.selfSize);
        const key = keyOf(n.callFrame).replace('\u0000', ' ');
        byFunction.set(key, (byFunction.get(key) ?? 0) + n.selfSize);
        const own = area.startsWith('src/') && area !== 'src/records/' ? key : caller;
        if (area === 'src/records/' || area === '(native/builtin)') forCaller.set(caller, (forCaller.get(caller) ?? 0) + n.selfSize);
        for (const c of n.children) visit(c, own);
      };
      visit(profile.head, '(none)');
      const kb = (b: number) => Math.round(b / requests / 102.4) / 10;
      const top = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, b]) => `${kb(b)} KB ${k}`);
      return { kbPerRequest: kb(total), byArea: top(byArea, 15), byFunction: top(byFunction, 30), recordsAndBuiltinsByCaller: top(forCaller, 20) };
    },
  };
}

const opts = JSON.parse(process.argv[2] ?? '{}') as { requests?: number; warmup?: number; alloc?: boolean };
const N = opts.requests ?? 50;
const agent = await startHonestAgent();
const { file } = batonConfig(agent, 30);
const config = loadConfig({ file, env: {} });
const store = counted(SqliteStore.open(resolvedPaths(config).sqlite, { create: true }), 'store.');
const keyring = await Keyring.open(resolvedPaths(config).keys);
const server = createServer();
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const remote = new RemoteClient({ limits: config.remote });
const { app } = await composeGateway(config, { store, keyring, publicUrl: url, logger: createLogger({ level: 'warn', destination: process.stderr }), remote });
server.on('request', app);

const body = sendMessageBody('acct');
const check = completedTask({ verified: true });
async function one(): Promise<number> {
  const t0 = performance.now();
  const res = await request(`${url}/agents/honest/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY },
    body: body(),
  });
  const problem = check(res.statusCode, await res.body.text());
  if (problem) throw new Error(problem);
  return performance.now() - t0;
}
try {
  for (let i = 0; i < (opts.warmup ?? 10); i++) await one();
  tally.clear();
  sql.clear();
  lock.us = 0;
  const before = (await agent.log()).counts;
  const sampling = opts.alloc ? await startAllocationSampling() : undefined;
  let wall = 0;
  for (let i = 0; i < N; i++) wall += await one();
  const allocation = sampling ? await sampling.stop(N) : undefined;
  const after = (await agent.log()).counts;
  const per = (x: number) => Math.round((x / N) * 1000) / 1000;
  const rows = [...tally.entries()].map(([k, v]) => ({ call: k, perRequest: per(v.n), msPerRequest: per(v.ms), write: WRITES.has(k) }));
  rows.sort((a, b) => b.msPerRequest - a.msPerRequest);
  const writes = rows.filter((r) => r.write).reduce((a, r) => a + r.perRequest, 0);
  const reads = rows.filter((r) => r.call.startsWith('store.') && !r.write).reduce((a, r) => a + r.perRequest, 0);
  const agentCalls = Object.fromEntries(Object.keys(after).map((k) => [k, per((after[k] ?? 0) - (before[k] ?? 0))]).filter(([, v]) => Number(v) > 0));
  const statements = [...sql].filter(([k]) => !BOOKENDS.test(k));
  const sqlStatementsPerRequest = per(statements.reduce((n, [, v]) => n + v.n, 0));
  const sqlTransactionsPerRequest = per(sql.get('BEGIN IMMEDIATE')?.n ?? 0);
  const sqlByText = statements.sort((a, b) => b[1].n - a[1].n).map(([text, v]) => ({ text, perRequest: per(v.n), usPerRequest: per(v.us) }));
  const sqlUsPerRequest = per([...sql.values()].reduce((a, v) => a + v.us, 0));
  const bookendsUsPerRequest = Object.fromEntries([...sql].filter(([k]) => BOOKENDS.test(k)).map(([k, v]) => [k, per(v.us)]));
  process.stdout.write(
    `${JSON.stringify({ requests: N, wallMsPerRequest: per(wall), writeTransactionsPerRequest: Math.round(writes * 100) / 100, storeReadsPerRequest: Math.round(reads * 100) / 100, sqlStatementsPerRequest, sqlTransactionsPerRequest, sqlUsPerRequest, bookendsUsPerRequest, lockHeldUsPerRequest: per(lock.us), agentCalls, calls: rows, sqlByText, ...(allocation ? { allocation } : {}) })}\n`,
  );
} finally {
  server.closeAllConnections();
  server.close();
  await remote.close();
  await store.close();
  await agent.stop();
  cleanupTemp();
}
process.exit(0);
