import { describe, expect, it } from 'vitest';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { classifyFailure } from '../../src/mcp/upstream.ts';

describe('classifyFailure: did the tool possibly run?', () => {
  it('JSON-RPC refusals of the request as such: not executed', () => {
    for (const code of [ErrorCode.ParseError, ErrorCode.InvalidRequest, ErrorCode.MethodNotFound, ErrorCode.InvalidParams]) {
      expect(classifyFailure(new McpError(code, 'no')), String(code)).toMatchObject({ kind: 'not_executed', code });
    }
  });
  it('anything else the server or the transport says after sending: lost', () => {
    expect(classifyFailure(new McpError(ErrorCode.InternalError, 'x')).kind).toBe('lost');
    expect(classifyFailure(new McpError(ErrorCode.RequestTimeout, 'x')).kind).toBe('lost');
    expect(classifyFailure(new StreamableHTTPError(500, 'x')).kind).toBe('lost');
    expect(classifyFailure(new StreamableHTTPError(undefined, 'x')).kind).toBe('lost');
    expect(classifyFailure(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } }))).toEqual({ kind: 'lost', reason: 'connection failed after sending (ECONNRESET)' });
    expect(classifyFailure(new Error('aborted'))).toEqual({ kind: 'lost', reason: 'no usable answer from the server' });
  });
  it('an HTTP refusal or a connection never made: not executed', () => {
    expect(classifyFailure(new StreamableHTTPError(401, 'x'))).toEqual({ kind: 'not_executed', reason: 'the server refused the request with HTTP 401' });
    expect(classifyFailure(new StreamableHTTPError(499, 'x')).kind).toBe('not_executed');
    expect(classifyFailure(new StreamableHTTPError(400, 'x')).kind).toBe('not_executed');
    expect(classifyFailure(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }))).toEqual({ kind: 'not_executed', reason: 'the request never reached the server (ECONNREFUSED)' });
  });
});
