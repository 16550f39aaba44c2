import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express, { type ErrorRequestHandler } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentFetcher } from '../../src/cards/fetch.ts';
import { parseJwks } from '../../src/cards/jwks.ts';
import { loadCardPublisher, type CardPublisher } from '../../src/cards/publisher.ts';
import { CardResolver } from '../../src/cards/resolver.ts';
import { TrustStore } from '../../src/cards/trust-store.ts';
import { toBatonError, WIRE_CODES, errorBody } from '../../src/http/error-map.ts';
import { wellKnownRouter } from '../../src/http/well-known.ts';
import { Keyring } from '../../src/keys/keyring.ts';

const REPO_CARDS = new URL('../../cards/', import.meta.url).pathname;
let server: Server;
let base: string;
let publisher: CardPublisher;

beforeAll(async () => {
  const keyring = await Keyring.open(await mkdtemp(join(tmpdir(), 'baton-keys-')));
  publisher = await loadCardPublisher({ cardsDir: REPO_CARDS, keyring, publicUrl: 'https://baton.example' });
  const app = express();
  app.set('etag', false);
  app.use(
    wellKnownRouter({
      publisher,
      authenticate: async (req) => (req.headers.authorization === 'Bearer test-principal-token' ? { subject: 'alice' } : undefined),
    }),
  );
  const onError: ErrorRequestHandler = (err, _req, res, _next) => {
    const e = toBatonError(err);
    res.status(WIRE_CODES[e.code].http).json(errorBody(e));
  };
  app.use(onError);
  server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('well-known router', () => {
  it('serves the exact signed bytes with ETag, Cache-Control max-age and Last-Modified', async () => {
    const res = await fetch(`${base}/.well-known/agent-card.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('etag')).toBe(publisher.primary.publicCard.etag);
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(res.headers.get('last-modified')).toBe(publisher.primary.publicCard.lastModified.toUTCString());
    expect(Buffer.from(await res.arrayBuffer())).toEqual(publisher.primary.publicCard.bytes);
  });

  it('answers 304 to If-None-Match (also weak and in a list) and to If-Modified-Since', async () => {
    const etag = publisher.primary.publicCard.etag;
    const opaque = etag.replace(/^W\//, '');
    for (const inm of [etag, opaque, `"other", ${etag}`, '*']) {
      const res = await fetch(`${base}/.well-known/agent-card.json`, { headers: { 'if-none-match': inm } });
      expect(res.status).toBe(304);
      expect(res.headers.get('etag')).toBe(etag);
      expect((await res.arrayBuffer()).byteLength).toBe(0);
    }
    const changed = await fetch(`${base}/.well-known/agent-card.json`, { headers: { 'if-none-match': '"stale"' } });
    expect(changed.status).toBe(200);
    const ims = await fetch(`${base}/.well-known/agent-card.json`, { headers: { 'if-modified-since': new Date().toUTCString() } });
    expect(ims.status).toBe(304);
    // If-None-Match wins over If-Modified-Since (RFC 9110 §13.2.2).
    const both = await fetch(`${base}/.well-known/agent-card.json`, {
      headers: { 'if-none-match': '"stale"', 'if-modified-since': new Date().toUTCString() },
    });
    expect(both.status).toBe(200);
  });

  it('serves per-agent cards and the JWKS', async () => {
    const per = await fetch(`${base}/.well-known/agent-cards/gateway.json`);
    expect(per.status).toBe(200);
    expect(Buffer.from(await per.arrayBuffer())).toEqual(publisher.primary.publicCard.bytes);
    expect((await fetch(`${base}/.well-known/agent-cards/nope.json`)).status).toBe(404);
    const jwks = await fetch(`${base}/.well-known/jwks.json`);
    expect(jwks.headers.get('content-type')).toMatch(/^application\/jwk-set\+json/);
    const set = await parseJwks(Buffer.from(await jwks.arrayBuffer()));
    expect(set.keys.size).toBeGreaterThanOrEqual(2);
  });

  it('serves the extended card only to authenticated callers, privately', async () => {
    const anon = await fetch(`${base}/extendedAgentCard`);
    expect(anon.status).toBe(401);
    expect(((await anon.json()) as { error: { code: string } }).error.code).toBe('authentication_required');
    const wrong = await fetch(`${base}/extendedAgentCard`, { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    const ok = await fetch(`${base}/agents/gateway/extendedAgentCard`, { headers: { authorization: 'Bearer test-principal-token' } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('cache-control')).toBe('private, no-cache');
    expect(ok.headers.get('vary')).toMatch(/Authorization/);
    expect(await ok.text()).toContain('review_baton_gateway_internal_1');
  });

  it('an outside verifier given only the served JWKS verifies every served card (through the real resolver)', async () => {
    const trust = new TrustStore();
    trust.pin(base, await parseJwks(Buffer.from(await (await fetch(`${base}/.well-known/jwks.json`)).arrayBuffer())));
    const resolver = new CardResolver({ fetch: createDocumentFetcher(), trust });
    for (const path of ['/.well-known/agent-card.json', ...publisher.cards.map((c) => `/.well-known/agent-cards/${c.slug}.json`)]) {
      const v = await resolver.resolve(`${base}${path}`);
      expect(v.raw_digest).toBe(publisher.primary.publicCard.digest);
    }
  });
});
