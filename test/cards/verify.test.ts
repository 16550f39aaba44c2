import { base64url, compactVerify, FlattenedSign, importJWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { cardSigningBytes } from '../../src/cards/canonical-card.ts';
import { inMemoryCardHistory, signContinuity } from '../../src/cards/continuity.ts';
import { parseJwks } from '../../src/cards/jwks.ts';
import { signCard } from '../../src/cards/signer.ts';
import { verifyCardBytes, type VerifyCardDeps } from '../../src/cards/verify.ts';
import { manualClock } from '../../src/records/time.ts';
import { expectCodeAsync } from '../helpers/errors.ts';
import { jwksBytes, ORIGIN, parse, remoteCard, rw003Params, signedBytes, testKey, trustFor, type JsonObject } from './helpers.ts';

const clock = manualClock('2025-07-01T00:00:00Z');
const verify = (bytes: Uint8Array, deps: Omit<VerifyCardDeps, 'clock'>) =>
  verifyCardBytes({ bytes, origin: ORIGIN, source: `${ORIGIN}/.well-known/agent-card.json` }, { clock, ...deps });

describe('remote card verification', () => {
  it('accepts a card signed by a pinned key and records form, digests and key', async () => {
    const k = await testKey('ES256');
    const bytes = await signedBytes(remoteCard([k]), [k]);
    const v = await verify(bytes, { trust: await trustFor([k]) });
    expect(v.form).toBe('public');
    expect(v.raw_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(v.payload_digest).not.toBe(v.raw_digest);
    expect(v.verified_keys).toEqual([expect.objectContaining({ kid: k.kid, alg: 'ES256', key_source: 'pinned' })]);
    expect(v.agent_card_id).toBe('card_extractor');
  });

  it('the same buffer again reuses its parse and RW-003 params (frozen); the buffer changed in place is verified afresh', async () => {
    const k = await testKey('ES256');
    const bytes = await signedBytes(remoteCard([k]), [k]);
    const trust = await trustFor([k]);
    const first = await verify(bytes, { trust });
    const again = await verify(bytes, { trust });
    expect(again.rw003).toBe(first.rw003);
    expect(Object.isFrozen(first.rw003) && Object.isFrozen(first.card)).toBe(true);
    expect(again.raw_digest).toBe(first.raw_digest);
    // Same length, one byte different: the cache must not answer for it.
    const at = Buffer.from(bytes).indexOf('card_extractor') + 5;
    bytes[at] = bytes[at]! ^ 1;
    await expectCodeAsync(verify(bytes, { trust }), 'invalid_request');
  });

  it('accepts EdDSA', async () => {
    const k = await testKey('EdDSA');
    const v = await verify(await signedBytes(remoteCard([k]), [k]), { trust: await trustFor([k]) });
    expect(v.verified_keys).toEqual([expect.objectContaining({ kid: k.kid, alg: 'EdDSA', key_source: 'pinned' })]);
    expect(v.agent_card_id).toBe('card_extractor');
  });

  it('refuses a forged signature (signed by an unrelated key under the trusted kid)', async () => {
    const k = await testKey('ES256');
    const forger = { ...(await testKey('ES256')), kid: k.kid };
    const bytes = await signedBytes(remoteCard([k]), [forger]);
    await expectCodeAsync(verify(bytes, { trust: await trustFor([k]) }), 'invalid_request');
  });

  it('refuses a tampered payload', async () => {
    const k = await testKey();
    const card = parse(await signedBytes(remoteCard([k]), [k]));
    rw003Params(card).display_name = 'AGENT-EVIL';
    await expectCodeAsync(verify(Buffer.from(JSON.stringify(card)), { trust: await trustFor([k]) }), 'invalid_request');
  });

  it('refuses alg none and HS256, even with an otherwise valid signature present', async () => {
    const k = await testKey();
    const card = parse(await signedBytes(remoteCard([k]), [k]));
    const none = { protected: base64url.encode(JSON.stringify({ alg: 'none', typ: 'JOSE', kid: k.kid })), signature: 'AA' };
    const hs = await new FlattenedSign(cardSigningBytes(card))
      .setProtectedHeader({ alg: 'HS256', typ: 'JOSE', kid: k.kid })
      .sign(new TextEncoder().encode('0123456789abcdef0123456789abcdef'));
    for (const bad of [none, { protected: hs.protected!, signature: hs.signature }]) {
      const tampered = { ...card, signatures: [...(card.signatures as JsonObject[]), bad] };
      await expectCodeAsync(verify(Buffer.from(JSON.stringify(tampered)), { trust: await trustFor([k]) }), 'invalid_request');
    }
  });

  it('refuses alg and kid in the unprotected header', async () => {
    const k = await testKey();
    const card = parse(await signedBytes(remoteCard([k]), [k]));
    (card.signatures as JsonObject[])[0]!.header = { kid: 'other' };
    await expectCodeAsync(verify(Buffer.from(JSON.stringify(card)), { trust: await trustFor([k]) }), 'invalid_request');
  });

  it('refuses an unknown kid', async () => {
    const signer = await testKey();
    const pinned = await testKey();
    const e = await expectCodeAsync(verify(await signedBytes(remoteCard([signer]), [signer]), { trust: await trustFor([pinned]) }), 'invalid_request');
    expect(e.details).toEqual({ skipped: ['unknown_kid'] });
  });

  it('refuses a kid mismatch: the header names key A, the signature is by key B', async () => {
    const a = await testKey();
    const b = await testKey();
    const bytes = await signedBytes(remoteCard([a]), [{ ...b, kid: a.kid }]);
    await expectCodeAsync(verify(bytes, { trust: await trustFor([a, b]) }), 'invalid_request');
  });

  it('refuses a signing key the RW-003 signer does not declare', async () => {
    const declared = await testKey();
    const other = await testKey();
    const e = await expectCodeAsync(verify(await signedBytes(remoteCard([declared]), [other]), { trust: await trustFor([declared, other]) }), 'invalid_request');
    expect(e.message).toMatch(/kid mismatch/);
  });

  it('refuses an expired key (JWKS exp) and a not-yet-valid key (nbf)', async () => {
    const k = await testKey();
    const bytes = await signedBytes(remoteCard([k]), [k]);
    const past = Math.floor(Date.parse('2025-06-30T00:00:00Z') / 1000);
    const expired = await trustFor([k], { clock, jwks: jwksBytes([k], { perKey: { [k.kid]: { exp: past } } }) });
    expect((await expectCodeAsync(verify(bytes, { trust: expired }), 'invalid_request')).details).toEqual({ skipped: ['expired'] });
    const future = await trustFor([k], { clock, jwks: jwksBytes([k], { perKey: { [k.kid]: { nbf: past + 10 * 86400 } } }) });
    await expectCodeAsync(verify(bytes, { trust: future }), 'invalid_request');
  });

  it('refuses a revoked key (JWKS revoked_kids, and local revocation)', async () => {
    const k = await testKey();
    const bytes = await signedBytes(remoteCard([k]), [k]);
    const listed = await trustFor([k], { jwks: jwksBytes([k], { set: { revoked_kids: [k.kid] } }) });
    await expectCodeAsync(verify(bytes, { trust: listed }), 'invalid_request');
    const local = await trustFor([k]);
    await verify(bytes, { trust: local });
    local.revoke(ORIGIN, k.kid);
    await expectCodeAsync(verify(bytes, { trust: local }), 'invalid_request');
  });

  it('refuses duplicate JSON keys in a card', async () => {
    const k = await testKey();
    const text = Buffer.from(await signedBytes(remoteCard([k]), [k])).toString('utf8');
    const dup = text.replace('{"name":"Extractor agent"', '{"name":"Extractor agent","name":"Other agent"');
    expect(dup).not.toBe(text);
    await expectCodeAsync(verify(Buffer.from(dup), { trust: await trustFor([k]) }), 'invalid_request');
  });

  it('refuses an oversize card with limit_exceeded', async () => {
    const k = await testKey();
    const card = remoteCard([k]);
    card.description = 'x'.repeat(300 * 1024);
    await expectCodeAsync(verify(Buffer.from(JSON.stringify(card)), { trust: await trustFor([k]) }), 'limit_exceeded');
  });

  it('refuses unsigned cards and cards carrying credentials', async () => {
    const k = await testKey();
    await expectCodeAsync(verify(Buffer.from(JSON.stringify(remoteCard([k]))), { trust: await trustFor([k]) }), 'invalid_request');
    const leaky = remoteCard([k]);
    leaky.description = 'call with Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345';
    const e = await expectCodeAsync(verify(await signedBytes(leaky, [k]), { trust: await trustFor([k]) }), 'invalid_request');
    expect(JSON.stringify(e.toJSON())).not.toContain('abcdefghijkl');
  });

  describe('rotation: multiple signatures', () => {
    it('either the old or the new pinned key suffices when both signed', async () => {
      const oldKey = await testKey('ES256');
      const newKey = await testKey('EdDSA');
      const bytes = await signedBytes(remoteCard([oldKey, newKey]), [oldKey, newKey]);
      const onlyOld = await verify(bytes, { trust: await trustFor([oldKey]) });
      expect(onlyOld.verified_keys.map((v) => v.kid)).toEqual([oldKey.kid]);
      expect(onlyOld.skipped_signatures).toEqual([{ index: 1, kid: newKey.kid, reason: 'unknown_kid' }]);
      const onlyNew = await verify(bytes, { trust: await trustFor([newKey]) });
      expect(onlyNew.verified_keys.map((v) => v.kid)).toEqual([newKey.kid]);
      const both = await verify(bytes, { trust: await trustFor([oldKey, newKey]) });
      expect(both.verified_keys).toHaveLength(2);
    });

    it('a revoked old key is skipped while the new one verifies', async () => {
      const oldKey = await testKey();
      const newKey = await testKey();
      const bytes = await signedBytes(remoteCard([oldKey, newKey]), [oldKey, newKey]);
      const trust = await trustFor([oldKey, newKey], { jwks: jwksBytes([oldKey, newKey], { set: { revoked_kids: [oldKey.kid] } }) });
      const v = await verify(bytes, { trust });
      expect(v.skipped_signatures).toEqual([{ index: 0, kid: oldKey.kid, reason: 'revoked' }]);
    });

    it('one bad signature under a trusted key fails the card even if another verifies', async () => {
      const a = await testKey();
      const b = await testKey();
      const card = parse(await signedBytes(remoteCard([a, b]), [a, b]));
      const sigs = card.signatures as JsonObject[];
      sigs[1] = { ...sigs[1]!, signature: sigs[0]!.signature! };
      await expectCodeAsync(verify(Buffer.from(JSON.stringify(card)), { trust: await trustFor([a, b]) }), 'invalid_request');
    });
  });

  describe('RW-003 §4.3 actor continuity', () => {
    const newActor = { object_id: 'actor_extractor_v2', revision_id: 'rev_actor_extractor_v2_1', content_digest: `sha256:${'2'.repeat(64)}` };

    it('refuses an agent_actor_ref change without a continuity attestation', async () => {
      const k = await testKey();
      const history = inMemoryCardHistory();
      const trust = await trustFor([k]);
      await verify(await signedBytes(remoteCard([k]), [k]), { trust, history });
      const changed = remoteCard([k]);
      rw003Params(changed).agent_actor_ref = newActor;
      await expectCodeAsync(verify(await signedBytes(changed, [k]), { trust, history }), 'invalid_request');
    });

    it('accepts a change attested by the key that verified the prior card, refuses any other key', async () => {
      const k = await testKey();
      const stranger = await testKey();
      const history = inMemoryCardHistory();
      const trust = await trustFor([k, stranger]);
      const first = remoteCard([k]);
      await verify(await signedBytes(first, [k]), { trust, history });
      const prior = rw003Params(first).agent_actor_ref as never;
      const changed = (by: typeof k) => async () => {
        const card = remoteCard([k]);
        const params = rw003Params(card);
        params.agent_actor_ref = newActor;
        params.continuity = (await signContinuity({ agentCardId: 'card_extractor', prior, next: newActor, attestedAt: '2025-06-02T00:00:00Z' }, by)) as never;
        return signedBytes(card, [k]);
      };
      await expectCodeAsync(verify(await changed(stranger)(), { trust, history }), 'invalid_request');
      const ok = await verify(await changed(k)(), { trust, history });
      expect(ok.agent_actor_ref).toEqual(newActor);
    });
  });

  describe('JWKS hygiene', () => {
    it('refuses a JWKS holding a private key, a symmetric key or duplicate kids', async () => {
      const k = await testKey();
      const withD = Buffer.from(JSON.stringify({ keys: [{ ...k.jwk, d: 'secret-material' }] }));
      const e = await expectCodeAsync(parseJwks(withD), 'invalid_request');
      expect(JSON.stringify(e.toJSON())).not.toContain('secret-material');
      await expectCodeAsync(parseJwks(Buffer.from(JSON.stringify({ keys: [{ kty: 'oct', kid: 'h', k: 'AAAA' }] }))), 'invalid_request');
      await expectCodeAsync(parseJwks(Buffer.from(JSON.stringify({ keys: [k.jwk, k.jwk] }))), 'invalid_request');
      await expectCodeAsync(parseJwks('{"keys":[],"keys":[]}'), 'invalid_request');
    });

    it('refuses a JWK whose alg disagrees with its curve', async () => {
      const k = await testKey('EdDSA');
      await expectCodeAsync(parseJwks(Buffer.from(JSON.stringify({ keys: [{ ...k.jwk, alg: 'ES256' }] }))), 'invalid_request');
    });
  });

  it('each signature is a plain detached JWS an outside verifier checks with only the JWK (RFC 7515 App. F)', async () => {
    const a = await testKey('ES256');
    const b = await testKey('EdDSA');
    const card = remoteCard([a, b]);
    const signed = await signCard(card, [a, b]);
    const payload = base64url.encode(cardSigningBytes(card));
    for (const [i, key] of [a, b].entries()) {
      const sig = (signed.signatures as JsonObject[])[i]!;
      const { protectedHeader } = await compactVerify(`${sig.protected}.${payload}.${sig.signature}`, await importJWK(key.jwk, key.alg));
      expect(protectedHeader).toEqual({ alg: key.alg, typ: 'JOSE', kid: key.kid });
    }
  });
});
