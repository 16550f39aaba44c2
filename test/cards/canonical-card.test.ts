import { readFileSync } from 'node:fs';
import { base64url } from 'jose';
import { describe, expect, it } from 'vitest';
import { cardSigningText, signingView } from '../../src/cards/canonical-card.ts';
import { readProtectedHeader } from '../../src/records/signature.ts';
import { parseStrictJson } from '../../src/records/strict-json.ts';
import { FIXTURES, remoteCard } from './helpers.ts';

describe('A2A §8.4.1 canonical payload', () => {
  it('reproduces the spec worked example byte for byte', () => {
    const input = parseStrictJson(readFileSync(new URL('spec-8.4.1-example.json', FIXTURES)));
    const expected = readFileSync(new URL('spec-8.4.1-expected.txt', FIXTURES), 'utf8');
    expect(cardSigningText(input)).toBe(expected);
  });

  it('decodes the spec §8.4.2 example protected header to the documented JSON', () => {
    const protectedB64 =
      'eyJhbGciOiJFUzI1NiIsInR5cCI6IkpPU0UiLCJraWQiOiJrZXktMSIsImprdSI6Imh0dHBzOi8vZXhhbXBsZS5jb20vYWdlbnQvandrcy5qc29uIn0';
    expect(new TextDecoder().decode(base64url.decode(protectedB64))).toBe(
      '{"alg":"ES256","typ":"JOSE","kid":"key-1","jku":"https://example.com/agent/jwks.json"}',
    );
    const header = readProtectedHeader({ protected: protectedB64, signature: 'QFdkNLNszlGj3z3u0YQGt_T9LixY3qtdQpZmsTdDHDe3fXV9y9-B3m2-XgCpzuhiLt8E0tV6HXoZKHv4GtHgKQ' });
    expect(header).toMatchObject({ alg: 'ES256', typ: 'JOSE', kid: 'key-1', jku: 'https://example.com/agent/jwks.json' });
  });

  it('excludes signatures and drops implicit-presence defaults at every depth', () => {
    const view = signingView({
      name: 'A',
      description: 'd',
      signatures: [{ protected: 'p', signature: 's' }],
      capabilities: { extensions: [{ uri: 'urn:x', description: '', required: false, params: { empty: '', list: [] } }] },
      supportedInterfaces: [{ url: 'https://a', protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
      securitySchemes: {},
      securityRequirements: [],
      skills: [{ id: 's', name: 'n', description: '', tags: [], examples: [], securityRequirements: [{ schemes: { x: { list: [] } } }] }],
    });
    expect(view).toEqual({
      name: 'A',
      description: 'd',
      // params is a google.protobuf.Struct: kept verbatim, empties included.
      capabilities: { extensions: [{ uri: 'urn:x', params: { empty: '', list: [] } }] },
      supportedInterfaces: [{ url: 'https://a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      // REQUIRED description/tags stay even when empty; the StringList keeps its map entry.
      skills: [{ id: 's', name: 'n', description: '', tags: [], securityRequirements: [{ schemes: { x: {} } }] }],
    });
  });

  it('keeps explicitly set optional fields and unknown members (covered by the signature)', () => {
    const text = cardSigningText({
      name: 'A',
      capabilities: { streaming: false, extendedAgentCard: false },
      documentationUrl: '',
      futureField: { nested: '' },
    });
    expect(text).toBe('{"capabilities":{"extendedAgentCard":false,"streaming":false},"documentationUrl":"","futureField":{"nested":""},"name":"A"}');
  });

  it('is independent of member order and whitespace (RFC 8785)', () => {
    const card = remoteCard([]);
    const reordered = Object.fromEntries(Object.entries(card).reverse());
    expect(cardSigningText(reordered)).toBe(cardSigningText(card));
    expect(cardSigningText(parseStrictJson(JSON.stringify(card, null, 4)))).toBe(cardSigningText(card));
  });

  it('formats numbers and escapes strings per RFC 8785', () => {
    expect(cardSigningText({ name: 'é\u2028"\n', x: [1e21, 0.1, -0, 100, 1.5e-7] })).toBe('{"name":"é\u2028\\"\\n","x":[1e+21,0.1,0,100,1.5e-7]}');
  });
});
