/**
 * A bounded per-source throttle of failed credentials (issue #25 item 19:
 * keys were guessable at ~500–780 tries/s on the caller API, the operator
 * API and the console sign-in). A source — the peer address of the TCP
 * connection — that fails `maxFailures` times within `windowMs` is refused
 * with `limit_exceeded` (HTTP 429, `Retry-After`) until its window ends,
 * before its credential is even looked at. Memory is bounded: at most
 * `maxSources` sources are tracked, the oldest forgotten first. Successes
 * are not counted; a source's count starts afresh with each window.
 */
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { limitExceeded, type BatonError } from '../errors.ts';

export const AuthThrottleConfig = z
  .strictObject({
    /** Failed credentials one source may present per window; 0 turns the throttle off. */
    maxFailures: z.number().int().min(0).max(100_000).default(20),
    windowMs: z.number().int().min(1_000).max(3_600_000).default(60_000),
    /** Sources remembered at once (memory bound); the oldest is forgotten first. */
    maxSources: z.number().int().min(100).max(1_000_000).default(10_000),
  })
  .prefault({});
export type AuthThrottleConfig = z.infer<typeof AuthThrottleConfig>;

interface Window {
  startedAt: number;
  failures: number;
}

export class AuthThrottle {
  private readonly sources = new Map<string, Window>();

  constructor(
    private readonly config: AuthThrottleConfig,
    private readonly now: () => number = Date.now,
  ) {}

  /** The refusal for a source over its bound (with `retry_after_s`), or undefined when it may try. */
  refusal(req: IncomingMessage): BatonError | undefined {
    const w = this.current(sourceOf(req));
    if (!w || this.config.maxFailures === 0 || w.failures < this.config.maxFailures) return undefined;
    const retryAfterS = Math.max(1, Math.ceil((w.startedAt + this.config.windowMs - this.now()) / 1000));
    return limitExceeded('too many failed credentials from this source; try again later', { retry_after_s: retryAfterS });
  }

  /** Counts one failed credential from the request's source. */
  failed(req: IncomingMessage): void {
    if (this.config.maxFailures === 0) return;
    const source = sourceOf(req);
    const w = this.current(source) ?? { startedAt: this.now(), failures: 0 };
    w.failures++;
    this.sources.delete(source); // re-inserted last: the Map's order is the eviction order
    this.sources.set(source, w);
    while (this.sources.size > this.config.maxSources) this.sources.delete(this.sources.keys().next().value!);
  }

  /** How many sources are tracked (memory bound; tests). */
  get size(): number {
    return this.sources.size;
  }

  private current(source: string): Window | undefined {
    const w = this.sources.get(source);
    if (w && this.now() - w.startedAt >= this.config.windowMs) {
      this.sources.delete(source);
      return undefined;
    }
    return w;
  }
}

/** The peer address; behind a proxy every request shares the proxy's (README "Throttling failed credentials"). */
const sourceOf = (req: IncomingMessage): string => req.socket.remoteAddress ?? 'unknown';

/** `Retry-After` (RFC 9110 §10.2.3) for a throttle refusal. */
export function retryAfter(err: BatonError): string {
  return String(err.details.retry_after_s ?? 1);
}
