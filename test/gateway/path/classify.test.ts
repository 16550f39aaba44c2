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

describe('classify: the exact boundaries and the reasons it records (mutation group path)', () => {
  const errorInfo = 'type.googleapis.com/google.rpc.ErrorInfo';
  const unavailable = (metadata?: Record<string, string>) => ({ '@type': errorInfo, reason: 'UNAVAILABLE', domain: 'baton', ...(metadata ? { metadata } : {}) });

  it('refuses exactly HTTP 400 to 499: 399 and 500 stay uncertain', () => {
    expect(classify(new RemoteFailure(true, 'remote answered HTTP 302', { status: 302 })).kind).toBe('uncertain');
    expect(classify(new RemoteFailure(true, 'remote answered HTTP 399', { status: 399 })).kind).toBe('uncertain');
    expect(classify(new RemoteFailure(true, 'remote answered HTTP 400', { status: 400 }))).toMatchObject({ kind: 'refused', reason: 'remote answered HTTP 400' });
    expect(classify(new RemoteFailure(true, 'remote answered HTTP 499', { status: 499 })).kind).toBe('refused');
    expect(classify(new RemoteFailure(true, 'remote answered HTTP 500', { status: 500 }))).toEqual({ kind: 'uncertain', reason: 'remote answered HTTP 500' });
  });

  it('records the remote code, and the downstream Baton code when there is one, as the reason', () => {
    expect(classify(new RemoteRpcError(-32601, 'no such method'))).toMatchObject({ kind: 'refused', reason: 'remote error -32601' });
    expect(classify(new RemoteRpcError(-32055, 'downstream', info('DENY')))).toMatchObject({ kind: 'refused', reason: 'remote error -32055 (deny)' });
    expect(classify(new RemoteRpcError(-32603, 'boom'))).toEqual({ kind: 'uncertain', reason: 'remote error -32603' });
    expect(classify(new Error('anything else'))).toEqual({ kind: 'uncertain', reason: 'anything else' });
    expect(classify('not an Error')).toEqual({ kind: 'uncertain', reason: 'unexpected failure' });
  });

  it("a downstream Baton's unavailable is a refusal only when its baton ErrorInfo says beforeTransmission \"true\"", () => {
    expect(classify(new RemoteRpcError(-32050, 'downstream', [unavailable({ beforeTransmission: 'true' })]))).toMatchObject({ kind: 'refused', reason: 'remote error -32050 (unavailable)' });
    // any one detail of the list may say so, beside details that do not (a null one included)
    expect(classify(new RemoteRpcError(-32050, 'downstream', [null, { domain: 'example.com' }, unavailable({ beforeTransmission: 'true' })])).kind).toBe('refused');
    expect(classify(new RemoteRpcError(-32050, 'downstream', [unavailable({ beforeTransmission: 'false' })])).kind).toBe('uncertain');
    expect(classify(new RemoteRpcError(-32050, 'downstream', [unavailable()])).kind).toBe('uncertain'); // no metadata at all
    // only the baton domain speaks for a downstream Baton
    expect(classify(new RemoteRpcError(-32050, 'downstream', [unavailable(), { domain: 'example.com', metadata: { beforeTransmission: 'true' } }])).kind).toBe('uncertain');
    // without a baton code it is not a downstream Baton's answer at all
    expect(classify(new RemoteRpcError(-32050, 'downstream', [{ domain: 'baton', metadata: { beforeTransmission: 'true' } }])).kind).toBe('uncertain');
  });

  it('skips details that are null or whose reason is not a string', () => {
    expect(batonCodeOf([null, { '@type': errorInfo, reason: 42, domain: 'baton' }, { '@type': errorInfo, reason: 'DENY', domain: 'baton' }])).toBe('deny');
    expect(batonCodeOf([{ '@type': errorInfo, reason: { toLowerCase: () => 'deny' }, domain: 'baton' }])).toBeUndefined();
  });
});
