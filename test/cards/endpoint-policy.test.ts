import { describe, it } from 'vitest';
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
});
