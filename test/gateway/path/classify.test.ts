import { describe, expect, it } from 'vitest';
import { batonCodeOf, classify } from '../../../src/gateway/path/classify.ts';
import { RemoteFailure, RemoteRpcError } from '../../../src/gateway/remote.ts';

const info = (reason: string) => [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'baton', metadata: { baton: reason.toLowerCase() } }];

describe('classifying a remote result (not transmitted, definitely refused, uncertain)', () => {
  it('a request that never left Baton is not_transmitted', () => {
    expect(classify(new RemoteFailure(false, 'ECONNREFUSED')).kind).toBe('not_transmitted');
  });

  it('HTTP 4xx is a refusal before any task exists; 5xx and transport loss after sending are uncertain', () => {
    expect(classify(new RemoteFailure(true, 'remote answered HTTP 401', { status: 401 })).kind).toBe('refused');
    expect(classify(new RemoteFailure(true, 'remote answered HTTP 429', { status: 429 })).kind).toBe('refused');
    expect(classify(new RemoteFailure(true, 'remote answered HTTP 502', { status: 502 })).kind).toBe('uncertain');
    expect(classify(new RemoteFailure(true, 'UND_ERR_SOCKET')).kind).toBe('uncertain');
    expect(classify(new RemoteFailure(true, 'UND_ERR_HEADERS_TIMEOUT')).kind).toBe('uncertain');
  });

  it.each([-32700, -32600, -32601, -32602, -32001, -32002, -32003, -32004, -32005, -32007, -32008, -32009])('JSON-RPC/A2A error %i means not executed', (code) => {
    expect(classify(new RemoteRpcError(code, 'no')).kind).toBe('refused');
  });

  it('an internal error or an invalid agent response says nothing of what ran', () => {
    expect(classify(new RemoteRpcError(-32603, 'boom')).kind).toBe('uncertain');
    expect(classify(new RemoteRpcError(-32006, 'bad response')).kind).toBe('uncertain');
    expect(classify(new Error('anything else')).kind).toBe('uncertain');
  });

  it("a downstream Baton's ADR-0014 refusals are refusals; its unavailable and storage_error stay uncertain", () => {
    for (const code of ['LIMIT_EXCEEDED', 'DENY', 'CONTEXT_INVALIDATED', 'INVALID_REQUEST', 'AUTHENTICATION_REQUIRED', 'INTERACTION_REQUIRED', 'UNSUPPORTED']) {
      expect(classify(new RemoteRpcError(-32055, 'downstream', info(code))).kind, code).toBe('refused');
    }
    expect(classify(new RemoteRpcError(-32050, 'downstream', info('UNAVAILABLE'))).kind).toBe('uncertain');
    expect(classify(new RemoteRpcError(-32603, 'downstream', info('STORAGE_ERROR'))).kind).toBe('uncertain');
  });

  it('reads the code only from a v1.0 ErrorInfo detail list in the baton domain', () => {
    const errorInfo = 'type.googleapis.com/google.rpc.ErrorInfo';
    expect(batonCodeOf(info('LIMIT_EXCEEDED'))).toBe('limit_exceeded');
    expect(batonCodeOf({ '@type': errorInfo, reason: 'DENY', domain: 'baton' })).toBeUndefined(); // §9.5: a list, not an object
    expect(batonCodeOf([{ reason: 'DENY', domain: 'baton' }])).toBeUndefined(); // not an ErrorInfo
    expect(batonCodeOf([{ '@type': errorInfo, reason: 'DENY', domain: 'example.com' }])).toBeUndefined();
    expect(batonCodeOf([{ '@type': errorInfo, reason: 'NOT_A_CODE', domain: 'baton' }])).toBeUndefined();
    expect(batonCodeOf(undefined)).toBeUndefined();
  });
});
