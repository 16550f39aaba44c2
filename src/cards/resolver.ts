/**
 * The library API the gateway uses to obtain a verified remote card: fetch
 * (injected), verify the raw bytes, cache by URL with RFC 9111 freshness and
 * conditional revalidation (A2A §8.6.2). Every use re-runs the verification
 * policy against the current trust store — a key revoked a second ago must not
 * be honoured from cache — while the cryptography itself is memoised by
 * (payload digest, key thumbprint, signature) so a cache hit costs no crypto.
 */
import { unavailable } from '../errors.ts';
import { systemClock, type Clock } from '../records/time.ts';
import { inMemoryCardHistory, type CardHistory } from './continuity.ts';
import type { DocumentFetcher } from './fetch.ts';
import { DEFAULT_FRESHNESS, freshnessOf, type FreshnessPolicy } from './http-cache.ts';
import { originOf, type TrustStore } from './trust-store.ts';
import { verifyCardBytes, type CardForm, type CardVerification } from './verify.ts';

export interface CardResolverDeps {
  fetch: DocumentFetcher;
  trust: TrustStore;
  clock?: Clock;
  history?: CardHistory;
  freshness?: FreshnessPolicy;
  maxBytes?: number;
  /** Bound on cached URLs and memoised signatures. */
  maxEntries?: number;
}

interface Entry {
  bytes: Uint8Array;
  etag?: string;
  lastModified?: string;
  freshUntil: number;
}

/** Resolves, verifies and caches remote Agent Cards. */
export class CardResolver {
  private readonly entries = new Map<string, Entry>();
  private readonly memo = new BoundedSet(1024);
  private readonly clock: Clock;
  private readonly history: CardHistory;

  constructor(private readonly deps: CardResolverDeps) {
    this.clock = deps.clock ?? systemClock;
    this.history = deps.history ?? inMemoryCardHistory();
  }

  /** Fetches (or revalidates) and verifies the card at `url`; throws on any failure, never returns stale trust. */
  async resolve(url: string, form: CardForm = 'public', opts: { allowUnsigned?: boolean } = {}): Promise<CardVerification> {
    // Trust follows the URL Baton was asked for, not where a redirect led: a
    // redirect can move the bytes, never whose keys must have signed them.
    const origin = originOf(url);
    const now = this.clock.now().getTime();
    const cached = this.entries.get(url);
    if (cached && now < cached.freshUntil) return this.verify(cached.bytes, url, origin, form, opts);
    const res = await this.deps.fetch(url, cached ? { etag: cached.etag, lastModified: cached.lastModified } : undefined);
    const fresh = freshnessOf(res.cacheControl, res.status === 200 ? res.age : undefined, this.deps.freshness ?? DEFAULT_FRESHNESS);
    if (res.status === 304 && cached) {
      cached.freshUntil = now + fresh.lifetimeMs;
      if (res.etag) cached.etag = res.etag;
      return this.verify(cached.bytes, url, origin, form, opts);
    }
    if (res.status === 304) {
      // A 304 to an unconditional request is a broken server, not a card.
      throw unavailable('remote answered 304 to an unconditional card request');
    }
    this.entries.delete(url);
    const verification = await this.verify(res.bytes, res.url, origin, form, opts);
    if (fresh.storable) this.store(url, { bytes: res.bytes, etag: res.etag, lastModified: res.lastModified, freshUntil: now + fresh.lifetimeMs });
    return verification;
  }

  /** Forgets the cached copy of one card: the next resolve fetches it unconditionally (`baton cards refresh`). */
  forget(url: string): void {
    this.entries.delete(url);
  }

  /** Drops every cached card (e.g. after a trust-store change an operator wants applied now). */
  clear(): void {
    this.entries.clear();
  }

  private verify(bytes: Uint8Array, source: string, origin: string, form: CardForm, opts: { allowUnsigned?: boolean }): Promise<CardVerification> {
    return verifyCardBytes(
      { bytes, origin, source, form, ...(opts.allowUnsigned ? { allowUnsigned: true } : {}) },
      { trust: this.deps.trust, clock: this.clock, history: this.history, verifiedSignatures: this.memo, maxBytes: this.deps.maxBytes },
    );
  }

  private store(url: string, entry: Entry): void {
    if (this.entries.size >= (this.deps.maxEntries ?? 1024)) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(url, entry);
  }
}

/** Insertion-ordered set that forgets its oldest member past `max`. */
class BoundedSet {
  private readonly set = new Set<string>();
  constructor(private readonly max: number) {}
  has(key: string): boolean {
    return this.set.has(key);
  }
  add(key: string): void {
    if (this.set.size >= this.max) {
      const oldest = this.set.values().next().value;
      if (oldest !== undefined) this.set.delete(oldest);
    }
    this.set.add(key);
  }
}
