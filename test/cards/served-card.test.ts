/**
 * The served form of a card (src/cards/served-card.ts): the SDK's
 * canonicaliser, Baton's and plain JCS agree on what every served card's
 * signature covers — the disagreement from issue #14 included.
 */
import { canonicalizeAgentCard, verifyAgentCardSignature, type AgentCard } from '@a2a-js/sdk';
import { importJWK, type CryptoKey } from 'jose';
import { describe, expect, it, vi } from 'vitest';
import { cardSigningText } from '../../src/cards/canonical-card.ts';
import { ambiguities, assertServable, servableForm } from '../../src/cards/served-card.ts';
import { signCard } from '../../src/cards/signer.ts';
import { verifyCardBytes } from '../../src/cards/verify.ts';
import { canonicalText } from '../../src/records/canonical.ts';
import { systemClock } from '../../src/records/time.ts';
import { expectCode } from '../helpers/errors.ts';
import { ORIGIN, remoteCard, testKey, trustFor, type JsonObject } from './helpers.ts';

/** The construct the SDK and Baton used to read two ways: an empty scope list. */
const EMPTY_SCOPES = [{ schemes: { apiKey: { list: [] } } }];

describe('served card form', () => {
  it('finds the values §8.4.1 canonicalisers disagree on: empties anywhere and members outside the schema', () => {
    const card = { ...remoteCard([]), securityRequirements: EMPTY_SCOPES, securitySchemes: { apiKey: { apiKeySecurityScheme: { location: 'header', name: 'X-API-Key' } } }, iconUrl: '', extra: 1 } as JsonObject;
    expect(cardSigningText(card)).not.toBe(canonicalizeAgentCard(card as never)); // the disagreement itself
    expect(ambiguities(card)).toEqual(expect.arrayContaining(['$.securityRequirements[0].schemes.apiKey.list', '$.iconUrl', '$.extra']));
    expectCode(() => assertServable(card), 'unsupported');
  });

  it('brings a card into a form every canonicaliser reads the same way, and the SDK verifier accepts it', async () => {
    const k = await testKey();
    const raw = { ...remoteCard([k]), securityRequirements: [{ schemes: { apiKey: { list: ['a2a'] } } }], securitySchemes: { apiKey: { apiKeySecurityScheme: { location: 'header', name: 'X-API-Key', description: '' } } } } as JsonObject;
    ((raw.skills as JsonObject[])[0]!).examples = [];
    const card = servableForm(raw);
    expect(ambiguities(card)).toEqual([]);
    const { signatures: _s, ...unsigned } = card;
    // Baton, the SDK and plain RFC 8785 over the card as served: one payload.
    expect(cardSigningText(card)).toBe(canonicalizeAgentCard(card as never));
    expect(cardSigningText(card)).toBe(canonicalText(unsigned));
    const signed = await signCard(card, [k]);
    await verifyCardBytes({ bytes: Buffer.from(JSON.stringify(signed)), origin: ORIGIN, source: 'served' }, { trust: await trustFor([k]), clock: systemClock });
    const spy = vi.spyOn(console, 'debug').mockImplementation(() => undefined);
    try {
      await verifyAgentCardSignature(async () => (await importJWK(k.jwk, k.jwk.alg)) as CryptoKey)(signed as unknown as AgentCard);
    } finally {
      spy.mockRestore();
    }
  });

  it('keeps REQUIRED members and RW-003 params as they are', () => {
    const card = servableForm(remoteCard([]));
    expect(card.skills).toEqual(remoteCard([]).skills);
    expect((card.capabilities as JsonObject).extensions).toEqual((remoteCard([]).capabilities as JsonObject).extensions);
  });
});
