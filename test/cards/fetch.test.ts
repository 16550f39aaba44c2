import { afterEach, describe, expect, it } from 'vitest';
import { createDocumentFetcher, jwksFetcherOf } from '../../src/cards/fetch.ts';
import { CardResolver } from '../../src/cards/resolver.ts';
import { TrustStore } from '../../src/cards/trust-store.ts';
import { verifyCardBytes } from '../../src/cards/verify.ts';
import { parseJwks } from '../../src/cards/jwks.ts';
import { manualClock } from '../../src/records/time.ts';
import { expectCodeAsync } from '../helpers/errors.ts';
import { jwksBytes, loopbackServer, remoteCard, signedBytes, testKey, type Handler } from './helpers.ts';

const servers: Array<{ close(): Promise<void> }> = [];
async function serve(handler: Handler) {
  const s = await loopbackServer(handler);
  servers.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('document fetcher (undici, loopback servers)', () => {
  it('returns the raw bytes and caching headers', async () => {
    const s = await serve((_req, res) => res.writeHead(200, { etag: '"a"', 'cache-control': 'max-age=60' }).end('{"x":1}'));
    const res = await createDocumentFetcher()(`${s.url}/card`);
    expect(res.status).toBe(200);
    if (res.status === 200) expect(Buffer.from(res.bytes).toString()).toBe('{"x":1}');
    expect(res.etag).toBe('"a"');
  });

  it('bounds redirects (limit_exceeded), follows a short chain', async () => {
    const s = await serve((req, res) => {
      const n = Number(req.url!.slice(1));
      if (n > 0) res.writeHead(302, { location: `/${n - 1}` }).end();
      else res.writeHead(200).end('{}');
    });
    const fetcher = createDocumentFetcher({ maxRedirects: 3 });
    expect((await fetcher(`${s.url}/3`)).status).toBe(200);
    await expectCodeAsync(fetcher(`${s.url}/4`), 'limit_exceeded');
    const loop = await serve((_req, res) => res.writeHead(301, { location: '/again' }).end());
    await expectCodeAsync(fetcher(`${loop.url}/start`), 'limit_exceeded');
  });

  it('refuses an oversize body, declared or streamed', async () => {
    const declared = await serve((_req, res) => res.writeHead(200, { 'content-length': String(2048) }).end('x'.repeat(2048)));
    const streamed = await serve((_req, res) => {
      res.writeHead(200);
      for (let i = 0; i < 8; i++) res.write('y'.repeat(512));
      res.end();
    });
    const fetcher = createDocumentFetcher({ maxBytes: 1024 });
    await expectCodeAsync(fetcher(declared.url), 'limit_exceeded');
    await expectCodeAsync(fetcher(streamed.url), 'limit_exceeded');
  });

  it('times out a slow server as unavailable', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200);
      res.write('{');
      // never finishes
    });
    await expectCodeAsync(createDocumentFetcher({ timeoutMs: 200 })(s.url), 'unavailable');
  });

  it('maps error statuses and unreachable hosts to unavailable', async () => {
    const s = await serve((_req, res) => res.writeHead(500).end());
    await expectCodeAsync(createDocumentFetcher()(s.url), 'unavailable');
    const closed = await loopbackServer((_q, r) => r.end());
    const url = closed.url;
    await closed.close();
    await expectCodeAsync(createDocumentFetcher({ timeoutMs: 1000 })(url), 'unavailable');
  });

  it('refuses plain http off loopback and URLs with credentials, before any network I/O', async () => {
    await expectCodeAsync(createDocumentFetcher()('http://agent.example/card'), 'invalid_request');
    await expectCodeAsync(createDocumentFetcher()('https://user:pw@agent.example/card'), 'invalid_request');
    await expectCodeAsync(createDocumentFetcher()('ftp://agent.example/card'), 'invalid_request');
  });
});

describe('jku handling through the trust store', () => {
  it('refuses a jku from a non-allow-listed origin without fetching it', async () => {
    const k = await testKey();
    const keyHost = await serve((_req, res) => res.writeHead(200).end(jwksBytes([k])));
    const bytes = await signedBytes(remoteCard([k]), [k], { jku: `${keyHost.url}/jwks.json` });
    const trust = new TrustStore({ jkuAllowedOrigins: ['https://keys.partner.example'], fetchJwks: jwksFetcherOf(createDocumentFetcher()) });
    const e = await expectCodeAsync(
      verifyCardBytes({ bytes, origin: 'https://extractor.example', source: 'x' }, { trust, clock: manualClock('2025-07-01T00:00:00Z') }),
      'invalid_request',
    );
    expect(e.details).toEqual({ skipped: ['jku_not_allowed'] });
    expect(keyHost.hits()).toBe(0);
  });

  it('honours a jku from an allow-listed origin', async () => {
    const k = await testKey('EdDSA');
    const keyHost = await serve((_req, res) => res.writeHead(200).end(jwksBytes([k])));
    const jku = `${keyHost.url}/jwks.json`;
    const bytes = await signedBytes(remoteCard([k]), [k], { jku });
    const trust = new TrustStore({ jkuAllowedOrigins: [keyHost.url], fetchJwks: jwksFetcherOf(createDocumentFetcher()) });
    const v = await verifyCardBytes({ bytes, origin: 'https://extractor.example', source: 'x' }, { trust, clock: manualClock('2025-07-01T00:00:00Z') });
    expect(v.verified_keys).toEqual([expect.objectContaining({ kid: k.kid, key_source: 'jku', jku })]);
    expect(keyHost.hits()).toBe(1);
  });

  it('prefers a pinned key over a jku for the same kid', async () => {
    const k = await testKey();
    const keyHost = await serve((_req, res) => res.writeHead(200).end(jwksBytes([k])));
    const bytes = await signedBytes(remoteCard([k]), [k], { jku: `${keyHost.url}/jwks.json` });
    const trust = new TrustStore({ jkuAllowedOrigins: [keyHost.url], fetchJwks: jwksFetcherOf(createDocumentFetcher()) });
    trust.pin('https://extractor.example', await parseJwks(jwksBytes([k])));
    const v = await verifyCardBytes({ bytes, origin: 'https://extractor.example', source: 'x' }, { trust, clock: manualClock('2025-07-01T00:00:00Z') });
    expect(v.verified_keys[0]!.key_source).toBe('pinned');
    expect(keyHost.hits()).toBe(0);
  });
});

describe('card resolver: HTTP caching (RFC 9111) and fail-closed re-verification', () => {
  async function setup(cacheControl: string) {
    const k = await testKey();
    const body = await signedBytes(remoteCard([k]), [k]);
    const seen: Array<string | undefined> = [];
    const host = await serve((req, res) => {
      seen.push(req.headers['if-none-match']);
      if (req.headers['if-none-match'] === '"v1"') return res.writeHead(304, { etag: '"v1"', 'cache-control': cacheControl }).end();
      res.writeHead(200, { etag: '"v1"', 'cache-control': cacheControl, 'content-type': 'application/json' }).end(body);
    });
    const clock = manualClock('2025-07-01T00:00:00Z');
    const trust = new TrustStore({ clock });
    trust.pin(host.url, await parseJwks(jwksBytes([k])));
    const resolver = new CardResolver({ fetch: createDocumentFetcher(), trust, clock });
    return { k, host, seen, clock, trust, resolver, url: `${host.url}/.well-known/agent-card.json` };
  }

  it('serves from cache while fresh, then revalidates with If-None-Match (304)', async () => {
    const t = await setup('max-age=60');
    const first = await t.resolver.resolve(t.url);
    await t.resolver.resolve(t.url);
    expect(t.host.hits()).toBe(1);
    t.clock.advance(61_000);
    const again = await t.resolver.resolve(t.url);
    expect(t.seen).toEqual([undefined, '"v1"']);
    expect(again.raw_digest).toBe(first.raw_digest);
  });

  it('does not store no-store responses', async () => {
    const t = await setup('no-store');
    await t.resolver.resolve(t.url);
    await t.resolver.resolve(t.url);
    expect(t.seen).toEqual([undefined, undefined]);
  });

  it('a key revoked after caching fails the cached card closed', async () => {
    const t = await setup('max-age=3600');
    await t.resolver.resolve(t.url);
    t.trust.revoke(t.host.url, t.k.kid);
    await expectCodeAsync(t.resolver.resolve(t.url), 'invalid_request');
    expect(t.host.hits()).toBe(1);
  });
});
