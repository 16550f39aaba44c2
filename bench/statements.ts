/**
 * SQL statements per delegated SendMessage on SQLite, in one process:
 *   tsx bench/statements.ts '{"requests":20}'
 * Counts every statement better-sqlite3 runs (by text) and the write
 * transactions (BEGIN IMMEDIATE) while sequential delegated SendMessages go
 * through a gateway composed as src/main.ts composes it, to a real honest agent.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import { request } from 'undici';
import { loadConfig, resolvedPaths } from '../src/config.ts';
import { composeGateway } from '../src/main.ts';
import { createLogger } from '../src/log.ts';
import { Keyring } from '../src/keys/keyring.ts';
import { RemoteClient } from '../src/gateway/remote.ts';
import { SqliteStore } from '../src/store/sqlite/store.ts';
import { batonConfig, startHonestAgent, API_KEY } from './lib/world.ts';
import { cleanupTemp } from './lib/proc.ts';
import { sendMessageBody, completedTask } from './lib/load.ts';

const tally = new Map<string, number>();
let inTx = false;
let counting = false;
const proto = Object.getPrototypeOf(new Database(':memory:').prepare('SELECT 1')) as Record<string, (...a: unknown[]) => unknown>;
for (const m of ['run', 'get', 'all', 'iterate']) {
  const orig = proto[m]!;
  proto[m] = function (this: { source: string }, ...args: unknown[]) {
    const sql = this.source.replace(/\s+/g, ' ').trim();
    if (sql === 'BEGIN IMMEDIATE') inTx = true;
    if (counting) {
      const key = `${inTx ? 'tx ' : 'rd '}${sql.slice(0, 110)}`;
      tally.set(key, (tally.get(key) ?? 0) + 1);
    }
    if (sql === 'COMMIT' || sql === 'ROLLBACK') inTx = false;
    return orig.apply(this, args);
  };
}

const opts = JSON.parse(process.argv[2] ?? '{}') as { requests?: number };
const N = opts.requests ?? 20;
const agent = await startHonestAgent();
const { file } = batonConfig(agent, 3600);
const config = loadConfig({ file, env: {} });
const store = SqliteStore.open(resolvedPaths(config).sqlite, { create: true });
const keyring = await Keyring.open(resolvedPaths(config).keys);
const server = createServer();
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const remote = new RemoteClient({ limits: config.remote });
const { app } = await composeGateway(config, { store, keyring, publicUrl: url, logger: createLogger({ level: 'warn', destination: process.stderr }), remote });
server.on('request', app);
const body = sendMessageBody('stmt');
const check = completedTask({ verified: true });
async function one(): Promise<void> {
  const res = await request(`${url}/agents/honest/a2a/jsonrpc`, { method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY }, body: body() });
  const problem = check(res.statusCode, await res.body.text());
  if (problem) throw new Error(problem);
}
try {
  for (let i = 0; i < 5; i++) await one();
  counting = true;
  for (let i = 0; i < N; i++) await one();
  counting = false;
  const rows = [...tally.entries()].sort((a, b) => b[1] - a[1]);
  let total = 0;
  for (const [k, v] of rows) {
    total += v;
    console.log(`${(v / N).toFixed(2).padStart(6)}  ${k}`);
  }
  console.log(`total ${(total / N).toFixed(2)} statements per request; BEGIN IMMEDIATE ${((tally.get('tx BEGIN IMMEDIATE') ?? 0) / N).toFixed(2)}`);
} finally {
  server.closeAllConnections();
  server.close();
  await remote.close();
  await store.close();
  await agent.stop();
  cleanupTemp();
}
process.exit(0);
