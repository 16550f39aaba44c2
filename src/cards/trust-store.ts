/**
 * Where card-verification keys come from (A2A §8.4.3 step 2, "from a trusted
 * key store"). Pinned JWKS per origin come first; a JWS `jku` is followed only
 * when its origin is explicitly allow-listed — never blindly, because a `jku`
 * is chosen by whoever wrote the signature. Revocations are local state and
 * apply whichever way a key was found.
 */
import { invalidRequest } from '../errors.ts';
import type { ProtectedHeader } from '../records/signature.ts';
import { systemClock, type Clock } from '../records/time.ts';
import { keyUnusableReason, parseJwks, type KeySet, type TrustedKey } from './jwks.ts';

/** Fetches raw JWKS bytes (injected; see fetch.ts). */
export type JwksFetcher = (url: string) => Promise<Uint8Array>;

export type KeySource = 'pinned' | 'jku';

/** Outcome of a key lookup for one signature. */
export type KeyLookup =
  | { ok: true; key: TrustedKey; source: KeySource; jku?: string }
  | { ok: false; reason: 'unknown_kid' | 'revoked' | 'expired' | 'not_yet_valid' | 'jku_not_allowed' | 'alg_mismatch' };

export interface TrustStoreOptions {
  jkuAllowedOrigins?: readonly string[];
  fetchJwks?: JwksFetcher;
  clock?: Clock;
  /** How long a JWKS fetched through `jku` is reused. */
  jkuCacheMs?: number;
}

/** Normalised origin of a URL; TypeError for config mistakes, invalid_request for untrusted input. */
export function originOf(url: string): string {
  let origin: string;
  try {
    origin = new URL(url).origin;
  } catch (cause) {
    throw invalidRequest('not an absolute URL', {}, cause);
  }
  if (origin === 'null') throw invalidRequest('URL has no web origin');
  return origin;
}

export class TrustStore {
  private readonly pinned = new Map<string, KeySet>();
  private readonly revokedLocal = new Map<string, Set<string>>();
  private readonly jkuAllowed: Set<string>;
  private readonly jkuCache = new Map<string, { set: KeySet; at: number }>();
  private readonly clock: Clock;

  constructor(private readonly opts: TrustStoreOptions = {}) {
    this.jkuAllowed = new Set((opts.jkuAllowedOrigins ?? []).map(originOf));
    this.clock = opts.clock ?? systemClock;
  }

  /** Builds a store from `config.trust`, reading each pinned JWKS file with `readFile`. */
  static async fromConfig(
    trust: { pinnedJwks: Record<string, string>; jkuAllowedOrigins: string[] },
    deps: { readFile: (path: string) => Promise<Uint8Array>; fetchJwks?: JwksFetcher; clock?: Clock },
  ): Promise<TrustStore> {
    const store = new TrustStore({ jkuAllowedOrigins: trust.jkuAllowedOrigins, fetchJwks: deps.fetchJwks, clock: deps.clock });
    for (const [origin, file] of Object.entries(trust.pinnedJwks)) {
      try {
        store.pin(origin, await parseJwks(await deps.readFile(file)));
      } catch (cause) {
        // Name the setting and its file: "malformed JSON" alone leaves the operator guessing which.
        throw invalidRequest(`trust.pinnedJwks["${origin.slice(0, 256)}"] (${file.slice(0, 512)}): ${(cause as Error).message}`, {}, cause);
      }
    }
    return store;
  }

  /** Pins (replaces) the key set for `origin`. */
  pin(origin: string, set: KeySet): void {
    this.pinned.set(originOf(origin), set);
  }

  /**
   * Takes over `next`'s pins and jku allow-list in one synchronous step (a
   * reload: every holder of this store sees the new keys at once, none sees
   * half of them). Local revocations stay; the jku cache is dropped.
   */
  adopt(next: TrustStore): void {
    this.pinned.clear();
    for (const [origin, set] of next.pinned) this.pinned.set(origin, set);
    this.jkuAllowed.clear();
    for (const o of next.jkuAllowed) this.jkuAllowed.add(o);
    this.jkuCache.clear();
  }

  /** Revokes `kid` for cards from `origin` (and for keys fetched via jku on their behalf). */
  revoke(origin: string, kid: string): void {
    const o = originOf(origin);
    const set = this.revokedLocal.get(o) ?? new Set<string>();
    set.add(kid);
    this.revokedLocal.set(o, set);
  }

  /** Finds the key that may verify a signature on a card served from `cardOrigin`. */
  async lookup(cardOrigin: string, header: ProtectedHeader): Promise<KeyLookup> {
    const origin = originOf(cardOrigin);
    const pinnedSet = this.pinned.get(origin);
    const pinnedKey = pinnedSet?.keys.get(header.kid);
    // Pins beat the network: a pinned kid never resolves through jku.
    if (pinnedSet && pinnedKey) return this.check(origin, pinnedSet, pinnedKey, header, { ok: true, key: pinnedKey, source: 'pinned' });
    if (pinnedSet?.revoked.has(header.kid)) return { ok: false, reason: 'revoked' };
    if (header.jku === undefined) return { ok: false, reason: 'unknown_kid' };
    const jkuOrigin = originOf(header.jku);
    if (!this.jkuAllowed.has(jkuOrigin) || this.opts.fetchJwks === undefined) return { ok: false, reason: 'jku_not_allowed' };
    const set = await this.jkuSet(header.jku);
    const key = set.keys.get(header.kid);
    if (!key) return { ok: false, reason: set.revoked.has(header.kid) ? 'revoked' : 'unknown_kid' };
    return this.check(origin, set, key, header, { ok: true, key, source: 'jku', jku: header.jku });
  }

  private check(origin: string, set: KeySet, key: TrustedKey, header: ProtectedHeader, found: KeyLookup): KeyLookup {
    if (this.revokedLocal.get(origin)?.has(key.kid)) return { ok: false, reason: 'revoked' };
    const unusable = keyUnusableReason(set, key, this.clock.now());
    if (unusable) return { ok: false, reason: unusable };
    // The header's alg must be the one algorithm this key is for (no cross-alg confusion).
    if (key.alg !== header.alg) return { ok: false, reason: 'alg_mismatch' };
    return found;
  }

  private async jkuSet(url: string): Promise<KeySet> {
    const now = this.clock.now().getTime();
    const hit = this.jkuCache.get(url);
    if (hit && now - hit.at < (this.opts.jkuCacheMs ?? 300_000)) return hit.set;
    const set = await parseJwks(await this.opts.fetchJwks!(url));
    this.jkuCache.set(url, { set, at: now });
    return set;
  }
}
