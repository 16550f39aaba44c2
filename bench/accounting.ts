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
const nodeCrypto = createRequire(import.meta.url)('node:crypto') as Record<string, (...a: unknown[]) => unknown>;
for (const m of ['createHash', 'sign', 'verify']) {
  const orig = nodeCrypto[m]!;
  nodeCrypto[m] = (...args: unknown[]) => (note(`node:crypto.${m}`, 0), orig(...args));
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
const sql = new Map<string, number>();
const Database = (await import('better-sqlite3')).default;
const stmtProto = Object.getPrototypeOf(new Database(':memory:').prepare('SELECT 1')) as Record<string, (...a: unknown[]) => unknown>;
for (const m of ['run', 'get', 'all', 'iterate']) {
  const orig = stmtProto[m]!;
  stmtProto[m] = function (this: { source: string }, ...args: unknown[]) {
    const text = this.source.replace(/\s+/g, ' ').trim().slice(0, 100);
    sql.set(text, (sql.get(text) ?? 0) + 1);
    return orig.apply(this, args);
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

const opts = JSON.parse(process.argv[2] ?? '{}') as { requests?: number; warmup?: number };
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
  const before = (await agent.log()).counts;
  let wall = 0;
  for (let i = 0; i < N; i++) wall += await one();
  const after = (await agent.log()).counts;
  const per = (x: number) => Math.round((x / N) * 1000) / 1000;
  const rows = [...tally.entries()].map(([k, v]) => ({ call: k, perRequest: per(v.n), msPerRequest: per(v.ms), write: WRITES.has(k) }));
  rows.sort((a, b) => b.msPerRequest - a.msPerRequest);
  const writes = rows.filter((r) => r.write).reduce((a, r) => a + r.perRequest, 0);
  const reads = rows.filter((r) => r.call.startsWith('store.') && !r.write).reduce((a, r) => a + r.perRequest, 0);
  const agentCalls = Object.fromEntries(Object.keys(after).map((k) => [k, per((after[k] ?? 0) - (before[k] ?? 0))]).filter(([, v]) => Number(v) > 0));
  const statements = [...sql].filter(([k]) => !BOOKENDS.test(k));
  const sqlStatementsPerRequest = per(statements.reduce((n, [, v]) => n + v, 0));
  const sqlTransactionsPerRequest = per(sql.get('BEGIN IMMEDIATE') ?? 0);
  const sqlByText = statements.sort((a, b) => b[1] - a[1]).map(([text, n]) => ({ text, perRequest: per(n) }));
  process.stdout.write(
    `${JSON.stringify({ requests: N, wallMsPerRequest: per(wall), writeTransactionsPerRequest: Math.round(writes * 100) / 100, storeReadsPerRequest: Math.round(reads * 100) / 100, sqlStatementsPerRequest, sqlTransactionsPerRequest, agentCalls, calls: rows, sqlByText })}\n`,
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
