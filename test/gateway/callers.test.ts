import { createHash } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCallerAuthenticator, type CallerAuthenticator } from '../../src/gateway/callers.ts';
import { expectCodeAsync } from '../helpers/errors.ts';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const jwtConfig = { issuer: 'https://idp.example', audience: 'baton', jwksFile: 'unused', algorithms: ['ES256' as const] };

let auth: CallerAuthenticator;
let key: CryptoKey;
let other: CryptoKey;
beforeAll(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  key = pair.privateKey as CryptoKey;
  other = (await generateKeyPair('ES256')).privateKey as CryptoKey;
  const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: 'idp-1', alg: 'ES256' };
  auth = createCallerAuthenticator(
    [
      { id: 'planner', apiKeySha256: sha('k-planner'), preset: 'standard' },
      { id: 'robot', jwtSubject: 'svc-robot', preset: 'standard' },
    ],
    { config: jwtConfig, jwks: { keys: [jwk] } },
  );
});

const token = (claims: Record<string, unknown>, signer = () => key, alg = 'ES256') =>
  new SignJWT(claims).setProtectedHeader({ alg, kid: 'idp-1' }).setIssuedAt().setExpirationTime('5m').sign(signer());

describe('caller authentication', () => {
  it('maps an API key (header or bearer) to its configured caller, never to a claimed name', async () => {
    expect(await auth.authenticate({ 'x-api-key': 'k-planner' })).toMatchObject({ id: 'planner', via: 'api_key', preset: 'standard' });
    expect(await auth.authenticate({ authorization: 'Bearer k-planner' })).toMatchObject({ id: 'planner' });
    expect((await auth.authenticate({ 'x-api-key': 'k-planner' }))!.actor.object_id).toBe('actor_caller_planner');
    await expectCodeAsync(auth.authenticate({ 'x-api-key': 'k-wrong' }), 'authentication_required');
  });

  it('no credentials is "anonymous", not an error (the route decides)', async () => {
    expect(await auth.authenticate({})).toBeUndefined();
  });

  it('accepts a JWT from the configured issuer and audience, for a configured subject only', async () => {
    const ok = await token({ sub: 'svc-robot', iss: jwtConfig.issuer, aud: 'baton' });
    expect(await auth.authenticate({ authorization: `Bearer ${ok}` })).toMatchObject({ id: 'robot', via: 'jwt' });
  });

  it.each([
    ['wrong audience', { sub: 'svc-robot', iss: 'https://idp.example', aud: 'elsewhere' }],
    ['wrong issuer', { sub: 'svc-robot', iss: 'https://evil.example', aud: 'baton' }],
    ['unknown subject', { sub: 'svc-other', iss: 'https://idp.example', aud: 'baton' }],
  ])('rejects a JWT with %s', async (_n, claims) => {
    await expectCodeAsync(auth.authenticate({ authorization: `Bearer ${await token(claims)}` }), 'authentication_required');
  });

  it('rejects a forged, unsigned or expired JWT', async () => {
    const claims = { sub: 'svc-robot', iss: jwtConfig.issuer, aud: 'baton' };
    await expectCodeAsync(auth.authenticate({ authorization: `Bearer ${await token(claims, () => other)}` }), 'authentication_required');
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const body = Buffer.from(JSON.stringify({ ...claims, exp: Math.floor(Date.now() / 1000) + 60 })).toString('base64url');
    await expectCodeAsync(auth.authenticate({ authorization: `Bearer ${header}.${body}.` }), 'authentication_required');
    const expired = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: 'idp-1' }).setIssuedAt(1_000_000).setExpirationTime(1_000_060).sign(key);
    await expectCodeAsync(auth.authenticate({ authorization: `Bearer ${expired}` }), 'authentication_required');
  });
});
