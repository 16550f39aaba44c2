/** The trust store's key lookup on its own (mutation group cards): pins, revocations, jku allow-list and cache, reload. */
import { describe, expect, it } from 'vitest';
import { parseJwks } from '../../src/cards/jwks.ts';
import { originOf, TrustStore } from '../../src/cards/trust-store.ts';
import { manualClock } from '../../src/records/time.ts';
import { expectCode, expectCodeAsync } from '../helpers/errors.ts';
import { jwksBytes, ORIGIN, testKey, type TestKey } from './helpers.ts';

const KEYS = 'https://keys.partner.example';
const JKU = `${KEYS}/jwks.json`;

/** A jku fetcher over fixed documents, counting its calls (no network). */
function fetcher(docs: Record<string, Uint8Array>) {
  const calls: string[] = [];
  const fetchJwks = async (url: string) => {
    calls.push(url);
    const doc = docs[url];
    if (!doc) throw new Error(`no document at ${url}`);
    return doc;
  };
  return { fetchJwks, calls };
}

const header = (k: TestKey, over: { jku?: string; alg?: 'ES256' | 'EdDSA' } = {}) => ({ alg: over.alg ?? k.alg, kid: k.kid, ...(over.jku ? { jku: over.jku } : {}) });

describe('originOf', () => {
  it('refuses what is not an absolute URL, and URLs without a web origin', () => {
    expect(originOf('https://a.example:443/x?y')).toBe('https://a.example');
    expect(expectCode(() => originOf('/relative'), 'invalid_request').message).toBe('not an absolute URL');
    for (const u of ['data:text/plain,x', 'file:///etc/jwks.json']) expect(expectCode(() => originOf(u), 'invalid_request').message).toBe('URL has no web origin');
  });
});

describe('TrustStore.lookup', () => {
  it('a kid the pinned set revokes is revoked, not unknown, and never resolved through jku', async () => {
    const k = await testKey();
    const { fetchJwks, calls } = fetcher({ [JKU]: jwksBytes([k]) });
    const store = new TrustStore({ jkuAllowedOrigins: [KEYS], fetchJwks });
    store.pin(ORIGIN, await parseJwks(jwksBytes([], { set: { revoked_kids: [k.kid] } })));
    expect(await store.lookup(ORIGIN, header(k))).toEqual({ ok: false, reason: 'revoked' });
    expect(await store.lookup(ORIGIN, header(k, { jku: JKU }))).toEqual({ ok: false, reason: 'revoked' });
    expect(calls).toEqual([]);
  });

  it('an allow-listed jku without a fetcher is not followed', async () => {
    const k = await testKey();
    expect(await new TrustStore({ jkuAllowedOrigins: [KEYS] }).lookup(ORIGIN, header(k, { jku: JKU }))).toEqual({ ok: false, reason: 'jku_not_allowed' });
  });

  it('a jku set that lacks the kid gives unknown_kid, one that revokes it revoked', async () => {
    const k = await testKey();
    const other = await testKey();
    const { fetchJwks } = fetcher({ [JKU]: jwksBytes([other]), [`${KEYS}/revoking.json`]: jwksBytes([other], { set: { revoked_kids: [k.kid] } }) });
    const store = new TrustStore({ jkuAllowedOrigins: [KEYS], fetchJwks });
    expect(await store.lookup(ORIGIN, header(k, { jku: JKU }))).toEqual({ ok: false, reason: 'unknown_kid' });
    expect(await store.lookup(ORIGIN, header(k, { jku: `${KEYS}/revoking.json` }))).toEqual({ ok: false, reason: 'revoked' });
    expect(await store.lookup(ORIGIN, header(other, { jku: JKU }))).toMatchObject({ ok: true, source: 'jku', jku: JKU, key: { kid: other.kid } });
  });

  it('a local revocation applies to pinned and jku keys alike', async () => {
    const pinned = await testKey();
    const viaJku = await testKey();
    const { fetchJwks } = fetcher({ [JKU]: jwksBytes([viaJku]) });
    const store = new TrustStore({ jkuAllowedOrigins: [KEYS], fetchJwks });
    store.pin(ORIGIN, await parseJwks(jwksBytes([pinned])));
    expect(await store.lookup(ORIGIN, header(pinned))).toMatchObject({ ok: true, source: 'pinned' });
    store.revoke(ORIGIN, pinned.kid);
    store.revoke(ORIGIN, viaJku.kid);
    expect(await store.lookup(ORIGIN, header(pinned))).toEqual({ ok: false, reason: 'revoked' });
    expect(await store.lookup(ORIGIN, header(viaJku, { jku: JKU }))).toEqual({ ok: false, reason: 'revoked' });
  });

  it("a header naming another algorithm than the key's is alg_mismatch", async () => {
    const k = await testKey('EdDSA');
    const store = new TrustStore();
    store.pin(ORIGIN, await parseJwks(jwksBytes([k])));
    expect(await store.lookup(ORIGIN, header(k, { alg: 'ES256' }))).toEqual({ ok: false, reason: 'alg_mismatch' });
    expect(await store.lookup(ORIGIN, header(k))).toMatchObject({ ok: true, source: 'pinned', key: { kid: k.kid, alg: 'EdDSA' } });
  });

  it('reuses a jku set for jkuCacheMs (default 5 min), then fetches it again', async () => {
    const k = await testKey();
    const clock = manualClock('2026-12-04T00:00:00Z');
    const { fetchJwks, calls } = fetcher({ [JKU]: jwksBytes([k]) });
    const store = new TrustStore({ jkuAllowedOrigins: [KEYS], fetchJwks, clock });
    const look = async () => expect(await store.lookup(ORIGIN, header(k, { jku: JKU }))).toMatchObject({ ok: true, source: 'jku' });
    await look();
    clock.advance(299_999);
    await look();
    expect(calls).toHaveLength(1);
    clock.advance(1); // 300 000 ms after the fetch
    await look();
    expect(calls).toHaveLength(2);

    const short = fetcher({ [JKU]: jwksBytes([k]) });
    const store2 = new TrustStore({ jkuAllowedOrigins: [KEYS], fetchJwks: short.fetchJwks, clock, jkuCacheMs: 1_000 });
    await store2.lookup(ORIGIN, header(k, { jku: JKU }));
    clock.advance(999);
    await store2.lookup(ORIGIN, header(k, { jku: JKU }));
    expect(short.calls).toHaveLength(1);
    clock.advance(1);
    await store2.lookup(ORIGIN, header(k, { jku: JKU }));
    expect(short.calls).toHaveLength(2);
  });
});

describe('TrustStore.adopt (a reload)', () => {
  it("takes over the next store's pins and jku allow-list, drops the jku cache, keeps local revocations", async () => {
    const [a, b, r] = [await testKey(), await testKey(), await testKey()];
    const keys2 = 'https://keys2.partner.example';
    const { fetchJwks, calls } = fetcher({ [JKU]: jwksBytes([a]), [`${keys2}/jwks.json`]: jwksBytes([a]) });
    const store = new TrustStore({ jkuAllowedOrigins: [KEYS], fetchJwks });
    store.pin(ORIGIN, await parseJwks(jwksBytes([a, r])));
    store.revoke(ORIGIN, r.kid);
    expect(await store.lookup(ORIGIN, header(a, { jku: JKU }))).toMatchObject({ ok: true, source: 'pinned' });
    expect(await store.lookup('https://other.example', header(a, { jku: JKU }))).toMatchObject({ ok: true, source: 'jku' });
    expect(calls).toHaveLength(1);

    const next = new TrustStore({ jkuAllowedOrigins: [KEYS, keys2] });
    next.pin(ORIGIN, await parseJwks(jwksBytes([b, r])));
    store.adopt(next);
    expect(await store.lookup(ORIGIN, header(a))).toEqual({ ok: false, reason: 'unknown_kid' });
    expect(await store.lookup(ORIGIN, header(b))).toMatchObject({ ok: true, source: 'pinned', key: { kid: b.kid } });
    expect(await store.lookup(ORIGIN, header(r))).toEqual({ ok: false, reason: 'revoked' });
    expect(await store.lookup('https://other.example', header(a, { jku: `${keys2}/jwks.json` }))).toMatchObject({ ok: true, source: 'jku' });
    expect(await store.lookup('https://other.example', header(a, { jku: JKU }))).toMatchObject({ ok: true, source: 'jku' });
    expect(calls).toEqual([JKU, `${keys2}/jwks.json`, JKU]); // the cached JKU set was dropped

    store.adopt(new TrustStore());
    expect(await store.lookup('https://other.example', header(a, { jku: JKU }))).toEqual({ ok: false, reason: 'jku_not_allowed' });
  });
});

describe('TrustStore.fromConfig', () => {
  it('pins each file for its origin and keeps the jku allow-list, fetcher and clock', async () => {
    const [p, j] = [await testKey(), await testKey()];
    const clock = manualClock('2026-12-04T00:00:00Z');
    const { fetchJwks, calls } = fetcher({ [JKU]: jwksBytes([j], { perKey: { [j.kid]: { exp: Date.parse('2026-12-04T00:00:01Z') / 1000 } } }) });
    const files: Record<string, Uint8Array> = { '/etc/baton/extractor.jwks': jwksBytes([p]) };
    const store = await TrustStore.fromConfig({ pinnedJwks: { [ORIGIN]: '/etc/baton/extractor.jwks' }, jkuAllowedOrigins: [KEYS] }, { readFile: async (f) => files[f]!, fetchJwks, clock });
    expect(await store.lookup(ORIGIN, header(p))).toMatchObject({ ok: true, source: 'pinned', key: { kid: p.kid } });
    expect(await store.lookup(ORIGIN, header(j, { jku: JKU }))).toMatchObject({ ok: true, source: 'jku' });
    expect(calls).toEqual([JKU]);
    clock.advance(1_000); // the injected clock decides the key's expiry
    expect(await store.lookup(ORIGIN, header(j, { jku: JKU }))).toEqual({ ok: false, reason: 'expired' });
  });

  it('names the setting and the file (each cut) when a pinned JWKS does not parse', async () => {
    const origin = `https://${'o'.repeat(300)}.example`;
    const file = `/${'f'.repeat(600)}.jwks`;
    const e = await expectCodeAsync(TrustStore.fromConfig({ pinnedJwks: { [origin]: file }, jkuAllowedOrigins: [] }, { readFile: async () => Buffer.from('{}') }), 'invalid_request');
    expect(e.message).toBe(`trust.pinnedJwks["${origin.slice(0, 256)}"] (${file.slice(0, 512)}): JWKS is malformed`);
    expect(e.details).toEqual({});
  });
});
