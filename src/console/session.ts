/**
 * Console sign-in: an operator API key is exchanged once for a session whose
 * id travels only in an HttpOnly, SameSite=Strict cookie. The key is never
 * kept, put in a URL or handed to script. Each session carries its own CSRF
 * token (synchronizer pattern) that every state-changing form must echo.
 *
 * Sessions live in this process's memory: they are a convenience for a
 * browser, never authority (the operator's key is). A restart signs every
 * operator out; behind a load balancer the console needs sticky routing.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export interface ConsoleSession {
  operator: string;
  csrf: string;
  createdAt: number;
  lastSeen: number;
}

export interface SessionPolicy {
  /** Signed out after this long without a request. */
  idleMs: number;
  /** Signed out after this long whatever happens. */
  absoluteMs: number;
  /** Oldest sessions are dropped beyond this many. */
  max: number;
}

export const DEFAULT_SESSION_POLICY: SessionPolicy = { idleMs: 30 * 60_000, absoluteMs: 8 * 60 * 60_000, max: 1000 };

const token = () => randomBytes(32).toString('base64url');
// Keyed by a digest of the cookie value: the map never holds a usable cookie.
const keyOf = (id: string) => createHash('sha256').update(id).digest('base64url');

export class Sessions {
  private readonly live = new Map<string, ConsoleSession>();

  constructor(
    private readonly policy: SessionPolicy = DEFAULT_SESSION_POLICY,
    private readonly now: () => number = Date.now,
  ) {}

  /** A fresh session (never a reused id: no fixation); returns the cookie value. */
  create(operator: string): { id: string; session: ConsoleSession } {
    const id = token();
    const at = this.now();
    const session = { operator, csrf: token(), createdAt: at, lastSeen: at };
    this.live.set(keyOf(id), session);
    while (this.live.size > this.policy.max) this.live.delete(this.live.keys().next().value!);
    return { id, session };
  }

  /** The live session for a cookie value, touched; an expired one is dropped. */
  get(id: string | undefined): ConsoleSession | undefined {
    if (!id) return undefined;
    const key = keyOf(id);
    const s = this.live.get(key);
    if (!s) return undefined;
    const at = this.now();
    if (at - s.lastSeen > this.policy.idleMs || at - s.createdAt > this.policy.absoluteMs) {
      this.live.delete(key);
      return undefined;
    }
    s.lastSeen = at;
    return s;
  }

  /** Whether a session is still live, without counting this as activity (a live stream must not keep it alive). */
  alive(id: string): boolean {
    const s = this.live.get(keyOf(id));
    const at = this.now();
    return s !== undefined && at - s.lastSeen <= this.policy.idleMs && at - s.createdAt <= this.policy.absoluteMs;
  }

  destroy(id: string | undefined): void {
    if (id) this.live.delete(keyOf(id));
  }
}

/** Constant-time comparison of a presented CSRF token with the session's. */
export function csrfMatches(session: ConsoleSession, presented: unknown): boolean {
  if (typeof presented !== 'string') return false;
  const a = Buffer.from(session.csrf);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Which configured operator an API key belongs to (by its sha256, in constant time). */
export function operatorOfKey(keys: ReadonlyArray<{ id: string; apiKeySha256: string }>, presented: string): string | undefined {
  const digest = createHash('sha256').update(presented).digest();
  let found: string | undefined;
  for (const k of keys) {
    const d = Buffer.from(k.apiKeySha256, 'hex');
    if (d.length === digest.length && timingSafeEqual(d, digest)) found ??= k.id;
  }
  return found;
}

export const COOKIE = 'baton_console';
export const PRE_COOKIE = 'baton_console_pre';

/** Reads one cookie from a Cookie header (RFC 6265 §5.4). */
export function cookieOf(header: string | undefined, name: string): string | undefined {
  for (const pair of (header ?? '').split(';')) {
    const i = pair.indexOf('=');
    if (i > 0 && pair.slice(0, i).trim() === name) return pair.slice(i + 1).trim();
  }
  return undefined;
}

/** A Set-Cookie value: HttpOnly, SameSite=Strict, scoped to the console; Secure when served over TLS. */
export function setCookie(name: string, value: string, opts: { maxAgeS: number; secure: boolean }): string {
  return [`${name}=${value}`, 'Path=/console', 'HttpOnly', 'SameSite=Strict', `Max-Age=${opts.maxAgeS}`, ...(opts.secure ? ['Secure'] : [])].join('; ');
}

export { token as newToken };
