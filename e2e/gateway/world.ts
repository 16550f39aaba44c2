/**
 * An e2e world: real delegatee agents and a real Baton gateway process on
 * loopback, wired the way an operator would configure them (pinned JWKS per
 * agent origin, API-key callers, owner presets).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory, type Client } from '@a2a-js/sdk/client';
import { spawnAgent, spawnReady, type SpawnAgentOptions, type SpawnedAgent, type ReadyProcess } from '../harness/process.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';

export const BATON_MAIN = fileURLToPath(new URL('../harness/baton-main.ts', import.meta.url));
export const API_KEY = 'e2e-test-key-not-a-secret';

export interface World {
  dir: string;
  /** The config file the gateway process runs with (a restart reuses it). */
  configFile: string;
  agents: Record<string, SpawnedAgent>;
  baton: ReadyProcess<{ url: string; adminUrl?: string }>;
  url: string;
  /** The operator API, when the world configures operators. */
  adminUrl?: string;
  /** An SDK client for /agents/<id>, authenticating with `key`. */
  client(id: string, opts?: { key?: string; transport?: 'JSONRPC' | 'HTTP+JSON' }): Promise<Client>;
  /** A read-only view of the gateway's ledger, opened beside the running process. */
  store(): SqliteStore;
  /** `fetch` as a caller: the response body is recorded for {@link assertNoDownstreamLeaks}. */
  fetch: typeof fetch;
  /** Every response body a caller received through `client()` or `fetch`, in order. */
  bodies: string[];
  /** Reads of recorded bodies still in progress (a stream is recorded once it ends). */
  pending: Array<Promise<unknown>>;
  close(): Promise<void>;
}

export interface WorldOptions {
  agents: Record<string, SpawnAgentOptions>;
  presets?: unknown[];
  /** Extra callers: id → [api key, preset id]. */
  callers?: Record<string, [string, string]>;
  remote?: unknown;
  config?: Record<string, unknown>;
  /** Extra delegatee config per agent id (e.g. `inboundAuth`). */
  delegatees?: Record<string, Record<string, unknown>>;
  /** Extra environment of the gateway's process (e2e/harness/baton-main.ts reads BATON_E2E_*). */
  env?: Record<string, string>;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * A fetch that records every response body it hands back, as it arrives:
 * a stream still open is checked on what it delivered so far.
 */
export function recordingFetch(bodies: string[], pending: Array<Promise<unknown>>, base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const res = await base(input, init);
    const copy = res.clone();
    const at = bodies.push('') - 1;
    const decoder = new TextDecoder();
    const read = async () => {
      if (!copy.body) return;
      for await (const chunk of copy.body as unknown as AsyncIterable<Uint8Array>) bodies[at] += decoder.decode(chunk, { stream: true });
    };
    pending.push(read().catch(() => undefined));
    return res;
  };
}

export async function startWorld(opts: WorldOptions): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-e2e-'));
  const agents: Record<string, SpawnedAgent> = {};
  for (const [id, a] of Object.entries(opts.agents)) agents[id] = await spawnAgent({ name: id, ...a });
  const pinnedJwks: Record<string, string> = {};
  for (const [id, a] of Object.entries(agents)) {
    const file = join(dir, `${id}.jwks.json`);
    writeFileSync(file, JSON.stringify(a.jwks));
    pinnedJwks[a.url] = file;
  }
  const config = {
    port: 0,
    dataDir: dir,
    logLevel: 'warn',
    trust: { pinnedJwks, jkuAllowedOrigins: [] },
    delegatees: Object.entries(agents).map(([id, a]) => ({ id, cardUrl: `${a.url}/.well-known/agent-card.json`, acceptance: { minArtifacts: 1 }, allowHttp: true, ...opts.delegatees?.[id] })),
    callers: [
      { id: 'planner', apiKeySha256: sha256(API_KEY), preset: 'standard' },
      ...Object.entries(opts.callers ?? {}).map(([id, [key, preset]]) => ({ id, apiKeySha256: sha256(key), preset })),
    ],
    presets: opts.presets ?? [{ id: 'standard', maxInvocations: 5 }],
    ...(opts.remote ? { remote: opts.remote } : {}),
    ...opts.config,
  };
  const configFile = join(dir, 'baton.json');
  writeFileSync(configFile, JSON.stringify(config));
  const baton = await spawnReady<{ url: string; adminUrl?: string }>(BATON_MAIN, [configFile], opts.env);
  const url = baton.ready.url;
  const bodies: string[] = [];
  const pending: Array<Promise<unknown>> = [];
  const callerFetch = recordingFetch(bodies, pending);
  return {
    bodies,
    pending,
    fetch: callerFetch,
    dir,
    configFile,
    agents,
    baton,
    url,
    ...(baton.ready.adminUrl ? { adminUrl: baton.ready.adminUrl } : {}),
    async client(id, o = {}) {
      const key = o.key ?? API_KEY;
      const fetchImpl: typeof fetch = (input, init) => callerFetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), 'x-api-key': key } });
      const factory = new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
          transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
          preferredTransports: [o.transport ?? 'JSONRPC'],
        }),
      );
      return factory.createFromUrl(`${url}/agents/${id}/`);
    },
    store: () => SqliteStore.open(join(dir, 'baton.db')),
    async close() {
      await baton.stop();
      await Promise.all(Object.values(agents).map((a) => a.stop()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
