import { describe, expect, it } from 'vitest';
import { assertEndpointAllowed } from '../../src/cards/endpoint-policy.ts';
import { expectCode } from '../helpers/errors.ts';

describe('endpoint policy', () => {
  const policy = { cardUrl: 'https://agents.partner.example/.well-known/agent-card.json', endpointOrigins: ['https://rpc.partner.example'], allowHttp: false };
  it('allows the card origin and listed origins over https', () => {
    assertEndpointAllowed('https://agents.partner.example/a2a/jsonrpc', policy);
    assertEndpointAllowed('https://rpc.partner.example/v1', policy);
  });
  it('denies another origin, another port, plain http and non-URLs', () => {
    for (const e of ['https://evil.example/a2a', 'https://agents.partner.example:8443/a2a', 'http://agents.partner.example/a2a', 'not a url']) expectCode(() => assertEndpointAllowed(e, policy), 'deny');
    assertEndpointAllowed('http://127.0.0.1:9/a2a', { cardUrl: 'http://127.0.0.1:9/card.json', endpointOrigins: [], allowHttp: true });
  });

  it('names why: not a URL, or the origin it moved to (cut at 512 characters)', () => {
    expect(expectCode(() => assertEndpointAllowed('not a url', policy), 'deny')).toMatchObject({ message: 'delegatee card names an endpoint that is not a URL', details: {} });
    expect(expectCode(() => assertEndpointAllowed('https://evil.example/a2a', policy), 'deny')).toMatchObject({
      message: 'delegatee card moves its endpoint off the pinned origin',
      details: { endpoint_origin: 'https://evil.example', reason: 'endpoint_origin' },
    });
    const long = `https://${'a'.repeat(600)}.example`;
    const e = expectCode(() => assertEndpointAllowed(`${long}/a2a`, policy), 'deny');
    expect(e.details).toEqual({ endpoint_origin: long.slice(0, 512), reason: 'endpoint_origin' });
  });

  it('an http endpoint on the pinned origin is denied unless http is allowed for the delegatee; other schemes always are', () => {
    const httpCard = { cardUrl: 'http://127.0.0.1:9/card.json', endpointOrigins: [], allowHttp: false };
    expect(expectCode(() => assertEndpointAllowed('http://127.0.0.1:9/a2a', httpCard), 'deny')).toMatchObject({
      message: 'delegatee endpoint is not https and http is not allowed for this delegatee',
      details: { endpoint_origin: 'http://127.0.0.1:9', reason: 'endpoint_scheme' },
    });
    const long = `http://${'a'.repeat(600)}.example`;
    const e = expectCode(() => assertEndpointAllowed(`${long}/a2a`, { cardUrl: `${long}/card.json`, endpointOrigins: [], allowHttp: false }), 'deny');
    expect(e.details).toEqual({ endpoint_origin: long.slice(0, 512), reason: 'endpoint_scheme' });
    for (const scheme of ['ws', 'ftp']) {
      const e = expectCode(() => assertEndpointAllowed(`${scheme}://127.0.0.1:9/a2a`, { cardUrl: `${scheme}://127.0.0.1:9/card.json`, endpointOrigins: [], allowHttp: true }), 'deny');
      expect(e.details).toEqual({ endpoint_origin: `${scheme}://127.0.0.1:9`, reason: 'endpoint_scheme' });
    }
  });
});
