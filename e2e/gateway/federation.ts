/**
 * Organisations that share nothing but keys and URLs (issue #16): each Baton
 * has its own store (its own SQLite file, or its own PostgreSQL schema), its
 * own space, owner namespace, keys and cards. Org 0 issues root authority to
 * its caller; every next org lists the previous one as an upstream (pinned
 * contract JWKS, head-statement URL, credential from the environment); the
 * last org delegates to a real SDK agent.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { PgStore } from '../../src/store/postgres/store.ts';
import type { Store } from '../../src/store/port.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { freePort } from '../harness/net.ts';
import { startHeadsProxy, type HeadsProxy } from './heads-proxy.ts';
import { cardsFor } from './two-orgs.ts';
import { spawnAgent, spawnReady, type ReadyProcess, type SpawnedAgent } from '../harness/process.ts';

const BATON_MAIN = fileURLToPath(new URL('../harness/baton-main.ts', import.meta.url));
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
export const CALLER_KEY = 'e2e-fed-caller-key';
/** Test credentials, one per direction and hop (never in a config file: only their sha256 is). */
export const forwardKey = (from: string, to: string) => `e2e-fed-${from}-at-${to}-forward`;
export const headsKey = (from: string, to: string) => `e2e-fed-${from}-at-${to}-heads`;

export interface Org {
  name: string;
  dir: string;
  url: string;
  config: string;
  proc: ReadyProcess<{ url: string }>;
  store(): Promise<Store>;
  /** Stops the process (A down), keeping its store; `start` brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

export interface Federation {
  dir: string;
  agent: SpawnedAgent;
  orgs: Org[];
  /** By downstream org name: the hop its head statements come through (b → A's statements). */
  proxies: Record<string, HeadsProxy>;
  client(): Promise<Client>;
  close(): Promise<void>;
}

export interface FederationOptions {
  /** 2 or 3 organisations. */
  hops?: number;
  /** Org indexes whose store is PostgreSQL (each in its own schema url). */
  pgUrls?: Record<number, string>;
  presetA?: Record<string, unknown>;
  /** Further callers of org i (e.g. a second upstream organisation). */
  extraCallers?: Record<number, Array<Record<string, unknown>>>;
  /** Fields of the local preset every org below A clamps imported chains to. */
  presetBelow?: Record<string, unknown>;
  agentStepMs?: number;
  /** Extra fields on the upstream entry of org i (i ≥ 1). */
  upstream?: Record<string, unknown>;
  /** Extra top-level config for every org (e.g. `revocationSweepMs`). */
  config?: Record<string, unknown>;
  /**
   * An MCP server behind the last org (issue #26): it fronts the server at /mcp/notes; every org above fronts the
   * next org's /mcp/notes under the same id, identified by that org's signed MCP card; org A's preset may call
   * `notes/create_note` (read back through `get_note`, which each upstream may call at the next org on its own preset).
   */
  mcpUrl?: string;
}

/** The operator-attested identity of the MCP server at the end of the chain (it has no card). */
const NOTES_FACTS = {
  attested_by: 'principal_baton_operator',
  agent_actor_ref: { object_id: 'actor_notes', revision_id: 'rev_1', content_digest: `sha256:${sha256('notes')}` },
  accountable_operator: { operator_principal_ref: 'principal_notes_vendor', resolution: 'declared', evidence_ref: 'contract_2026_077', effective_from: '2026-01-01T00:00:00Z' },
};
const NOTES_TOOLS = [
  { name: 'create_note', requireApproval: false, readRoute: { tool: 'get_note', arguments: { id: '$.result.structuredContent.id' }, expect: { 'structuredContent.title': '$.arguments.title' } } },
  { name: 'get_note' },
  { name: 'slow', requireApproval: false },
];

export async function startFederation(opts: FederationOptions = {}): Promise<Federation> {
  const hops = opts.hops ?? 2;
  const names = ['a', 'b', 'c'].slice(0, hops);
  const dir = mkdtempSync(join(tmpdir(), 'wt16-fed-'));
  const agent = await spawnAgent({ name: 'xagent', behaviour: 'honest', stepMs: opts.agentStepMs ?? 20 });
  writeFileSync(join(dir, 'x.jwks.json'), JSON.stringify(agent.jwks));
  const ports = await Promise.all(names.map(() => freePort()));
  const urlOf = (i: number) => `http://127.0.0.1:${ports[i]}`;
  const env: Record<string, string> = {};
  const orgs: Org[] = [];
  const proxies: Record<string, HeadsProxy> = {};
  for (let i = 1; i < hops; i++) proxies[names[i]!] = await startHeadsProxy(() => urlOf(i - 1));

  // Last org first: each org verifies the next one's card when it starts serving.
  for (let i = hops - 1; i >= 0; i--) {
    const name = names[i]!;
    const odir = join(dir, name);
    mkdirSync(odir);
    const storePath = join(odir, 'store.db');
    const pg = opts.pgUrls?.[i];
    const next = i + 1 < hops ? names[i + 1]! : undefined;
    const prev = i > 0 ? names[i - 1]! : undefined;
    const delegatee = next
      ? { id: 'partner', cardUrl: `${urlOf(i + 1)}/agents/${i + 1 === hops - 1 ? 'x' : 'partner'}/.well-known/agent-card.json`, acceptance: { minArtifacts: 1 }, allowHttp: true, auth: { header: 'x-api-key', env: `E2E_FWD_${name.toUpperCase()}` } }
      : { id: 'x', cardUrl: `${agent.url}/.well-known/agent-card.json`, acceptance: { minArtifacts: 1 }, allowHttp: true };
    if (next) env[`E2E_FWD_${name.toUpperCase()}`] = forwardKey(name, next);
    if (prev) env[`E2E_HEADS_${name.toUpperCase()}`] = headsKey(name, prev);
    const callers: Record<string, unknown>[] = [];
    if (i === 0) callers.push({ id: 'planner', apiKeySha256: sha256(CALLER_KEY), preset: 'standard' });
    if (prev) {
      callers.push({
        id: `org-${prev}`,
        apiKeySha256: sha256(forwardKey(prev, name)),
        // The upstream's read routes are its own calls here (read-only), on a local preset naming only the read tool.
        ...(opts.mcpUrl ? { preset: 'reads' } : {}),
        upstream: {
          actorObjectId: `actor_baton_${prev}`,
          contractJwksFile: join(dir, `${prev}.jwks.json`),
          headsUrl: `${proxies[name]!.url}/federation/v1/heads`,
          // The owner whose chains this upstream presents (always org a's: the root's), and the local bounds they are clamped to.
          ownerNamespace: 'org_a',
          spaceId: 'space_a',
          preset: 'from-upstream',
          ...(i > 1 ? { ancestors: names.slice(0, i - 1).map((n) => ({ actorObjectId: `actor_baton_${n}`, contractJwksFile: join(dir, `${n}.jwks.json`) })) } : {}),
          auth: { header: 'x-api-key', env: `E2E_HEADS_${name.toUpperCase()}` },
          ...opts.upstream,
        },
      });
    }
    callers.push(...(opts.extraCallers?.[i] ?? []));
    // The downstream gateway fetches head statements with its own credential.
    if (next) callers.push({ id: `org-${next}-heads`, apiKeySha256: sha256(headsKey(next, name)), downstream: { actorObjectId: `actor_baton_${next}`, notifyUrl: `${urlOf(i + 1)}/federation/v1/notify`, contractJwksFile: join(dir, `${next}.jwks.json`) } });
    const pinned: Record<string, string> = next ? { [urlOf(i + 1)]: join(dir, `${next}.jwks.json`) } : { [agent.url]: join(dir, 'x.jwks.json') };
    const config = join(dir, `${name}.json`);
    writeFileSync(
      config,
      JSON.stringify({
        port: ports[i],
        dataDir: odir,
        keysDir: join(odir, 'keys'),
        cardsDir: cardsFor(dir, name),
        store: pg ? { kind: 'postgres', url: pg } : { kind: 'sqlite', path: storePath },
        spaceId: `space_${name}`,
        ownerNamespace: `org_${name}`,
        logLevel: 'warn',
        // Refusals are provoked on purpose here; automatic breakers would trip and refuse the next tests' calls first.
        breakers: { repeatedFailures: 1000, staleInputs: 1000 },
        // A test may hold a statement while it runs the CLI at the upstream (seconds on a loaded machine).
        federation: { timeoutMs: 30_000 },
        trust: { pinnedJwks: pinned, jkuAllowedOrigins: [] },
        delegatees: [delegatee],
        callers,
        // Below A, the chain is clamped to a local preset: its depth must leave room for the hops still below (issue 25).
        presets: [
          ...(i === 0 ? [{ id: 'standard', maxInvocations: 5, delegationDepth: 3, ...(opts.mcpUrl ? { tools: ['notes/create_note', 'notes/slow'] } : {}), ...opts.presetA }] : [{ id: 'from-upstream', delegationDepth: hops - i, ...opts.presetBelow }]),
          ...(opts.mcpUrl && i > 0 ? [{ id: 'reads', tools: ['notes/get_note'] }] : []),
        ],
        ...(opts.mcpUrl
          ? {
              mcpServers: [
                next
                  ? { id: 'notes', url: `${urlOf(i + 1)}/mcp/notes`, cardUrl: `${urlOf(i + 1)}/mcp/notes/.well-known/agent-card.json`, allowHttp: true, auth: { header: 'x-api-key', env: `E2E_FWD_${name.toUpperCase()}` }, tools: NOTES_TOOLS }
                  : { id: 'notes', url: opts.mcpUrl, allowHttp: true, rw003: NOTES_FACTS, tools: NOTES_TOOLS },
              ],
            }
          : {}),
        ...opts.config,
      }),
    );
    // Three gateways and an agent start on a shared, loaded machine: allow each one a minute to come up.
    const spawnOrg = () => spawnReady<{ url: string }>(BATON_MAIN, [config], env, { timeoutMs: 60_000 });
    const org: Org = {
      name,
      dir: odir,
      url: urlOf(i),
      config,
      proc: await spawnOrg(),
      store: async () => (pg ? PgStore.open(pg, { max: 2 }) : SqliteStore.open(storePath)),
      async stop() {
        await org.proc.stop();
      },
      async start() {
        org.proc = await spawnOrg();
      },
    };
    writeFileSync(join(dir, `${name}.jwks.json`), await (await fetch(`${org.url}/.well-known/jwks.json`)).text());
    orgs.unshift(org);
  }

  return {
    dir,
    agent,
    orgs,
    proxies,
    async client() {
      const fetchImpl: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), 'x-api-key': CALLER_KEY } });
      const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })] }));
      return factory.createFromUrl(`${orgs[0]!.url}/agents/partner/`);
    },
    async close() {
      for (const o of orgs) await o.proc.stop();
      for (const p of Object.values(proxies)) await p.close();
      await agent.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
