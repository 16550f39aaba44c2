/**
 * A bounded closed-loop HTTP load generator on undici: one Pool with N
 * connections and N loops, each keeping one request in flight. A phase ends
 * at a fixed duration or a fixed request count, whichever comes first; every
 * request has hard header/body timeouts, and a phase has a hard deadline.
 */
import { Pool } from 'undici';
import { summarise, type LatencySummary } from './stats.ts';

export interface LoadTarget {
  /** http://127.0.0.1:PORT */
  origin: string;
  path: string;
  headers: Record<string, string>;
  /** A fresh body per request (unique message ids). */
  body: () => string;
  /** Returns an error description when a response is not the expected success. */
  check?: (status: number, text: string) => string | undefined;
}

export interface PhaseResult extends LatencySummary {
  requests: number;
  errors: number;
  errorSample?: string;
  /** Errors by code ({@link errorCode}). */
  errorsByCode: Record<string, number>;
  elapsedMs: number;
  rps: number;
  /** True when the phase stopped at its request cap rather than its duration. */
  capped: boolean;
}

export class LoadGenerator {
  private readonly pool: Pool;

  constructor(
    private readonly target: LoadTarget,
    readonly concurrency: number,
  ) {
    this.pool = new Pool(target.origin, {
      connections: concurrency,
      pipelining: 1,
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
      keepAliveTimeout: 60_000,
      connectTimeout: 5_000,
    });
  }

  /** Runs N closed loops for `durationMs` or `maxRequests` in total, whichever first. */
  async phase(durationMs: number, maxRequests = Number.POSITIVE_INFINITY): Promise<PhaseResult> {
    const latencies: number[] = [];
    let issued = 0;
    let errors = 0;
    let errorSample: string | undefined;
    const errorsByCode: Record<string, number> = {};
    const start = performance.now();
    const deadline = start + durationMs;
    let last = start;
    const loop = async (): Promise<void> => {
      while (performance.now() < deadline && issued < maxRequests) {
        issued++;
        const t0 = performance.now();
        let problem: string | undefined;
        try {
          const res = await this.pool.request({ path: this.target.path, method: 'POST', headers: this.target.headers, body: this.target.body() });
          const text = await res.body.text();
          problem = this.target.check ? this.target.check(res.statusCode, text) : res.statusCode === 200 ? undefined : `HTTP ${res.statusCode}`;
        } catch (err) {
          problem = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
        }
        const t1 = performance.now();
        last = t1;
        latencies.push(t1 - t0);
        if (problem !== undefined) {
          errors++;
          errorSample ??= problem.slice(0, 300);
          const code = errorCode(problem);
          errorsByCode[code] = (errorsByCode[code] ?? 0) + 1;
        }
      }
    };
    // Hard deadline: the duration plus the per-request timeout and a margin.
    let timer: NodeJS.Timeout | undefined;
    const hard = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`load phase exceeded its hard deadline (${durationMs} ms + 45 s)`)), durationMs + 45_000);
    });
    try {
      await Promise.race([Promise.all(Array.from({ length: this.concurrency }, loop)), hard]);
    } finally {
      clearTimeout(timer);
    }
    const elapsedMs = last - start;
    return {
      ...summarise(latencies),
      requests: latencies.length,
      errors,
      ...(errorSample !== undefined ? { errorSample } : {}),
      errorsByCode,
      elapsedMs,
      rps: elapsedMs > 0 ? (latencies.length * 1000) / elapsedMs : 0,
      capped: issued >= maxRequests,
    };
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}

/** Concurrency of the JIT warm-up burst ({@link warmJit}). */
export const JIT_WARM_CONCURRENCY = 32;

/** The A2A phases' burst in a full and a quick run; the profile step, ab-cpu.ts and ab-interleave.ts use the same. */
export const JIT_BURST = { full: { requests: 4_000, ms: 45_000 }, quick: { requests: 300, ms: 5_000 } } as const;

/**
 * Drives `target` at concurrency 32 for `requests` requests (at most `ms`)
 * before a measured phase, so what a phase measures is a process in service,
 * not one still being compiled. V8 optimises a function only after it has run
 * some thousands of times, so a process that has served a few hundred
 * requests is still compiling the functions a call runs once; at c=1 its
 * compiler threads cost Baton about 2 ms a call on a 2-core machine (session
 * 21: ~90 first-time TurboFan compiles in a 5 s c=1 window after 1,300
 * requests; CPU per call at c=1 about 14 ms before 3,500 requests, 11.5 after).
 * Returns the burst's request and error counts.
 */
export async function warmJit(target: LoadTarget, requests: number, ms: number): Promise<{ requests: number; errors: number }> {
  const gen = new LoadGenerator(target, JIT_WARM_CONCURRENCY);
  try {
    const r = await gen.phase(ms, requests);
    return { requests: r.requests, errors: r.errors };
  } finally {
    await gen.close();
  }
}

/** A2A v1.0 JSON-RPC SendMessage with a unique message id per call. */
export function sendMessageBody(prefix: string): () => string {
  let n = 0;
  return () =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: ++n,
      method: 'SendMessage',
      params: { message: { messageId: `${prefix}-${process.pid}-${n}`, role: 'ROLE_USER', parts: [{ text: 'x' }] } },
    });
}

/** Success means a JSON-RPC result whose task reached COMPLETED (and, through Baton, was verified). */
export function completedTask(opts: { verified?: boolean } = {}): (status: number, text: string) => string | undefined {
  return (status, text) => {
    if (status !== 200) return `HTTP ${status}: ${text.slice(0, 200)}`;
    let body: { result?: { task?: { status?: { state?: string }; metadata?: Record<string, { outcome?: string }> } }; error?: { message?: string } };
    try {
      body = JSON.parse(text);
    } catch {
      return 'response is not JSON';
    }
    if (body.error) return `JSON-RPC error: ${JSON.stringify(body.error).slice(0, 250)}`;
    const task = body.result?.task;
    if (task?.status?.state !== 'TASK_STATE_COMPLETED') return `task state ${task?.status?.state ?? '(no task)'}`;
    if (opts.verified && task.metadata?.['urn:baton:outcome:v2']?.outcome !== 'succeeded') return `outcome ${JSON.stringify(task.metadata?.['urn:baton:outcome:v2'] ?? null)}`;
    return undefined;
  };
}

/**
 * A short code for a failed request: Baton's error code (src/errors.ts, carried
 * in the JSON-RPC error's ErrorInfo metadata), else the HTTP status, the task
 * state or outcome seen, or the client-side exception's name.
 */
export function errorCode(problem: string): string {
  const baton = /"baton":"([a-z_]+)"/.exec(problem);
  if (baton) return baton[1]!;
  const http = /^HTTP (\d+)/.exec(problem);
  if (http) return `HTTP ${http[1]}`;
  if (problem.startsWith('JSON-RPC error')) return `JSON-RPC ${/"code":(-?\d+)/.exec(problem)?.[1] ?? '?'}`;
  if (problem.startsWith('task state ')) return problem;
  if (problem.startsWith('outcome ')) return `outcome ${/"outcome":"(\w+)"/.exec(problem)?.[1] ?? 'missing'}`;
  return problem.split(':')[0]!.slice(0, 60);
}
