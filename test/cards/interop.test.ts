/**
 * Interop with @a2a-js/sdk 1.3.0's card signing (src/signature.ts in
 * a2aproject/a2a-js; dist/index.js `canonicalizeAgentCard`,
 * `generateAgentCardSignature`, `verifyAgentCardSignature`). Both directions
 * work for cards without empty values. The SDK bugs hit along the way are
 * pinned as tests below rather than worked around in Baton's canonical form.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalizeAgentCard, generateAgentCardSignature, verifyAgentCardSignature } from '@a2a-js/sdk';
import type { AgentCard } from '@a2a-js/sdk';
import { DefaultAgentCardResolver } from '@a2a-js/sdk/client';
import { importJWK, type CryptoKey, type JWK } from 'jose';
import { describe, expect, it, vi } from 'vitest';
import { cardSigningText } from '../../src/cards/canonical-card.ts';
import { createDocumentFetcher } from '../../src/cards/fetch.ts';
import { parseJwks } from '../../src/cards/jwks.ts';
import { loadCardPublisher } from '../../src/cards/publisher.ts';
import { CardResolver } from '../../src/cards/resolver.ts';
import { TrustStore } from '../../src/cards/trust-store.ts';
import { verifyCardBytes } from '../../src/cards/verify.ts';
import { Keyring } from '../../src/keys/keyring.ts';
import { parseStrictJson } from '../../src/records/strict-json.ts';
import { systemClock } from '../../src/records/time.ts';
import { expectCodeAsync } from '../helpers/errors.ts';
import { FIXTURES, loopbackServer, ORIGIN, parse, remoteCard, signedBytes, testKey, trustFor, type JsonObject } from './helpers.ts';

type SdkCard = Parameters<typeof canonicalizeAgentCard>[0];
const sdkKeys = (keys: JWK[]) => async (kid: string): Promise<CryptoKey> => {
  const jwk = keys.find((k) => k.kid === kid)!;
  return (await importJWK(jwk, jwk.alg)) as CryptoKey;
};
const quietly = <T>(p: Promise<T>) => {
  // The SDK verifier console.debug()s every failing signature entry.
  const spy = vi.spyOn(console, 'debug').mockImplementation(() => undefined);
  return p.finally(() => spy.mockRestore());
};

describe('interop with @a2a-js/sdk 1.3.0', () => {
  it('a card signed by Baton verifies with the SDK verifier, given only the JWKS', async () => {
    const keyring = await Keyring.open(await mkdtemp(join(tmpdir(), 'baton-keys-')));
    const p = await loadCardPublisher({ cardsDir: new URL('../../cards/', import.meta.url).pathname, keyring, publicUrl: 'https://baton.example' });
    const jwks = JSON.parse(p.jwks.bytes.toString()) as { keys: JWK[] };
    const raw = JSON.parse(p.primary.publicCard.bytes.toString()) as SdkCard;
    expect(canonicalizeAgentCard(raw)).toBe(cardSigningText(raw as never));
    await verifyAgentCardSignature(sdkKeys(jwks.keys))(raw as AgentCard);
    // Each signature on its own, too (the SDK stops at the first that verifies).
    for (const sig of (raw as AgentCard).signatures) {
      await verifyAgentCardSignature(sdkKeys(jwks.keys))({ ...(raw as AgentCard), signatures: [sig] });
    }
  });

  it('a card signed by the SDK verifies with Baton (file bytes and over HTTP)', async () => {
    const k = await testKey('ES256');
    const card = remoteCard([k]);
    const signed = await generateAgentCardSignature(k.privateKey, { alg: 'ES256', typ: 'JOSE', kid: k.kid })(card as unknown as AgentCard);
    const bytes = Buffer.from(JSON.stringify(signed));
    const v = await verifyCardBytes({ bytes, origin: ORIGIN, source: 'sdk' }, { trust: await trustFor([k]), clock: systemClock });
    expect(v.verified_keys[0]!.kid).toBe(k.kid);

    const host = await loopbackServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(bytes));
    try {
      const trust = new TrustStore();
      trust.pin(host.url, await parseJwks(JSON.stringify({ keys: [k.jwk] })));
      const resolved = await new CardResolver({ fetch: createDocumentFetcher(), trust }).resolve(`${host.url}/.well-known/agent-card.json`);
      expect(resolved.raw_digest).toBe(v.raw_digest);
    } finally {
      await host.close();
    }
  });

  it('EdDSA works both ways', async () => {
    const k = await testKey('EdDSA');
    const fromSdk = await generateAgentCardSignature(k.privateKey, { alg: 'EdDSA', typ: 'JOSE', kid: k.kid })(remoteCard([k]) as unknown as AgentCard);
    await verifyCardBytes({ bytes: Buffer.from(JSON.stringify(fromSdk)), origin: ORIGIN, source: 'sdk' }, { trust: await trustFor([k]), clock: systemClock });
    const fromBaton = parse(await signedBytes(remoteCard([k]), [k]));
    await verifyAgentCardSignature(sdkKeys([k.jwk]))(fromBaton as unknown as AgentCard);
  });

  describe('SDK bugs, pinned (Baton follows the spec)', () => {
    it('BUG 1: SDK canonicalisation drops REQUIRED empty fields, contradicting the A2A §8.4.1 worked example', async () => {
      const example = parseStrictJson(await readFile(new URL('spec-8.4.1-example.json', FIXTURES)));
      const expected = await readFile(new URL('spec-8.4.1-expected.txt', FIXTURES), 'utf8');
      expect(cardSigningText(example)).toBe(expected);
      expect(canonicalizeAgentCard(example as unknown as SdkCard)).toBe('{"capabilities":{"pushNotifications":false,"streaming":false},"name":"Example Agent"}');
    });

    it('BUG 1 consequence: a spec-correct signature over a card with an empty REQUIRED field fails the SDK verifier', async () => {
      const k = await testKey();
      const card = remoteCard([k]);
      ((card.skills as JsonObject[])[0]!).description = '';
      const signed = parse(await signedBytes(card, [k]));
      await verifyCardBytes({ bytes: Buffer.from(JSON.stringify(signed)), origin: ORIGIN, source: 'x' }, { trust: await trustFor([k]), clock: systemClock });
      await expect(quietly(verifyAgentCardSignature(sdkKeys([k.jwk]))(signed as unknown as AgentCard))).rejects.toThrow(/No valid signatures/);
    });

    it('BUG 2: SDK strips empty values inside extension params (a Struct), so they are not covered by its signature', async () => {
      const k = await testKey();
      const card = remoteCard([k]);
      const other = { uri: 'urn:example:other-extension', params: { mode: 'strict', allow: [] as string[] } };
      ((card.capabilities as JsonObject).extensions as JsonObject[]).push(other);
      const signed = (await generateAgentCardSignature(k.privateKey, { alg: 'ES256', typ: 'JOSE', kid: k.kid })(card as unknown as AgentCard)) as unknown as JsonObject;
      const stripped = structuredClone(signed);
      delete (((stripped.capabilities as JsonObject).extensions as JsonObject[])[1]!.params as JsonObject).allow;
      // The SDK accepts the modified card: that member was never covered.
      await verifyAgentCardSignature(sdkKeys([k.jwk]))(stripped as unknown as AgentCard);
      // Baton covers params verbatim, so the SDK's own signature does not verify here (fails closed).
      const e = await expectCodeAsync(
        verifyCardBytes({ bytes: Buffer.from(JSON.stringify(signed)), origin: ORIGIN, source: 'x' }, { trust: await trustFor([k]), clock: systemClock }),
        'invalid_request',
      );
      expect(e.message).toMatch(/does not verify/);
    });

    it('BUG 3: verifying the SDK client-normalised card drops securitySchemes from the payload', async () => {
      const k = await testKey();
      const raw = parse(await signedBytes(remoteCard([k]), [k]));
      await verifyAgentCardSignature(sdkKeys([k.jwk]))(raw as unknown as AgentCard);
      const normalised = new DefaultAgentCardResolver().normalizeAgentCard(raw);
      expect(JSON.parse(canonicalizeAgentCard(normalised)).securitySchemes).toBeUndefined();
      await expect(quietly(verifyAgentCardSignature(sdkKeys([k.jwk]))(normalised))).rejects.toThrow(/No valid signatures/);
    });

    it('BUG 4: the SDK verifier has no algorithm allow-list; Baton refuses HS256 outright', async () => {
      const secret = new TextEncoder().encode('0123456789abcdef0123456789abcdef');
      const card = remoteCard([]);
      // The SDK's types say asymmetric keys only, but nothing checks at runtime.
      const asKey = secret as unknown as JWK;
      const hs = await generateAgentCardSignature(asKey, { alg: 'HS256', typ: 'JOSE', kid: 'shared' })(card as unknown as AgentCard);
      await verifyAgentCardSignature(async () => asKey)(hs);
      const e = await expectCodeAsync(
        verifyCardBytes({ bytes: Buffer.from(JSON.stringify(hs)), origin: ORIGIN, source: 'x' }, { trust: new TrustStore(), clock: systemClock }),
        'invalid_request',
      );
      expect(e.message).toMatch(/allow-list/);
    });
  });
});
