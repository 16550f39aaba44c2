import { describe, expect, it } from 'vitest';
import { ReadRoute } from '../../src/mcp/config.ts';
import { at, checkRead, readArguments, type CallFacts } from '../../src/mcp/read-route.ts';

const call: CallFacts = { arguments: { title: 'minutes', tags: ['a', 'b'] }, result: { structuredContent: { id: 'n-1', nested: { n: 0 } }, content: [{ type: 'text', text: 'ok' }] } };
const route = (r: unknown) => ReadRoute.parse(r);

describe('at: a dotted path into JSON', () => {
  it('walks objects and arrays, and only what is there', () => {
    expect(at(call.result, 'structuredContent.id')).toBe('n-1');
    expect(at(call.result, 'structuredContent.nested.n')).toBe(0);
    expect(at(call.result, 'content.0.text')).toBe('ok');
    expect(at(call.arguments, 'tags.1')).toBe('b');
    for (const missing of ['structuredContent.other', 'content.1', 'content.01', 'content.x', 'content.-1', 'structuredContent.id.x', 'toString', 'structuredContent.constructor']) {
      expect(typeof at(call.result, missing), missing).toBe('symbol');
    }
    expect(at(null, 'a')).toBeTypeOf('symbol');
    // Strings and arrays are walked only by their contents: no `length`, no index spelled loosely.
    const many = { s: 'abc', a: Array.from({ length: 11 }, (_, i) => i) };
    expect(at(many, 'a.10')).toBe(10);
    for (const missing of ['s.length', 's.0', 'a.length', 'a.1 ', 'a. 1', 'a.1e0', 'a.+1']) expect(typeof at(many, missing), missing).toBe('symbol');
    expect(at({ a: null }, 'a')).toBeNull();
  });
});

describe('readArguments: the read route formed from the call', () => {
  it('takes $.arguments and $.result references, keeps literals', () => {
    expect(readArguments(route({ tool: 'get', arguments: { id: '$.result.structuredContent.id', title: '$.arguments.title', limit: 1, literal: 'plain', dollar: '$notref' } }), call)).toEqual({
      arguments: { id: 'n-1', title: 'minutes', limit: 1, literal: 'plain', dollar: '$notref' },
    });
  });
  it('names the first reference the call cannot fill', () => {
    expect(readArguments(route({ tool: 'get', arguments: { id: '$.result.structuredContent.missing' } }), call)).toEqual({ missing: '$.result.structuredContent.missing' });
  });
});

describe('checkRead: does the read show what the call changed?', () => {
  const r = route({ tool: 'get', arguments: {}, expect: { 'structuredContent.title': '$.arguments.title', 'structuredContent.id': '$.result.structuredContent.id' } });
  it('agrees only when every expectation holds, compared canonically', () => {
    expect(checkRead(r, call, { structuredContent: { id: 'n-1', title: 'minutes' } })).toEqual({ agreed: true });
    expect(checkRead(route({ tool: 'get', expect: { 'structuredContent.v': { b: 1, a: 2 } } }), call, { structuredContent: { v: { a: 2, b: 1 } } })).toEqual({ agreed: true });
  });
  it('disagrees on another value, a missing path, an unfillable expectation or a read error', () => {
    expect(checkRead(r, call, { structuredContent: { id: 'n-2', title: 'minutes' } })).toEqual({ agreed: false, reasons: ['read route shows another structuredContent.id'] });
    expect(checkRead(r, call, { structuredContent: { id: 'n-1' } })).toEqual({ agreed: false, reasons: ['read route shows no structuredContent.title'] });
    expect(checkRead(route({ tool: 'get', expect: { x: '$.arguments.nope' } }), call, { x: 1 })).toEqual({ agreed: false, reasons: ['expected value $.arguments.nope is missing from the call'] });
    expect(checkRead(r, call, { isError: true, structuredContent: { id: 'n-1', title: 'minutes' } })).toEqual({ agreed: false, reasons: ['read route get reported an error'] });
  });
  it('with no expectations, a read that succeeds agrees', () => {
    expect(checkRead(route({ tool: 'get' }), call, { content: [] })).toEqual({ agreed: true });
    expect(checkRead(route({ tool: 'get' }), call, { isError: false })).toEqual({ agreed: true });
  });
});
