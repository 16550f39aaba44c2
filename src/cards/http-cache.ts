/**
 * The part of RFC 9111 a card client needs (A2A §8.6.2): how long a response
 * stays fresh, and whether it may be stored at all. Pure; no I/O.
 */

export interface Freshness {
  /** false for no-store: never keep the response. */
  storable: boolean;
  /** Milliseconds the response is fresh from when it was received. */
  lifetimeMs: number;
}

export interface FreshnessPolicy {
  /** Used when the server sends no max-age (A2A §8.6.2 allows a default). */
  defaultMs: number;
  /** Upper bound, so a hostile max-age cannot pin a revoked card forever. */
  maxMs: number;
}

export const DEFAULT_FRESHNESS: FreshnessPolicy = { defaultMs: 5 * 60_000, maxMs: 24 * 3_600_000 };

/** Reads Cache-Control (and Age, RFC 9111 §5.1) into a freshness lifetime. */
export function freshnessOf(cacheControl: string | undefined, age: string | undefined, policy = DEFAULT_FRESHNESS): Freshness {
  const directives = parseCacheControl(cacheControl);
  if (directives.has('no-store')) return { storable: false, lifetimeMs: 0 };
  // no-cache: store, but revalidate before every use (RFC 9111 §5.2.2.4).
  if (directives.has('no-cache')) return { storable: true, lifetimeMs: 0 };
  const maxAge = directives.get('max-age');
  const seconds = maxAge !== undefined && /^\d+$/.test(maxAge) ? Number(maxAge) : undefined;
  const base = seconds === undefined ? policy.defaultMs : seconds * 1000;
  const ageMs = age !== undefined && /^\d+$/.test(age) ? Number(age) * 1000 : 0;
  return { storable: true, lifetimeMs: Math.max(0, Math.min(base, policy.maxMs) - ageMs) };
}

/** Directive name (lower case) → argument ('' when none). */
export function parseCacheControl(value: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (value ?? '').split(',')) {
    const [name, ...rest] = part.trim().split('=');
    if (!name) continue;
    out.set(name.toLowerCase(), rest.join('=').replace(/^"|"$/g, ''));
  }
  return out;
}
