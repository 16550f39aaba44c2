import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Behaviour } from '../agents/agent.ts';
import type { TestLogJson } from '../agents/testlog.ts';
import type { PushMode } from '../agents/push.ts';
import type { DeliveriesJson } from '../integrator/receiver.ts';

/** Repo root: `--import tsx` is resolved against the child's cwd, so it must see node_modules. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const AGENT_MAIN = fileURLToPath(new URL('../agents/main.ts', import.meta.url));
const INTEGRATOR_MAIN = fileURLToPath(new URL('../integrator/main.ts', import.meta.url));
const STDERR_TAIL = 4_000;

/** Options for {@link spawnReady}. */
export interface SpawnReadyOptions {
  /** How long to wait for the ready line (default 20 s). */
  timeoutMs?: number;
  /** Grace period between SIGTERM and SIGKILL in stop() (default 5 s). */
  stopGraceMs?: number;
}

/** A child that printed its ready line. */
export interface ReadyProcess<T = Record<string, unknown>> {
  /** The parsed first stdout line. */
  ready: T;
  pid: number;
  /** SIGTERM, then SIGKILL after the grace period; resolves once the process has exited. Idempotent. */
  stop(): Promise<void>;
  /** SIGKILL now (simulates a crash); resolves once the process has exited. */
  kill9(): Promise<void>;
  /** The last few KB of stderr, for diagnostics. */
  stderrTail(): string;
  /** Resolves with the next JSON stdout line after the ready line that `match` accepts (lines before this call are not seen). */
  nextLine(match: (msg: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  /** Settles with the exit code/signal when the process ends. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

// Every live child, so a crashing or forgetful test run still leaves no orphans behind.
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

/** Stops every process started by this module that is still running. For afterAll safety nets. */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((c) => terminate(c, 'SIGTERM', 5_000)));
}

const hasExited = (c: ChildProcess): boolean => c.exitCode !== null || c.signalCode !== null;

function terminate(c: ChildProcess, signal: NodeJS.Signals, graceMs: number): Promise<void> {
  if (hasExited(c)) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => c.kill('SIGKILL'), graceMs);
    c.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    c.kill(signal);
  });
}

/**
 * Runs `file` with `node --import tsx` and resolves once it prints its first stdout line,
 * which must be a JSON object. Rejects (and kills the child) on timeout, early exit or a
 * non-JSON line, quoting the stderr tail. stdin stays an open pipe so children may watch it
 * to notice a dead parent.
 */
export function spawnReady<T = Record<string, unknown>>(
  file: string,
  args: readonly string[] = [],
  env: Record<string, string | undefined> = {},
  options: SpawnReadyOptions = {},
): Promise<ReadyProcess<T>> {
  const { timeoutMs = 20_000, stopGraceMs = 5_000 } = options;
  const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  live.add(child);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
  });
  const lines = createInterface({ input: child.stdout });

  return new Promise<ReadyProcess<T>>((resolve, reject) => {
    let settled = false;
    const fail = (why: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${file}: ${why}\n--- stderr tail ---\n${stderr}`));
    };
    const timer = setTimeout(() => fail(`no ready line within ${timeoutMs} ms`), timeoutMs);
    child.once('error', (err) => fail(`spawn failed: ${err.message}`));
    void exited.then(({ code, signal }) => fail(`exited before ready (code ${code}, signal ${signal})`));
    lines.once('line', (line) => {
      let ready: T;
      try {
        ready = JSON.parse(line) as T;
      } catch {
        return fail(`first stdout line is not JSON: ${line.slice(0, 200)}`);
      }
      if (typeof ready !== 'object' || ready === null) return fail(`ready line is not an object: ${line}`);
      settled = true;
      clearTimeout(timer);
      // Keep draining stdout so a chatty child never blocks on a full pipe; later JSON lines go to nextLine waiters.
      const waiters = new Set<{ match: (msg: Record<string, unknown>) => boolean; resolve: (msg: Record<string, unknown>) => void }>();
      lines.on('line', (line) => {
        let msg: unknown;
        try {
          msg = JSON.parse(line);
        } catch {
          return;
        }
        if (typeof msg !== 'object' || msg === null) return;
        for (const w of waiters) {
          if (w.match(msg as Record<string, unknown>)) {
            waiters.delete(w);
            w.resolve(msg as Record<string, unknown>);
          }
        }
      });
      const nextLine = (match: (msg: Record<string, unknown>) => boolean) =>
        new Promise<Record<string, unknown>>((res, rej) => {
          waiters.add({ match, resolve: res });
          void exited.then(({ code, signal }) => rej(new Error(`${file} exited (code ${code}, signal ${signal}) while a line was awaited\n${stderr}`)));
        });
      resolve({
        ready,
        pid: child.pid ?? -1,
        stop: () => terminate(child, 'SIGTERM', stopGraceMs),
        kill9: () => terminate(child, 'SIGKILL', 0),
        stderrTail: () => stderr,
        nextLine,
        exited,
      });
    });
  });
}

/** Options for {@link spawnAgent}; mirrors the flags of `e2e/agents/main.ts`. */
export interface SpawnAgentOptions {
  behaviour: Behaviour;
  name?: string;
  port?: number;
  stepMs?: number;
  requireExtension?: string;
  /** `--declare-extension`: the card declares the URI, not required, without params. */
  declareExtension?: string;
  lieState?: 'failed' | 'working';
  /** `--push-mode` (default `token`): token | jwt | forge | replay | drop. */
  pushMode?: PushMode;
  /** `--push-jwt`: attach the Bearer JWT in any push mode, not only `jwt`. */
  pushJwt?: boolean;
  /** `--card`: rw003 (default) | plain (signed, no RW-003 extension) | unsigned. */
  card?: 'rw003' | 'plain' | 'unsigned';
  /** `--protocol`: 1.0 (default) | 0.3. */
  protocol?: '1.0' | '0.3';
}

/** A delegatee agent running in its own OS process. */
export interface SpawnedAgent {
  /** Base URL (`http://127.0.0.1:PORT`); pass to `ClientFactory.createFromUrl`. */
  url: string;
  name: string;
  /** The JWKS that verifies the agent's signed card. */
  jwks: { keys: Array<Record<string, unknown>> };
  pid: number;
  stop(): Promise<void>;
  kill9(): Promise<void>;
  /** Fetches the agent's request log from `GET /_test/log`. */
  log(): Promise<TestLogJson>;
  /** Resolves once a "wait for release" task is held at the agent (`GET /_test/held`). */
  held(): Promise<void>;
  /** Lets every held task complete; resolves to how many were held. */
  release(): Promise<number>;
}

/** Starts `e2e/agents/main.ts` with the given behaviour as a child process. */
export async function spawnAgent(opts: SpawnAgentOptions): Promise<SpawnedAgent> {
  const flags = ['--behaviour', opts.behaviour, '--watch-stdin'];
  if (opts.name !== undefined) flags.push('--name', opts.name);
  if (opts.port !== undefined) flags.push('--port', String(opts.port));
  if (opts.stepMs !== undefined) flags.push('--step-ms', String(opts.stepMs));
  if (opts.requireExtension !== undefined) flags.push('--require-extension', opts.requireExtension);
  if (opts.declareExtension !== undefined) flags.push('--declare-extension', opts.declareExtension);
  if (opts.lieState !== undefined) flags.push('--lie-state', opts.lieState);
  if (opts.pushMode !== undefined) flags.push('--push-mode', opts.pushMode);
  if (opts.pushJwt) flags.push('--push-jwt');
  if (opts.card !== undefined) flags.push('--card', opts.card);
  if (opts.protocol !== undefined) flags.push('--protocol', opts.protocol);
  const proc = await spawnReady<{ url: string; name: string; jwks: { keys: Array<Record<string, unknown>> } }>(AGENT_MAIN, flags);
  const { url, name, jwks } = proc.ready;
  return {
    url,
    name,
    jwks,
    pid: proc.pid,
    stop: proc.stop,
    kill9: proc.kill9,
    log: async () => {
      const res = await fetch(`${url}/_test/log`);
      if (!res.ok) throw new Error(`GET /_test/log: HTTP ${res.status}`);
      return (await res.json()) as TestLogJson;
    },
    held: async () => {
      const res = await fetch(`${url}/_test/held`);
      if (!res.ok) throw new Error(`GET /_test/held: HTTP ${res.status}`);
    },
    release: async () => ((await (await fetch(`${url}/_test/release`, { method: 'POST' })).json()) as { released: number }).released,
  };
}

/** Options for {@link pollUntil}. */
export interface PollOptions {
  /** Maximum number of attempts (default 200). */
  polls?: number;
  /** Pause between attempts in ms (default 25). */
  intervalMs?: number;
  /** Included in the error when the condition never held. */
  what?: string;
}

/**
 * Calls `read` until `done(value)` holds and returns that value; throws after `polls`
 * attempts with the last value in the message. A bounded wait, not a clock assertion.
 */
export async function pollUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, opts: PollOptions = {}): Promise<T> {
  const { polls = 200, intervalMs = 25, what = 'condition' } = opts;
  let last: T | undefined;
  for (let i = 0; i < polls; i++) {
    last = await read();
    if (done(last)) return last;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`${what} not reached after ${polls} polls; last value: ${JSON.stringify(last)?.slice(0, 2_000)}`);
}

/** Options for {@link spawnIntegrator}; mirrors the flags of `e2e/integrator/main.ts`. */
export interface SpawnIntegratorOptions {
  /** Baton's JWKS URL (`<baton>/.well-known/jwks.json`) the receiver verifies `Baton-Signature` with. */
  jwksUrl: string;
  port?: number;
  /** Required `X-A2A-Notification-Token` value. */
  token?: string;
  /** Hold the first delivery that would be answered 200 open this long (ms). */
  holdFirstMs?: number;
  /** Answer 503 to the first N valid deliveries. */
  failFirst?: number;
  /** Accepted `iat` skew in seconds (default 300). */
  maxSkewS?: number;
}

/** An integrator webhook receiver running in its own OS process. */
export interface SpawnedIntegrator {
  /** Base URL `http://127.0.0.1:PORT`. */
  url: string;
  /** `${url}/hook`: register this (or any `${url}/hook/...`) as the webhook. */
  hookUrl: string;
  pid: number;
  stop(): Promise<void>;
  kill9(): Promise<void>;
  stderrTail(): string;
  exited: ReadyProcess['exited'];
  /** Fetches `GET /_deliveries`. */
  deliveries(): Promise<DeliveriesJson>;
  /** `DELETE /_deliveries`: forgets deliveries and counts (fail-first/hold stay consumed). */
  clearDeliveries(): Promise<void>;
  /** Polls {@link deliveries} until `done` holds (bounded; see {@link pollUntil}). */
  waitForDeliveries(done: (d: DeliveriesJson) => boolean, opts?: PollOptions): Promise<DeliveriesJson>;
}

/** Starts `e2e/integrator/main.ts` as a child process. */
export async function spawnIntegrator(opts: SpawnIntegratorOptions): Promise<SpawnedIntegrator> {
  const flags = ['--jwks-url', opts.jwksUrl, '--watch-stdin'];
  if (opts.port !== undefined) flags.push('--port', String(opts.port));
  if (opts.token !== undefined) flags.push('--token', opts.token);
  if (opts.holdFirstMs !== undefined) flags.push('--hold-first-ms', String(opts.holdFirstMs));
  if (opts.failFirst !== undefined) flags.push('--fail-first', String(opts.failFirst));
  if (opts.maxSkewS !== undefined) flags.push('--max-skew-s', String(opts.maxSkewS));
  const proc = await spawnReady<{ url: string; hookUrl: string }>(INTEGRATOR_MAIN, flags);
  const { url, hookUrl } = proc.ready;
  const deliveries = async (): Promise<DeliveriesJson> => {
    const res = await fetch(`${url}/_deliveries`);
    if (!res.ok) throw new Error(`GET /_deliveries: HTTP ${res.status}`);
    return (await res.json()) as DeliveriesJson;
  };
  return {
    url,
    hookUrl,
    pid: proc.pid,
    stop: proc.stop,
    kill9: proc.kill9,
    stderrTail: proc.stderrTail,
    exited: proc.exited,
    deliveries,
    clearDeliveries: async () => {
      const res = await fetch(`${url}/_deliveries`, { method: 'DELETE' });
      if (!res.ok) throw new Error(`DELETE /_deliveries: HTTP ${res.status}`);
    },
    waitForDeliveries: (done, pollOpts) => pollUntil(deliveries, done, { what: 'integrator deliveries', ...pollOpts }),
  };
}
