/**
 * A2A v0.3 cards (src/cards/legacy-card.ts): read through the SDK's
 * translator, verified over the raw bytes — a v0.3-only member is covered
 * by the signature like any other.
 */
import { describe, expect, it } from 'vitest';
import { verifyCardBytes } from '../../src/cards/verify.ts';
import { systemClock } from '../../src/records/time.ts';
import { expectCodeAsync } from '../helpers/errors.ts';
import { ORIGIN, parse, remoteCard, signedBytes, testKey, trustFor, type JsonObject } from './helpers.ts';

/** The fixture card in v0.3's shape: url + preferredTransport, card-level protocolVersion. */
function legacy(card: JsonObject): JsonObject {
  const { supportedInterfaces, securitySchemes: _s, securityRequirements: _r, ...rest } = card as JsonObject & { supportedInterfaces: Array<{ url: string }> };
  // v0.3's OpenAPI-shaped schemes and `security`.
  return { ...rest, protocolVersion: '0.3.0', url: supportedInterfaces[0]!.url, preferredTransport: 'JSONRPC', securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } }, security: [{ bearer: ['a2a'] }] };
}

describe('A2A v0.3 Agent Cards', () => {
  it('verify over the raw bytes and read as v1.0 (interfaces at 0.3, RW-003 params intact)', async () => {
    const k = await testKey();
    const bytes = await signedBytes(legacy(remoteCard([k])), [k]);
    const v = await verifyCardBytes({ bytes, origin: ORIGIN, source: 'v03' }, { trust: await trustFor([k]), clock: systemClock });
    expect(v.signed).toBe(true);
    expect(v.card.supportedInterfaces[0]).toMatchObject({ protocolBinding: 'JSONRPC', protocolVersion: '0.3.0' });
    expect(v.rw003?.agent_card_id).toBeDefined();
  });

  it('a changed v0.3-only member breaks the signature', async () => {
    const k = await testKey();
    const card = parse(await signedBytes(legacy(remoteCard([k])), [k]));
    card.url = 'https://elsewhere.example/a2a';
    const e = await expectCodeAsync(verifyCardBytes({ bytes: Buffer.from(JSON.stringify(card)), origin: ORIGIN, source: 'v03' }, { trust: await trustFor([k]), clock: systemClock }), 'invalid_request');
    expect(e.message).toMatch(/does not verify/);
  });

  it('an unsigned card is refused unless the caller explicitly allows it, and then says signed: false', async () => {
    const bytes = Buffer.from(JSON.stringify(remoteCard([])));
    await expectCodeAsync(verifyCardBytes({ bytes, origin: ORIGIN, source: 'u' }, { trust: await trustFor([]), clock: systemClock }), 'invalid_request');
    const v = await verifyCardBytes({ bytes, origin: ORIGIN, source: 'u', allowUnsigned: true }, { trust: await trustFor([]), clock: systemClock });
    expect(v).toMatchObject({ signed: false, verified_keys: [] });
    expect(v.rw003).toBeUndefined();
  });
});
