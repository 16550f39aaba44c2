/**
 * Talking to a delegatee over A2A JSON-RPC with undici. Two dispatchers on
 * purpose: forwarded calls share a keep-alive pool, read-backs use their own
 * so a verification never rides the connection that delivered the claim it
 * checks (DESIGN "a fresh GetTask on a separate connection").
 *
 * Failures are classified for outcome projection: an error that proves no
 * byte left Baton is `not_transmitted`; everything else after the request
 * may have reached the remote is `lost`.
 */
import { setMaxListeners } from 'node:events';
import { Agent, request, type Dispatcher } from 'undici';
import { BatonError, limitExceeded } from '../errors.ts';
import { parseStrictJson, type JsonValue } from '../records/strict-json.ts';
import { wireJson } from '../records/wire-json.ts';
import { withTraceContext } from '../telemetry/tracing.ts';

const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'ENETUNREACH', 'EHOSTUNREACH', 'UND_ERR_INVALID_ARG']);

export interface RemoteLimits {
  /** Time to the response headers. */
  headersTimeoutMs: number;
  /** Idle time between body chunks (SSE streams included). */
  bodyTimeoutMs: number;
  /** Largest JSON response accepted. */
  maxResponseBytes: number;
  /** Idle time allowed between events of a stream: long tasks may be quiet for a while. */
  streamIdleMs: number;
  /**
   * Overall deadline of one non-streaming call, headers and whole body: the
   * idle timeouts alone let an agent that drips a byte at a time hold a call forever.
   */
  callDeadlineMs: number;
  /**
   * Bounds of one streamed turn: events read and bytes of event data. A
   * delegatee that streams past them is hostile input; the stream is closed
   * and the turn is `unknown` (issue #25 item 15, src/gateway/path/follow.ts).
   */
  maxTurnEvents: number;
  maxTurnBytes: number;
  /**
   * How long an idle connection to a delegatee is kept for reuse, unless its
   * Keep-Alive hint says sooner. Below the usual server idle timeouts (Node's
   * 5 s): a server that closes first races the next request written to the
   * socket, and a POST reset there is an uncertain effect. SSE responses
   * that set their own Connection header (the A2A SDK's) carry no hint.
   */
  keepAliveMs: number;
}

export const DEFAULT_REMOTE_LIMITS: RemoteLimits = {
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 30_000,
  maxResponseBytes: 4 * 1024 * 1024,
  streamIdleMs: 300_000,
  callDeadlineMs: 60_000,
  maxTurnEvents: 10_000,
  maxTurnBytes: 32 * 1024 * 1024,
  keepAliveMs: 4_000,
};

/** A transport failure, tagged with whether the request may have been delivered. */
export class RemoteFailure extends Error {
  override readonly name = 'RemoteFailure';
  /** The HTTP status the remote answered with, when it answered at all. */
  readonly status?: number;
  constructor(
    readonly transmitted: boolean,
    readonly reason: string,
    options?: { cause?: unknown; status?: number },
  ) {
    super(reason, options);
    if (options?.status !== undefined) this.status = options.status;
  }
}

export interface RemoteClientOptions {
  limits?: Partial<RemoteLimits>;
  connections?: number;
}

/** How a stream is opened. */
export interface StreamOptions {
  /**
   * The connection of the one caller this stream is relayed to, as a signal:
   * a subscription (SubscribeToTask) is a read for that caller and ends when
   * the caller leaves. An effect's own stream (SendStreamingMessage) is how
   * Baton observes the effect, so it gets none: only shutdown ends it early.
   */
  caller?: AbortSignal;
}

export class RemoteClient {
  readonly limits: RemoteLimits;
  private readonly forward: Agent;
  private readonly verify: Agent;
  /** Aborted by {@link RemoteClient.abortAll} when the process stops waiting for upstream calls. */
  private readonly stopping = new AbortController();

  constructor(opts: RemoteClientOptions = {}) {
    this.limits = { ...{}, ...DEFAULT_REMOTE_LIMITS, ...opts.limits };
    const common = { headersTimeout: this.limits.headersTimeoutMs, bodyTimeout: this.limits.bodyTimeoutMs, maxRedirections: 0 } as const;
    this.forward = new Agent({ ...{}, ...common, connections: opts.connections ?? 64, keepAliveTimeout: this.limits.keepAliveMs });
    // Its own pool (keep-alive, but never shared with forwarded calls).
    this.verify = new Agent({ ...{}, ...common, connections: 8, keepAliveTimeout: this.limits.keepAliveMs });
    // Every call and effect stream in flight listens on this one signal (removed when it ends), so more than
    // Node's default of 10 at once is normal load, not a leak: no MaxListenersExceededWarning in operators' logs.
    setMaxListeners(0, this.stopping.signal);
  }

  /** One JSON-RPC call; returns the `result` or throws RemoteFailure / BatonError. */
  async call(url: string, method: string, params: unknown, opts: { headers?: Record<string, string>; readBack?: boolean; id?: string } = {}): Promise<JsonValue> {
    const body = wireJson({ jsonrpc: '2.0', id: opts.id ?? method, method, params });
    const { signal, end } = this.deadline();
    try {
      const res = await this.send(url, body, opts.headers ?? {}, opts.readBack ? this.verify : this.forward, 'application/json', undefined, signal);
      return unwrapJsonRpc(await this.readJson(res, signal));
    } finally {
      end();
    }
  }

  /**
   * A call's signal, aborted by shutdown or by the call's deadline, whichever
   * comes first; `end` lets go of both when the call is over (the timer
   * cleared, the listener on the shutdown signal removed). AbortSignal.timeout
   * composed by AbortSignal.any left every call's timer to fire after the call,
   * a deadline later (at c=32 and a 30 s deadline, ~7,000 of them pending),
   * and registered both signals for finalisation, which V8 11 keeps alive
   * through scavenges (issue #24: promoted a delegated call at c=1, one run
   * each, 52.3 -> 50.9 KB).
   */
  private deadline(): { signal: AbortSignal; end: () => void } {
    const ctl = new AbortController();
    const stopping = this.stopping.signal;
    if (stopping.aborted) {
      ctl.abort(stopping.reason);
      return { signal: ctl.signal, end: () => {} };
    }
    const stop = () => ctl.abort(stopping.reason);
    stopping.addEventListener('abort', stop, { once: true });
    const timer = setTimeout(() => ctl.abort(new DOMException('The call deadline passed', 'TimeoutError')), this.limits.callDeadlineMs);
    return {
      signal: ctl.signal,
      end: () => {
        clearTimeout(timer);
        stopping.removeEventListener('abort', stop);
      },
    };
  }

  /**
   * Opens a streaming JSON-RPC call; the caller consumes `body` as SSE. A
   * server that refuses before its first event answers with plain JSON-RPC
   * (A2A §9.4.2): that error is thrown here, not mistaken for an empty stream.
   */
  async stream(url: string, method: string, params: unknown, headers: Record<string, string> = {}, opts: StreamOptions = {}): Promise<Dispatcher.ResponseData> {
    // The forwarded turn's chain is written as the contracts' canonical text, already known (records/wire-json.ts).
    const body = wireJson({ jsonrpc: '2.0', id: method, method, params });
    const caller = opts.caller;
    const signal = caller ? AbortSignal.any([this.stopping.signal, caller]) : this.stopping.signal;
    const res = await this.send(url, body, headers, this.forward, 'text/event-stream', this.limits.streamIdleMs, signal);
    const type = String(res.headers['content-type'] ?? '');
    if (type.startsWith('text/event-stream')) return res;
    unwrapJsonRpc(await this.readJson(res)); // throws the remote's error
    throw new RemoteFailure(true, 'remote answered a stream request with a non-stream result');
  }

  /**
   * The strictly parsed, size-bounded JSON body of a response. A reply Baton
   * cannot read — too large, too deep, not strict JSON — came after the
   * request was transmitted: the effect may have run, so it is a transmitted
   * RemoteFailure (uncertain, followed with Baton's task id), never a
   * refusal of the caller's request (issue #25 item 17).
   */
  private async readJson(res: Dispatcher.ResponseData, signal?: AbortSignal): Promise<JsonValue> {
    const text = await readLimited(res.body, this.limits.maxResponseBytes, signal);
    try {
      return parseStrictJson(text, { maxBytes: this.limits.maxResponseBytes });
    } catch (cause) {
      const bound = cause instanceof BatonError && cause.code === 'limit_exceeded';
      throw new RemoteFailure(true, bound ? 'remote answer exceeds what Baton reads' : 'remote answered with malformed JSON', { cause });
    }
  }

  /** Waits for calls in flight to finish, then closes the pools. */
  async close(): Promise<void> {
    await Promise.all([this.forward.close(), this.verify.close()]);
  }

  /** Stops waiting: aborts every call and stream in flight (they fail as transmitted), then destroys the pools. */
  async abortAll(): Promise<void> {
    this.stopping.abort(new Error('gateway is shutting down'));
    await Promise.all([this.forward.destroy(), this.verify.destroy()]);
  }

  private async send(
    url: string,
    body: string,
    headers: Record<string, string>,
    dispatcher: Agent,
    accept: string,
    bodyTimeout?: number,
    signal?: AbortSignal,
  ): Promise<Dispatcher.ResponseData> {
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method: 'POST',
        dispatcher,
        ...(signal ? { signal } : {}),
        ...(bodyTimeout !== undefined ? { bodyTimeout } : {}),
        // W3C trace context of the active span (the forward or read-back step), when tracing is on.
        headers: withTraceContext({ 'content-type': 'application/json', accept, 'a2a-version': '1.0', ...headers }),
        body,
      });
    } catch (err) {
      if (signal?.aborted) throw abortFailure(signal);
      const code = (err as { code?: string }).code ?? '';
      throw new RemoteFailure(!NOT_SENT.has(code), code || 'request failed', { cause: err });
    }
    if (res.statusCode >= 300) {
      await res.body.dump().catch(() => {});
      // The remote received and refused it; nothing in A2A says whether it acted, so treat as delivered.
      throw new RemoteFailure(true, `remote answered HTTP ${res.statusCode}`, { status: res.statusCode });
    }
    return res;
  }
}

/** A call cut by its deadline, the caller leaving or shutdown: it may have reached the remote. */
function abortFailure(signal: AbortSignal): RemoteFailure {
  const reason = signal.reason as { name?: string } | undefined;
  return new RemoteFailure(true, reason?.name === 'TimeoutError' ? 'call deadline exceeded' : 'call aborted', { cause: signal.reason });
}

async function readLimited(body: Dispatcher.ResponseData['body'], max: number, signal?: AbortSignal): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (size > max) {
        body.destroy();
        throw new RemoteFailure(true, 'remote answer exceeds what Baton reads', { cause: limitExceeded('remote response exceeds the size bound', { max }) });
      }
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (err instanceof RemoteFailure) throw err;
    if (signal?.aborted) throw abortFailure(signal);
    throw new RemoteFailure(true, (err as { code?: string }).code ?? 'response interrupted', { cause: err });
  }
  return Buffer.concat(chunks);
}

/** A JSON-RPC error from the remote, carried with its code for the caller. */
export class RemoteRpcError extends Error {
  override readonly name = 'RemoteRpcError';
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export function unwrapJsonRpc(envelope: JsonValue): JsonValue {
  if (typeof envelope !== 'object' || envelope === null || Array.isArray(envelope) || envelope.jsonrpc !== '2.0') {
    throw new RemoteFailure(true, 'remote answered with something that is not JSON-RPC 2.0');
  }
  if ('error' in envelope && envelope.error !== undefined) {
    const e = envelope.error as { code?: unknown; message?: unknown; data?: unknown };
    throw new RemoteRpcError(typeof e.code === 'number' ? e.code : -32603, typeof e.message === 'string' ? e.message.slice(0, 500) : 'remote error', e.data);
  }
  if (!('result' in envelope)) throw new RemoteFailure(true, 'JSON-RPC response without result');
  return envelope.result as JsonValue;
}

