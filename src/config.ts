/**
 * Gateway configuration: one zod schema, read once at boot from an optional
 * JSON/YAML file, then overridden by BATON_* environment variables. Every
 * default is the embedded, single-machine setup the README's quick start uses.
 */
import { AuthThrottleConfig } from './http/auth-throttle.ts';
import { readFileSync, existsSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { CallerConfig, JwtConfig } from './gateway/callers.ts';
import { DelegateeConfig } from './gateway/delegatees.ts';
import { McpServerConfig } from './mcp/config.ts';
import { ApprovalsConfig } from './gates/policy.ts';
import { GatewayPresetConfig } from './contracts/machine-preset.ts';
import { DEFAULT_FOLLOW } from './gateway/path/deps.ts';
import { AdminConfig, OperatorConfig } from './operator/identity.ts';
import { BREAKER_TRIGGERS, DEFAULT_BREAKER_POLICY } from './control/breaker.ts';
import { MetricsConfig, TracingConfig } from './telemetry/config.ts';
import { RetentionConfig } from './retention/purge.ts';

export const Config = z.strictObject({
  /** Address to listen on. Loopback by default: exposing a gateway is a decision. */
  host: z.string().default('127.0.0.1'),
  port: z.coerce.number().int().min(0).max(65535).default(8080),
  /** Public base URL written into cards (supportedInterfaces, jku). */
  publicUrl: z.url().optional(),
  dataDir: z.string().default('./data'),
  /** Card sources; without `./cards` in the working directory, the example card shipped in the package (README "Production build and packaging"). */
  cardsDir: z.string().default(defaultCardsDir),
  wellKnownDir: z.string().default('./well-known'),
  keysDir: z.string().optional(),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  store: z
    .discriminatedUnion('kind', [
      z.strictObject({ kind: z.literal('sqlite'), path: z.string().optional() }),
      // preparedStatements: off only behind a pooler that cannot keep them (src/store/postgres/prepared.ts);
      // analyzeEvery: committed transactions between checks for tables that outgrew their statistics, 0 off (statistics.ts).
      z.strictObject({ kind: z.literal('postgres'), url: z.string().min(1), preparedStatements: z.boolean().optional(), analyzeEvery: z.number().int().min(0).optional() }),
    ])
    .default({ kind: 'sqlite' }),
  /** Remote card verification (RW-003 §4, A2A §8.4). */
  trust: z
    .strictObject({
      /** origin → path of a pinned JWKS file for that origin. */
      pinnedJwks: z.record(z.string(), z.string()).default({}),
      /** Origins whose `jku` header may be followed to fetch keys. Never any other. */
      jkuAllowedOrigins: z.array(z.string()).default([]),
    })
    .default({ pinnedJwks: {}, jkuAllowedOrigins: [] }),
  /** RW-003 §1.2 control-plane space this gateway's streams live in. */
  spaceId: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/).default('default'),
  /** ADR-0014 owner namespace (capacity limits apply per namespace). */
  ownerNamespace: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/).default('local'),
  /** Remote agents Baton delegates to, each served at /agents/<id>. */
  delegatees: z.array(DelegateeConfig).default([]),
  /** MCP servers Baton fronts at /mcp/<id> (src/mcp, README "Putting an MCP server behind Baton"). */
  mcpServers: z.array(McpServerConfig).max(64).default([]),
  /** Who may call the front door, and from which preset their authority is issued. */
  callers: z.array(CallerConfig).default([]),
  jwt: JwtConfig.optional(),
  /** Separate-store gateway-to-gateway delegation (issue #16): what this gateway states to its downstreams. */
  federation: z
    .strictObject({
      /** The head-statement staleness downstreams may accept (stated in every statement; 0: fetch per effect). */
      servedStalenessMs: z.number().int().nonnegative().max(60_000).default(0),
      /** Bound on one head-statement fetch from an upstream. */
      timeoutMs: z.number().int().min(100).max(60_000).default(5_000),
    })
    .prefault({}),
  presets: z.array(GatewayPresetConfig).default(() => [GatewayPresetConfig.parse({ id: 'standard' })]),
  /** How often running attempts are checked against their fences (revocation propagation). */
  revocationSweepMs: z.number().int().min(50).max(60_000).default(500),
  /** Who may use the operator API (separate listener, see `admin`). Without operators it is not started. */
  operators: z.array(OperatorConfig).default([]),
  admin: AdminConfig.prefault({}),
  /** Failed credentials per source before it is refused for a while (src/http/auth-throttle.ts). */
  authThrottle: AuthThrottleConfig,
  /** Prometheus metrics on the operator listener (src/telemetry/metrics.ts). */
  metrics: MetricsConfig,
  /** OpenTelemetry tracing with an OTLP exporter; off by default (src/telemetry/tracing.ts). */
  tracing: TracingConfig,
  /** Human authority gates (RW-003 §6 T3/T4): which effects need a named approver, and who may approve. */
  approvals: ApprovalsConfig.prefault({}),
  /** Automatic circuit breakers (RW-003 §7.3); an operator can always trip and reset by hand. */
  breakers: z
    .strictObject({
      triggers: z.array(z.enum(BREAKER_TRIGGERS)).default([...DEFAULT_BREAKER_POLICY.triggers]),
      repeatedFailures: z.number().int().min(1).max(1000).default(DEFAULT_BREAKER_POLICY.repeatedFailures),
      staleInputs: z.number().int().min(1).max(1000).default(DEFAULT_BREAKER_POLICY.staleInputs),
    })
    .prefault({}),
  /** Push notifications: integrators' webhooks and the outbox (A2A push-config operations). */
  push: z
    .strictObject({
      enabled: z.boolean().default(true),
      /** Plain http:// webhooks. Off by default: deliveries carry outcomes and credentials. */
      allowHttp: z.boolean().default(false),
      /** CIDRs re-admitted although private, loopback or link-local (e.g. "127.0.0.0/8" in tests). */
      allowAddresses: z.array(z.string().min(1)).default([]),
      maxAttempts: z.number().int().min(1).max(100).default(8),
      backoffBaseMs: z.number().int().min(10).default(1_000),
      backoffMaxMs: z.number().int().min(10).default(300_000),
      deliveryTimeoutMs: z.number().int().min(100).max(120_000).default(10_000),
      /** How often the outbox looks for due deliveries when not nudged. */
      intervalMs: z.number().int().min(20).default(1_000),
      /**
       * No longer used: every open task is followed to its verdict by the durable
       * follower (`follow.*`). Still accepted so existing configurations load.
       */
      pollMs: z.number().int().min(100).optional(),
      maxConfigsPerTask: z.number().int().min(1).max(100).default(10),
    })
    // prefault, not default: `{}` is parsed through the object, so the field defaults above are the only ones.
    .prefault({}),
  /**
   * Following admitted effects to their verdict (the durable work queue):
   * leases, how long a blocking SendMessage waits at Baton, and the bound
   * after which an effect without a terminal state is recorded as unknown.
   */
  follow: z
    .strictObject({
      leaseMs: z.number().int().min(1_000).max(600_000).default(DEFAULT_FOLLOW.leaseMs),
      blockingWaitMs: z.number().int().min(100).max(3_600_000).default(DEFAULT_FOLLOW.blockingWaitMs),
      maxFollowMs: z.number().int().min(1_000).max(7 * 24 * 3_600_000).default(DEFAULT_FOLLOW.maxFollowMs),
      pollMinMs: z.number().int().min(1).max(60_000).default(DEFAULT_FOLLOW.pollMinMs),
      pollMaxMs: z.number().int().min(10).max(600_000).default(DEFAULT_FOLLOW.pollMaxMs),
      tickMs: z.number().int().min(20).max(60_000).default(DEFAULT_FOLLOW.tickMs),
      recordTaskAfterMs: z.number().int().min(0).max(600_000).default(DEFAULT_FOLLOW.recordTaskAfterMs),
    })
    .prefault({}),
  /** Time limits for calls to delegatees. */
  remote: z
    .strictObject({
      headersTimeoutMs: z.number().int().min(100).default(10_000),
      bodyTimeoutMs: z.number().int().min(100).default(30_000),
      streamIdleMs: z.number().int().min(100).default(300_000),
      /** Overall deadline of one non-streaming call (headers and whole body). */
      callDeadlineMs: z.number().int().min(100).max(3_600_000).default(60_000),
      /** Largest JSON answer read from a delegatee; a larger one is an uncertain effect, followed (issue #25 item 17). */
      maxResponseBytes: z.number().int().min(64 * 1024).max(64 * 1024 * 1024).default(4 * 1024 * 1024),
      /** Bounds of one streamed turn; past either the stream is closed and the turn is `unknown` (issue #25 item 15). */
      maxTurnEvents: z.number().int().min(1).max(1_000_000).default(10_000),
      maxTurnBytes: z.number().int().min(64 * 1024).max(1024 * 1024 * 1024).default(32 * 1024 * 1024),
      /** Idle connections to delegatees are closed after this, before the delegatee's own idle timeout closes them under a request. */
      keepAliveMs: z.number().int().min(100).max(600_000).default(4_000),
    })
    .prefault({}),
  /** Time limits on the public listener (and the operator API's): slow or idle clients cannot hold sockets. */
  server: z
    .strictObject({
      /** Until the request headers are complete. */
      headersTimeoutMs: z.number().int().min(100).max(600_000).default(10_000),
      /** Until the whole request (headers and body) has arrived. */
      requestTimeoutMs: z.number().int().min(100).max(3_600_000).default(30_000),
      /** How long an idle keep-alive connection stays open. */
      keepAliveTimeoutMs: z.number().int().min(100).max(600_000).default(5_000),
    })
    .prefault({}),
  /** Data retention (README "Data retention"): message and task-view content older than contentDays is purged. */
  retention: RetentionConfig.prefault({}),
  /** SIGTERM/SIGINT: how long in-flight requests may finish before connections and upstream calls are cut. */
  shutdown: z.strictObject({ drainMs: z.number().int().min(0).max(600_000).default(10_000) }).prefault({}),
});
export type Config = z.infer<typeof Config>;

const ENV: Record<string, (c: Record<string, unknown>, v: string) => void> = {
  BATON_HOST: (c, v) => (c.host = v),
  BATON_PORT: (c, v) => (c.port = v),
  BATON_ADMIN_PORT: (c, v) => (c.admin = { ...{}, ...((c.admin as object | undefined) ?? {}), port: v }),
  BATON_PUBLIC_URL: (c, v) => (c.publicUrl = v),
  BATON_DATA_DIR: (c, v) => (c.dataDir = v),
  BATON_CARDS_DIR: (c, v) => (c.cardsDir = v),
  BATON_WELL_KNOWN_DIR: (c, v) => (c.wellKnownDir = v),
  BATON_KEYS_DIR: (c, v) => (c.keysDir = v),
  BATON_LOG_LEVEL: (c, v) => (c.logLevel = v),
  BATON_SQLITE_PATH: (c, v) => (c.store = { kind: 'sqlite', path: v }),
  BATON_PG_URL: (c, v) => (c.store = { kind: 'postgres', url: v }),
};

/** One way a configuration is wrong: where (a dotted path) and what. */
export interface ConfigIssue {
  path: string;
  message: string;
}

export type ConfigResult = { ok: true; config: Config; file?: string } | { ok: false; issues: ConfigIssue[]; file?: string };

/** Reads the config file (if any) and the environment; throws TypeError with every problem. */
export function loadConfig(opts: { file?: string; env?: NodeJS.ProcessEnv } = {}): Config {
  const r = readConfig(opts);
  if (r.ok) return r.config;
  const lines = r.issues.map((i) => `  ${i.path}: ${i.message}`);
  throw new TypeError(`invalid configuration${r.file ? ` in ${r.file}` : ''}:\n${lines.join('\n')}`);
}

/** Like loadConfig, but returns the problems instead of throwing (for `baton config check`). */
export function readConfig(opts: { file?: string; env?: NodeJS.ProcessEnv } = {}): ConfigResult {
  const env = opts.env ?? process.env;
  // BATON_CONFIG='' means "no file", not the default one.
  const file = (opts.file ?? env.BATON_CONFIG ?? (existsSync('baton.config.yaml') ? 'baton.config.yaml' : undefined)) || undefined;
  let raw: Record<string, unknown> = {};
  if (file) {
    try {
      raw = resolveFilePaths(readConfigFile(file), dirname(resolve(file)));
    } catch (err) {
      return { ok: false, file, issues: [{ path: '(file)', message: err instanceof Error ? err.message : String(err) }] };
    }
  }
  for (const [name, apply] of Object.entries(ENV)) {
    const v = env[name];
    if (v !== undefined && v !== '') apply(raw, v);
  }
  const parsed = Config.safeParse(raw);
  if (parsed.success) return { ok: true, config: parsed.data, ...(file ? { file } : {}) };
  return { ok: false, ...(file ? { file } : {}), issues: parsed.error.issues.map((i) => ({ path: issuePath(i), message: i.message })) };
}

function issuePath(i: z.core.$ZodIssue): string {
  const base = i.path.map((k, n) => (typeof k === 'number' ? `[${k}]` : `${n === 0 ? '' : '.'}${String(k)}`)).join('');
  // An unknown key is reported on its parent object; name the key itself.
  if (i.code === 'unrecognized_keys') return i.keys.map((k) => (base ? `${base}.${k}` : k)).join(', ');
  return base || '(root)';
}

function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(resolve(file), 'utf8');
  } catch (err) {
    throw new TypeError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  }
  let value: unknown;
  try {
    value = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch {
    // Not the parser's message: it quotes the offending line, which may hold a secret.
    throw new TypeError(`${file} is not valid ${file.endsWith('.json') ? 'JSON' : 'YAML'}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TypeError(`${file}: expected a mapping`);
  return value as Record<string, unknown>;
}

/**
 * Relative paths written in a config file mean "next to this file", wherever
 * Baton is started from (environment variables and defaults stay relative to
 * the working directory).
 */
function resolveFilePaths(raw: Record<string, unknown>, base: string): Record<string, unknown> {
  const fix = (v: unknown) => (typeof v === 'string' && v !== '' && !isAbsolute(v) ? resolve(base, v) : v);
  const obj = (v: unknown): Record<string, unknown> | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
  for (const k of ['dataDir', 'cardsDir', 'wellKnownDir', 'keysDir']) if (k in raw) raw[k] = fix(raw[k]);
  const store = obj(raw.store);
  if (store && store.kind === 'sqlite' && 'path' in store) store.path = fix(store.path);
  const pinned = obj(obj(raw.trust)?.pinnedJwks);
  if (pinned) for (const k of Object.keys(pinned)) pinned[k] = fix(pinned[k]);
  const jwt = obj(raw.jwt);
  if (jwt && 'jwksFile' in jwt) jwt.jwksFile = fix(jwt.jwksFile);
  for (const c of Array.isArray(raw.callers) ? raw.callers : []) {
    const up = obj(obj(c)?.upstream);
    if (up && 'contractJwksFile' in up) up.contractJwksFile = fix(up.contractJwksFile);
    for (const a of Array.isArray(up?.ancestors) ? up.ancestors : []) if (obj(a) && 'contractJwksFile' in a) a.contractJwksFile = fix(a.contractJwksFile);
  }
  return raw;
}

/**
 * `./cards` when the working directory has one (a checkout), else the
 * package's own `cards/` (src/ and dist/ both sit one level below it): the
 * tarball recipe's `baton serve` then starts as written (issue #25 item 10).
 */
function defaultCardsDir(): string {
  return existsSync(resolve('cards')) ? './cards' : fileURLToPath(new URL('../cards', import.meta.url));
}

/** Where derived paths land when the config leaves them out. */
export function resolvedPaths(config: Config): { sqlite: string; keys: string } {
  return {
    sqlite: config.store.kind === 'sqlite' && config.store.path ? config.store.path : resolve(config.dataDir, 'baton.db'),
    keys: config.keysDir ?? resolve(config.dataDir, 'keys'),
  };
}
