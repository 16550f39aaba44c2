import { describe, expect, it } from 'vitest';
import { errorCodeOf } from '../../src/http/error-code.ts';

const b = (s: string) => Buffer.from(s, 'utf8');

describe('errorCodeOf', () => {
  it('names the code of an error body, however its "error" key is spelt, and nothing for a success', () => {
    expect(errorCodeOf(b('{"error":{"code":"deny"}}'), 403)).toBe('deny');
    expect(errorCodeOf(b('{"\\u0065rror":{"code":"deny"}}'), 403)).toBe('deny');
    expect(errorCodeOf(b('{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"x"}}'), 200)).toBe('invalid_request');
    expect(errorCodeOf(b('{"jsonrpc":"2.0","id":1,"result":{"kind":"task","status":{"state":"TASK_STATE_COMPLETED"}}}'), 200)).toBeUndefined();
    expect(errorCodeOf(b('{"result":{"text":"no error here"}}'), 200)).toBeUndefined();
  });

  it("names the code of an MCP JSON-RPC error (data.code, src/http/error-map.ts jsonRpcErrorOf), and only a code of ADR-0014's vocabulary", () => {
    expect(errorCodeOf(b('{"jsonrpc":"2.0","id":3,"error":{"code":-32051,"message":"held","data":{"code":"interaction_required","details":{}}}}'), 200)).toBe('interaction_required');
    expect(errorCodeOf(b('{"jsonrpc":"2.0","id":3,"error":{"code":-32001,"message":"x","data":{"code":"made_up"}}}'), 200)).toBeUndefined();
  });
});
