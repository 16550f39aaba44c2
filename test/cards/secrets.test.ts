import { describe, expect, it } from 'vitest';
import { assertNoSecrets } from '../../src/cards/secrets.ts';
import { expectCode } from '../helpers/errors.ts';

describe('credential tripwire (RW-003 §4.3)', () => {
  const leaks: Array<[string, unknown, string]> = [
    ['bearer token', { description: 'Authorization: Bearer 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c' }, '/description'],
    ['basic credentials', { note: 'Basic dXNlcjpwYXNzd29yZDEyMw==' }, '/note'],
    ['JWT', { sample: 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl' }, '/sample'],
    ['PEM private key', ['ok', '-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----'], '/1'],
    ['JWK with d', { keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'x', d: 'd' }] }, '/keys/0'],
    ['symmetric JWK', { kty: 'oct', k: 'c2VjcmV0' }, ''],
    ['password member', { auth: { password: 'hunter22' } }, '/auth/password'],
    ['api_key member', { 'api-key': 'abc' }, '/api-key'],
    ['cookie member', { Cookie: 'session=abc' }, '/Cookie'],
    ['URL with credentials', { url: 'https://bob:s3cret@agent.example/a2a' }, '/url'],
    ['GitHub token', { t: 'ghp_abcdefghijklmnopqrstuvwxyz0123456789' }, '/t'],
  ];
  for (const [name, value, path] of leaks) {
    it(`refuses ${name} and reports only the path`, () => {
      const e = expectCode(() => assertNoSecrets(value), 'invalid_request');
      expect(e.details).toEqual({ path });
      expect(e.message).not.toMatch(/hunter22|3f9a8b7c|dXNlcj|s3cret|ghp_/);
    });
  }

  it('lets ordinary card prose and A2A security declarations through', () => {
    assertNoSecrets({
      description: 'Accepts bearer tokens and provides basic functionality for authentication.',
      securitySchemes: {
        bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT' } },
        key: { apiKeySecurityScheme: { location: 'header', name: 'X-API-Key' } },
        oauth: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: 'https://auth.example/token', scopes: {} } } } },
      },
      supported_adapters: [{ authentication_methods: ['bearer', 'mtls'], endpoint_ref: 'https://agent.example/a2a' }],
      secret_ref: 'vault://kv/baton/extractor',
      password: '',
    });
  });

  describe('JWS signatures: the card\'s own, and a continuity attestation', () => {
    const header = (h: object) => Buffer.from(JSON.stringify(h)).toString('base64url');
    // The shape CI met: a generated ES256 signature whose base64url held "-sk-" and 20 more characters.
    const signature = `MEUCIQDx9${'-sk-'}Qm7Hc2pV1bN8dK4fR0tY6wZ3aE5gJ9uL_sO2iX`;

    it('does not read a signature value as a credential', () => {
      assertNoSecrets({ name: 'a', signatures: [{ protected: header({ alg: 'ES256', kid: 'k1' }), signature }] });
    });

    it('does not read a nested attestation\'s signature as a credential', () => {
      assertNoSecrets({ params: { continuity: { attestation: { protected: header({ alg: 'ES256', kid: 'k1' }), signature } } } });
    });

    it('scans the protected header it encodes, and reports the path inside it', () => {
      const e = expectCode(
        () => assertNoSecrets({ signatures: [{ protected: header({ alg: 'ES256', jku: 'https://bob:s3cret@keys.example/jwks' }), signature: 'x' }] }),
        'invalid_request',
      );
      expect(e.details).toEqual({ path: '/signatures/0/protected/jku' });
    });

    it('still scans the unprotected header, and a "signature" member anywhere else', () => {
      const inHeader = expectCode(() => assertNoSecrets({ signatures: [{ protected: header({ alg: 'ES256' }), signature: 'x', header: { note: signature } }] }), 'invalid_request');
      expect(inHeader.details).toEqual({ path: '/signatures/0/header/note' });
      const elsewhere = expectCode(() => assertNoSecrets({ skills: [{ signature }] }), 'invalid_request');
      expect(elsewhere.details).toEqual({ path: '/skills/0/signature' });
    });
  });
});
