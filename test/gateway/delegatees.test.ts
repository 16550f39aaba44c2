import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCard, cardJson } from '../../e2e/agents/card.ts';
import { signAgentCard } from '../../e2e/agents/signed-card.ts';
import { createDocumentFetcher } from '../../src/cards/fetch.ts';
import { parseJwks } from '../../src/cards/jwks.ts';
import { CardResolver } from '../../src/cards/resolver.ts';
import { signCard } from '../../src/cards/signer.ts';
import { TrustStore } from '../../src/cards/trust-store.ts';
import { DelegateeRegistry } from '../../src/gateway/delegatees.ts';
import type { JsonValue } from '../../src/records/strict-json.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { expectCodeAsync } from '../helpers/errors.ts';

type Json = { [key: string]: JsonValue };
const announcer = { object_id: 'actor_baton', revision_id: 'rev_1', content_digest: `sha256:${'c'.repeat(64)}` };

let server: Server;
let origin: string;
let served = '';
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'baton-delegatees-'));
  server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(served));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

/** A card for `name` and a key that signs it; re-signing the same content yields new bytes (ES256 is randomised). */
async function partner(name: string, endpointBase = origin) {
  const base = (await signAgentCard(cardJson(buildCard({ name, baseUrl: endpointBase })) as Json, name, origin)).card;
  const { signatures: _s, ...unsigned } = base;
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const kid = `${name}-es256`; // the kid the card's RW-003 signer block declares
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }] };
  const sign = async () => JSON.stringify(await signCard(unsigned as Json, [{ kid, alg: 'ES256', privateKey }]));
  return { jwks, sign };
}

async function registry(store: SqliteStore, jwks: unknown, policy: { endpointOrigins?: string[]; allowHttp?: boolean } = {}) {
  const trust = new TrustStore();
  trust.pin(origin, await parseJwks(JSON.stringify(jwks)));
  const resolver = new CardResolver({ fetch: createDocumentFetcher(), trust });
  const config = { id: 'p', cardUrl: `${origin}/card.json`, acceptance: {}, inboundAuth: 'token' as const, endpointOrigins: policy.endpointOrigins ?? [], allowHttp: policy.allowHttp ?? true };
  return new DelegateeRegistry([config], { resolver, store, spaceId: 'sp', announcer });
}

describe('delegatee registry', () => {
  it('a card re-signed after the partner restarts (same content, new signature bytes) is the same announcement', async () => {
    const store = SqliteStore.open(join(dir, 'a.db'), { create: true });
    const p = await partner('resigner');
    served = await p.sign();
    const first = await (await registry(store, p.jwks)).resolve('p');
    const again = await p.sign();
    expect(again).not.toBe(served);
    served = again;
    const second = await (await registry(store, p.jwks)).resolve('p'); // a restarted Baton: nothing cached in memory
    expect(second.option.card_ref).toStrictEqual(first.option.card_ref);
    expect((await store.control.head(first.agentScope))?.position).toBe(1);
    await store.close();
  });

  it('refuses a delegatee whose card is not verifiable under the pinned keys, and announces nothing', async () => {
    const store = SqliteStore.open(join(dir, 'b.db'), { create: true });
    const p = await partner('stranger');
    const other = await partner('stranger');
    served = await p.sign();
    const reg = await registry(store, other.jwks);
    // The delegatee's problem, not the caller's (issue #17): unavailable, naming it; remembered for /readyz.
    const e = await expectCodeAsync(reg.resolve('p'), 'unavailable');
    expect(e.details).toMatchObject({ delegatee: 'p', reason: 'card_rejected' });
    expect(reg.cardProblems().map((x) => x.delegatee)).toEqual(['p']);
    expect(await store.control.head({ space_id: 'sp', scope_kind: 'agent', scope_id: 'card_stranger' })).toBeUndefined();
    await store.close();
  });

  it('refuses a correctly signed card that moves its endpoint to another origin, unless the operator lists it', async () => {
    const store = SqliteStore.open(join(dir, 'c.db'), { create: true });
    const p = await partner('mover', 'http://127.0.0.2:9');
    served = await p.sign();
    const refusing = await registry(store, p.jwks);
    const err = await expectCodeAsync(refusing.resolve('p'), 'deny');
    expect(err.details).toMatchObject({ reason: 'endpoint_origin' });
    // Every call would fail: /readyz names it degraded (issue 25 item 8), as for a card that does not verify.
    expect(refusing.cardProblems()).toMatchObject([{ delegatee: 'p', message: 'delegatee card moves its endpoint off the pinned origin' }]);
    expect(await store.control.head({ space_id: 'sp', scope_kind: 'agent', scope_id: 'card_mover' })).toBeUndefined();
    const listed = await (await registry(store, p.jwks, { endpointOrigins: ['http://127.0.0.2:9'] })).resolve('p');
    expect(listed.endpoint).toBe('http://127.0.0.2:9/a2a/jsonrpc');
    await store.close();
  });

  it('refuses a plain http endpoint unless http is allowed for that delegatee', async () => {
    const store = SqliteStore.open(join(dir, 'd.db'), { create: true });
    const p = await partner('plain');
    served = await p.sign();
    const reg = await registry(store, p.jwks, { allowHttp: false });
    const err = await expectCodeAsync(reg.resolve('p'), 'deny');
    expect(err.details).toMatchObject({ reason: 'endpoint_scheme' });
    expect(reg.cardProblems().map((x) => x.delegatee)).toEqual(['p']);
    // The operator allows http (a reload): the next call passes and /readyz is ready again.
    reg.replace([{ ...reg.configOf('p')!, allowHttp: true }]);
    await reg.resolve('p');
    expect(reg.cardProblems()).toEqual([]);
    await store.close();
  });
});
