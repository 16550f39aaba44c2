import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseStrictJson } from '../../src/records/strict-json.ts';
import { expectCode } from '../helpers/errors.ts';

describe('parseStrictJson', () => {
  it('parses ordinary JSON exactly like JSON.parse', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const text = JSON.stringify(value);
        fc.pre(!/\d{16,}/.test(text)); // integers past 2^53 are refused on purpose
        expect(parseStrictJson(text, { maxBytes: 1 << 20 })).toStrictEqual(JSON.parse(text));
      }),
      { numRuns: 300 },
    );
  });

  it('accepts whitespace, escapes and astral characters', () => {
    expect(parseStrictJson(' { "a" : [1, -2.5e3, true, false, null], "b": "\\u00e9\\n\\ud83d\\ude00\\/" } ')).toStrictEqual({
      a: [1, -2500, true, false, null],
      b: 'é\n😀/',
    });
  });

  it.each([
    ['plain duplicate', '{"a":1,"a":2}'],
    ['escaped duplicate', '{"a":1,"\\u0061":2}'],
    ['nested duplicate', '{"x":{"k":1,"k":1}}'],
  ])('rejects duplicate keys (%s)', (_name, text) => {
    expectCode(() => parseStrictJson(text), 'invalid_request');
  });

  it('keeps duplicate-looking keys that differ', () => {
    expect(parseStrictJson('{"a":1,"A":2,"a ":3}')).toStrictEqual({ a: 1, A: 2, 'a ': 3 });
  });

  it.each([
    ['lone high surrogate escape', '"\\ud800"'],
    ['lone low surrogate escape', '"\\udc00x"'],
    ['reversed pair', '"\\udc00\\ud800"'],
    ['lone surrogate in a key', '{"\\ud800":1}'],
  ])('rejects %s', (_name, text) => {
    expectCode(() => parseStrictJson(text), 'invalid_request');
  });

  it('rejects a raw lone surrogate in string input and invalid UTF-8 bytes', () => {
    expectCode(() => parseStrictJson('"\ud800"'), 'invalid_request');
    expectCode(() => parseStrictJson(new Uint8Array([0x22, 0xc3, 0x28, 0x22])), 'invalid_request');
    expectCode(() => parseStrictJson(new Uint8Array([0x22, 0xed, 0xa0, 0x80, 0x22])), 'invalid_request'); // CESU surrogate
  });

  it.each([
    ['trailing comma in object', '{"a":1,}'],
    ['trailing comma in array', '[1,]'],
    ['single quotes', "{'a':1}"],
    ['unquoted key', '{a:1}'],
    ['leading zero', '01'],
    ['leading plus', '+1'],
    ['bare dot', '1.'],
    ['NaN', 'NaN'],
    ['comment', '{"a":1}//'],
    ['raw control in string', '"a\u0001b"'],
    ['raw newline in string', '"a\nb"'],
    ['bad escape', '"\\x41"'],
    ['short unicode escape', '"\\u12"'],
    ['trailing data', '{} {}'],
    ['empty input', ''],
    ['unterminated', '{"a":"b'],
    ['overflow to Infinity', '1e400'],
    ['integer past 2^53', '9007199254740993'],
  ])('rejects malformed input: %s', (_name, text) => {
    expectCode(() => parseStrictJson(text), 'invalid_request');
  });

  it('treats __proto__ as data, never as a prototype', () => {
    const value = parseStrictJson('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('enforces the 64 KiB record bound by default, in bytes not characters', () => {
    const fits = `"${'a'.repeat(64 * 1024 - 2)}"`;
    expect(parseStrictJson(fits)).toHaveLength(64 * 1024 - 2);
    expectCode(() => parseStrictJson(`"${'a'.repeat(64 * 1024 - 1)}"`), 'limit_exceeded');
    // 'é' is two bytes: 32 Ki of them overflow though the string is only 32 Ki chars.
    expectCode(() => parseStrictJson(`"${'é'.repeat(32 * 1024)}"`), 'limit_exceeded');
    expectCode(() => parseStrictJson(new Uint8Array(64 * 1024 + 1).fill(0x20)), 'limit_exceeded');
  });

  it('bounds nesting depth', () => {
    expect(parseStrictJson('['.repeat(64) + ']'.repeat(64))).toBeDefined();
    expectCode(() => parseStrictJson('['.repeat(65) + ']'.repeat(65)), 'limit_exceeded');
    expectCode(() => parseStrictJson('{"a":'.repeat(100) + '1' + '}'.repeat(100)), 'limit_exceeded');
  });
});
