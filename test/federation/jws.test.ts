/**
 * Head statements, control notices and consumption receipts all verify
 * through verifyJws: only under the JWKS pinned for the sender, only
 * ES256/EdDSA, only with the expected `typ`, only strict JSON — and every
 * failure is the one context_invalidated refusal (src/federation/jws.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompactSign, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJwks, type KeySet } from '../../src/cards/jwks.ts';
import { signJws, verifyJws } from '../../src/federation/jws.ts';
import { Keyring } from '../../src/keys/keyring.ts';
import { expectCodeAsync } from '../helpers/errors.ts';

const TYP = 'baton-control-notice+jws';
const NOW = new Date('2026-12-04T12:00:00Z');
const at = (d: Date) => Math.floor(d.getTime() / 1000);
let dir: string;
let keyring: Keyring;
let keys: KeySet;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'baton-jws-'));
  keyring = await Keyring.open(dir, { generate: true });
  keys = await parseJwks(JSON.stringify(keyring.jwks()));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const refused = async (jws: string, set: KeySet = keys, typ = TYP) => {
  const err = await expectCodeAsync(verifyJws(jws, set, typ, NOW), 'context_invalidated');
  expect(err.message).toBe('signed statement did not verify under the pinned keys');
  expect(err.details).toEqual({ reason: 'bad_signature' });
};
/** A compact JWS over `payload` bytes with `header`, signed by `key` (default: the pinned one). */
const raw = async (payload: string, header: Record<string, unknown>, key?: Parameters<CompactSign['sign']>[0]) =>
  new CompactSign(new TextEncoder().encode(payload)).setProtectedHeader({ alg: 'ES256', ...header }).sign(key ?? keyring.current('ES256').privateKey);

describe('verifyJws', () => {
  it('returns the payload signed under a pinned key with the expected typ', async () => {
    expect(await verifyJws(await signJws(keyring, TYP, { heads: [], subject: 'dlg_x' }), keys, TYP, NOW)).toEqual({ heads: [], subject: 'dlg_x' });
  });

  it('refuses another typ, a tampered payload, an unknown or revoked kid, and a key the sender did not pin', async () => {
    const good = await signJws(keyring, TYP, { subject: 'dlg_x' });
    await refused(good, keys, 'baton-consumption-receipt+jws');
    const [h, , s] = good.split('.');
    await refused(`${h}.${Buffer.from('{"subject":"dlg_y"}').toString('base64url')}.${s}`);
    const kid = keyring.current('ES256').kid;
    await refused(good, { keys: keys.keys, revoked: new Set([kid]) });
    await refused(good, { keys: new Map(), revoked: new Set() });
    const { privateKey } = await generateKeyPair('ES256');
    await refused(await raw('{"subject":"dlg_x"}', { kid, typ: TYP }, privateKey));
    await refused(await raw('{"subject":"dlg_x"}', { kid: 'someone-else', typ: TYP }));
  });

  it('refuses a header whose alg is not the pinned key\'s, and a payload that is not strict JSON', async () => {
    const kid = keyring.current('ES256').kid;
    const { privateKey } = await generateKeyPair('EdDSA');
    await refused(await raw('{"subject":"dlg_x"}', { alg: 'EdDSA', kid, typ: TYP }, privateKey));
    await refused(await raw('{"subject":"dlg_x","subject":"dlg_y"}', { kid, typ: TYP }));
    await refused(await raw('{"subject":"dlg_x"}', { kid }));
  });

  it('verifies under a pinned EdDSA key as under an ES256 one', async () => {
    const ed = keyring.current('EdDSA');
    expect(await verifyJws(await raw('{"subject":"dlg_x"}', { alg: 'EdDSA', kid: ed.kid, typ: TYP }, ed.privateKey), keys, TYP, NOW)).toEqual({ subject: 'dlg_x' });
  });

  it('a key verifies only the algorithm its set declares for it, and only ES256 or EdDSA, whatever built the set', async () => {
    // parseJwks never builds such sets; verifyJws must not rely on it.
    const es = await generateKeyPair('ES256');
    const mislabelled: KeySet = { keys: new Map([['k1', { kid: 'k1', alg: 'EdDSA', jwk: {}, key: es.publicKey, thumbprint: 'x' }]]), revoked: new Set() };
    await refused(await raw('{"subject":"dlg_x"}', { alg: 'ES256', kid: 'k1', typ: TYP }, es.privateKey), mislabelled);
    const es384 = await generateKeyPair('ES384');
    const other: KeySet = { keys: new Map([['k2', { kid: 'k2', alg: 'ES384' as 'ES256', jwk: {}, key: es384.publicKey, thumbprint: 'x' }]]), revoked: new Set() };
    await refused(await raw('{"subject":"dlg_x"}', { alg: 'ES384', kid: 'k2', typ: TYP }, es384.privateKey), other);
  });

  it('refuses a statement signed with a pinned key past its exp or before its nbf (A2A §8.4.3), and takes it inside them', async () => {
    const kid = keyring.current('ES256').kid;
    const jws = await signJws(keyring, TYP, { subject: 'dlg_x' });
    const pinned = (bounds: Record<string, number>) => parseJwks(JSON.stringify({ keys: keyring.jwks().keys.map((k) => (k.kid === kid ? { ...k, ...bounds } : k)) }));
    await refused(jws, await pinned({ exp: at(NOW) }));
    await refused(jws, await pinned({ nbf: at(NOW) + 1 }));
    expect(await verifyJws(jws, await pinned({ nbf: at(NOW), exp: at(NOW) + 1 }), TYP, NOW)).toEqual({ subject: 'dlg_x' });
  });

  it('takes a payload of up to 128 KiB', async () => {
    const kid = keyring.current('ES256').kid;
    const within = { pad: 'x'.repeat(100 * 1024) };
    expect(await verifyJws(await raw(JSON.stringify(within), { kid, typ: TYP }), keys, TYP, NOW)).toEqual(within);
    await refused(await raw(JSON.stringify({ pad: 'x'.repeat(128 * 1024) }), { kid, typ: TYP }));
  });
});
