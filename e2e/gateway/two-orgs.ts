/**
 * Two organisations on loopback: org A's Baton delegates to org B's Baton,
 * which delegates to B's agent. Each gateway has its own keys, cards and
 * identity; they share one ledger file, so the root budget A issued is the
 * one both hops debit and a revocation at A fences B's effects too.
 */
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { PgStore } from '../../src/store/postgres/store.ts';
import type { Store } from '../../src/store/port.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { recordingFetch } from './world.ts';
import { spawnAgent, spawnReady, type ReadyProcess, type SpawnedAgent } from '../harness/process.ts';

const BATON_MAIN = fileURLToPath(new URL('../harness/baton-main.ts', import.meta.url));
const CARDS = fileURLToPath(new URL('../../cards/', import.meta.url));
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
export const A_KEY = 'e2e-org-a-caller-key';
export const A_AT_B_KEY = 'e2e-org-a-at-b-key';

export interface TwoOrgs {
  dir: string;
  agent: SpawnedAgent;
  a: ReadyProcess<{ url: string }>;
  /** Every process of org A (`a` first): nodes of one org share its config, keys and store. */
  nodesA: Array<ReadyProcess<{ url: string }>>;
  b: ReadyProcess<{ url: string }>;
  client(): Promise<Client>;
  store(): Promise<Store>;
  /** Every response body org A's caller received (for the leak check). */
  bodies: string[];
  pending: Array<Promise<unknown>>;
  close(): Promise<void>;
}

/** A cards/ directory whose gateway identity is renamed for `org`. */
export function cardsFor(dir: string, org: string): string {
  const out = join(dir, `cards-${org}`);
  cpSync(CARDS, out, { recursive: true });
  const file = join(out, 'gateway.yaml');
  writeFileSync(file, readFileSync(file, 'utf8').replaceAll('baton_gateway', `baton_${org}`));
  return out;
}

async function jwksOf(url: string, file: string): Promise<string> {
  writeFileSync(file, await (await fetch(`${url}/.well-known/jwks.json`)).text());
  return file;
}

export interface TwoOrgsOptions {
  presetA?: Record<string, unknown>;
  pgUrl?: string;
  /** How many gateway processes org A runs on its one config (default 1). */
  nodesA?: number;
  /** More of A's config (e.g. `follow`), merged over the defaults. */
  configA?: Record<string, unknown>;
  /** More of B's config (e.g. `presets`: the one an imported chain is clamped to), merged over the defaults. */
  configB?: Record<string, unknown>;
  /**
   * Something between A and B (e.g. e2e/gateway/reset-proxy.ts): B publishes
   * its URL as its public URL, so every call A makes to B goes through it.
   */
  front?: { url: string; connect(upstream: string): void };
}

export async function startTwoOrgs(opts: TwoOrgsOptions = {}): Promise<TwoOrgs> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-2org-'));
  const ledger = join(dir, 'shared-ledger.db');
  const storeConfig = opts.pgUrl ? { kind: 'postgres', url: opts.pgUrl } : { kind: 'sqlite', path: ledger };
  const agent = await spawnAgent({ name: 'xagent', behaviour: 'honest', stepMs: 20 });
  writeFileSync(join(dir, 'x.jwks.json'), JSON.stringify(agent.jwks));
  for (const org of ['a', 'b']) mkdirSync(join(dir, org));
  const base = (org: string) => ({ port: 0, dataDir: join(dir, org), keysDir: join(dir, org, 'keys'), cardsDir: cardsFor(dir, org), store: storeConfig, spaceId: 'shared', logLevel: 'warn' });

  // B first: A's contract keys are read when A's first request arrives, so the file may come later.
  const aJwks = join(dir, 'a.jwks.json');
  writeFileSync(
    join(dir, 'b.json'),
    JSON.stringify({
      ...base('b'),
      ownerNamespace: 'org_b',
      trust: { pinnedJwks: { [agent.url]: join(dir, 'x.jwks.json') }, jkuAllowedOrigins: [] },
      delegatees: [{ id: 'x', cardUrl: `${agent.url}/.well-known/agent-card.json`, acceptance: { minArtifacts: 1 }, allowHttp: true }],
      callers: [{ id: 'org-a', apiKeySha256: sha256(A_AT_B_KEY), upstream: { actorObjectId: 'actor_baton_a', contractJwksFile: aJwks } }],
      ...(opts.front ? { publicUrl: opts.front.url } : {}),
      ...opts.configB,
    }),
  );
  const b = await spawnReady<{ url: string }>(BATON_MAIN, [join(dir, 'b.json')]);
  opts.front?.connect(b.ready.url);
  const bJwks = await jwksOf(b.ready.url, join(dir, 'b.jwks.json'));
  const bSeen = opts.front?.url ?? b.ready.url;

  writeFileSync(
    join(dir, 'a.json'),
    JSON.stringify({
      ...base('a'),
      ownerNamespace: 'org_a',
      trust: { pinnedJwks: { [bSeen]: bJwks }, jkuAllowedOrigins: [] },
      delegatees: [{ id: 'partner', cardUrl: `${bSeen}/agents/x/.well-known/agent-card.json`, acceptance: { minArtifacts: 1 }, allowHttp: true, auth: { header: 'x-api-key', env: 'BATON_E2E_PARTNER_KEY' } }],
      callers: [{ id: 'planner', apiKeySha256: sha256(A_KEY), preset: 'standard' }],
      presets: [{ id: 'standard', maxInvocations: 5, delegationDepth: 2, ...opts.presetA }],
      ...opts.configA,
    }),
  );
  const envA = { ...process.env, BATON_E2E_PARTNER_KEY: A_AT_B_KEY };
  const a = await spawnReady<{ url: string }>(BATON_MAIN, [join(dir, 'a.json')], envA);
  await jwksOf(a.ready.url, aJwks);
  // Further nodes after the first: it created the keys and the schema they share.
  const nodesA = [a];
  for (let i = 1; i < (opts.nodesA ?? 1); i++) nodesA.push(await spawnReady<{ url: string }>(BATON_MAIN, [join(dir, 'a.json')], envA));

  const bodies: string[] = [];
  const pending: Array<Promise<unknown>> = [];
  const callerFetch = recordingFetch(bodies, pending);
  return {
    bodies,
    pending,
    dir,
    agent,
    a,
    nodesA,
    b,
    async client() {
      const fetchImpl: typeof fetch = (input, init) => callerFetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), 'x-api-key': A_KEY } });
      const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })] }));
      return factory.createFromUrl(`${a.ready.url}/agents/partner/`);
    },
    store: async () => (opts.pgUrl ? PgStore.open(opts.pgUrl, { max: 2 }) : SqliteStore.open(ledger)),
    async close() {
      for (const n of nodesA) await n.stop();
      await b.stop();
      await agent.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
