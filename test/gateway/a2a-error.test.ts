/**
 * The one A2A error renderer (src/gateway/a2a-error.ts): v1.0 ErrorInfo on
 * every error, JSON-RPC `error.data` an array (A2A §9.5), REST a
 * google.rpc.Status in application/a2a+json (A2A §11.6).
 */
import { describe, expect, it } from 'vitest';
import { BatonError } from '../../src/errors.ts';
import { ParseError, renderA2AError, withStatusName } from '../../src/gateway/a2a-error.ts';
import { TaskNotFound } from '../../src/gateway/dispatcher.ts';
import { RemoteRpcError } from '../../src/gateway/remote.ts';

const INFO = 'type.googleapis.com/google.rpc.ErrorInfo';

describe('renderA2AError', () => {
  it('authentication: 401 on both bindings, Baton ErrorInfo, JSON-RPC data as an array', () => {
    const err = new BatonError('authentication_required', 'no credentials');
    const rpc = renderA2AError(err, 'jsonrpc', 5);
    expect(rpc).toEqual({
      status: 401,
      contentType: 'application/json',
      body: { jsonrpc: '2.0', id: 5, error: { code: -32052, message: 'no credentials', data: [{ '@type': INFO, reason: 'AUTHENTICATION_REQUIRED', domain: 'baton', metadata: { baton: 'authentication_required' } }] } },
    });
    const rest = renderA2AError(err, 'rest');
    expect(rest).toEqual({
      status: 401,
      contentType: 'application/a2a+json',
      body: { error: { code: 401, status: 'UNAUTHENTICATED', message: 'no credentials', details: [{ '@type': INFO, reason: 'AUTHENTICATION_REQUIRED', domain: 'baton', metadata: { baton: 'authentication_required' } }] } },
    });
  });

  it('strict JSON: -32700 with an ErrorInfo; size bound: limit_exceeded with its own code and status', () => {
    expect(renderA2AError(new ParseError('duplicate key'), 'jsonrpc').body).toMatchObject({ error: { code: -32700, data: [{ '@type': INFO, reason: 'INVALID_PARAMS' }] } });
    const big = new BatonError('limit_exceeded', 'too large', { max: 10 });
    expect(renderA2AError(big, 'jsonrpc')).toMatchObject({ status: 200, body: { error: { code: -32055, data: [{ reason: 'LIMIT_EXCEEDED', metadata: { baton: 'limit_exceeded', max: '10' } }] } } });
    expect(renderA2AError(big, 'rest')).toMatchObject({ status: 429, body: { error: { status: 'RESOURCE_EXHAUSTED', details: [{ reason: 'LIMIT_EXCEEDED' }] } } });
  });

  it('A2A equivalents: not found, malformed, unsupported', () => {
    expect(renderA2AError(new TaskNotFound('att_x'), 'rest')).toMatchObject({ status: 404, body: { error: { status: 'NOT_FOUND', details: [{ reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org' }] } } });
    expect(renderA2AError(new BatonError('unsupported', 'no'), 'jsonrpc').body).toMatchObject({ error: { code: -32004, data: [{ reason: 'UNSUPPORTED_OPERATION' }] } });
    expect(renderA2AError(new BatonError('invalid_request', 'bad'), 'jsonrpc').body).toMatchObject({ error: { code: -32602, data: [{ reason: 'INVALID_PARAMS' }] } });
  });

  it('a delegatee’s error keeps its meaning, never its text; a non-A2A code is Baton’s unavailable', () => {
    const known = renderA2AError(new RemoteRpcError(-32001, 'Task 7f0c2a9e-1d2b not found'), 'jsonrpc').body as { error: { code: number; message: string } };
    expect(known.error).toMatchObject({ code: -32001, message: 'the delegatee refused the request (A2A error -32001)' });
    expect(renderA2AError(new RemoteRpcError(-32099, 'secret-ish detail'), 'rest')).toMatchObject({ status: 503, body: { error: { status: 'UNAVAILABLE', message: 'the delegatee refused the request (A2A error -32099)', details: [{ reason: 'UNAVAILABLE', metadata: { baton: 'unavailable', remoteCode: '-32099' } }] } } });
  });

  it('withStatusName leaves A2A-domain errors to the SDK’s names', () => {
    const body = { error: { code: 400, status: 'FAILED_PRECONDITION', details: [{ domain: 'a2a-protocol.org' }] } };
    expect(withStatusName(structuredClone(body))).toEqual(body);
  });
});

describe('a downstream Baton’s refusal', () => {
  it('keeps its ADR-0014 code from the ErrorInfo reason, not its text or metadata', () => {
    const data = [{ '@type': INFO, reason: 'LIMIT_EXCEEDED', domain: 'baton', metadata: { baton: 'limit_exceeded', node_id: 'dlg_downstream' } }];
    const r = renderA2AError(new RemoteRpcError(-32055, 'budget exhausted on dlg_downstream', data), 'rest');
    expect(r).toEqual({ status: 429, contentType: 'application/a2a+json', body: { error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'the delegatee refused the request (LIMIT_EXCEEDED)', details: [{ '@type': INFO, reason: 'LIMIT_EXCEEDED', domain: 'baton', metadata: { baton: 'limit_exceeded' } }] } } });
  });

  it('relays why (reason, widerOn) when they are vocabulary, never an identifier-shaped value or other metadata (issue 25)', () => {
    const data = [{ '@type': INFO, reason: 'DENY', domain: 'baton', metadata: { baton: 'deny', widerOn: 'subdelegation,expiry', reason: 'dlg-7Q2', node_id: 'dlg_downstream' } }];
    const r = renderA2AError(new RemoteRpcError(-32055, 'wider than dlg_downstream', data), 'jsonrpc', 1);
    expect(r.body).toEqual({ jsonrpc: '2.0', id: 1, error: { code: expect.any(Number), message: 'the delegatee refused the request (DENY): wider_on subdelegation,expiry', data: [{ '@type': INFO, reason: 'DENY', domain: 'baton', metadata: { baton: 'deny', widerOn: 'subdelegation,expiry' } }] } });
  });
});

describe('faults that are no A2A or Baton error', () => {
  it('are opaque on the wire: no message text, a storage_error ErrorInfo', () => {
    const r = renderA2AError(new TypeError('cannot read properties of undefined (reading "7f0c2a9e-remote")'), 'jsonrpc');
    expect(r.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'internal error', data: [{ '@type': INFO, reason: 'STORAGE_ERROR', domain: 'baton', metadata: { baton: 'storage_error' } }] } });
  });
});
