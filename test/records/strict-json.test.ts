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

  it('finds a duplicate key anywhere, whatever the strings around it hold (the fast path counts members)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), fc.string(), fc.nat(), (value, key, at) => {
        const text = JSON.stringify(value);
        fc.pre(!/\d{16,}/.test(text));
        // Every object in the text gets the same key twice, in one of them.
        const opens = [...text.matchAll(/\{/g)].map((m) => m.index).filter((i) => !inString(text, i));
        fc.pre(opens.length > 0);
        const i = opens[at % opens.length]! + 1;
        const k = JSON.stringify(key);
        const dup = `${text.slice(0, i)}${k}:1,${k}:2${text[i] === '}' ? '' : ','}${text.slice(i)}`;
        expectCode(() => parseStrictJson(dup, { maxBytes: 1 << 20 }), 'invalid_request');
      }),
      { numRuns: 300 },
    );
    expect(parseStrictJson(String.raw`{"a\\":"x:y\\\"","b":["\\",":"],"c":{"d\"":":"}}`)).toStrictEqual({ 'a\\': 'x:y\\"', b: ['\\', ':'], c: { 'd"': ':' } });
    expectCode(() => parseStrictJson(String.raw`{"a\\":1,"a\\":2}`), 'invalid_request');
  });

  it('a nesting bound is the same on the fast path: exactly at it parses, one deeper is limit_exceeded', () => {
    const nest = (n: number) => '['.repeat(n) + ']'.repeat(n);
    expect(parseStrictJson(nest(5), { maxDepth: 5 })).toBeDefined();
    expectCode(() => parseStrictJson(nest(6), { maxDepth: 5 }), 'limit_exceeded');
    expectCode(() => parseStrictJson('{"a":"[[[[[[","b":' + nest(6) + '}', { maxDepth: 6 }), 'limit_exceeded');
    expect(parseStrictJson('{"a":"[[[[[[[[","b":' + nest(5) + '}', { maxDepth: 6 })).toMatchObject({ a: '[[[[[[[[' });
  });

  it('a long fraction or exponent is still a number; a long integer still is not', () => {
    expect(parseStrictJson('[1.12345678901234567, 12345678901234567e2]')).toStrictEqual([1.12345678901234567, 12345678901234567e2]);
    expectCode(() => parseStrictJson('{"n":-90071992547409930}'), 'invalid_request');
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
  // The reason and offset reach the caller in the ADR-0014 details, so each refusal names its own fault.
  it.each([
    ['trux', 'unknown literal', 0],
    ['{a:1}', 'expected a string key', 1],
    ['{"a" 1}', 'expected ":"', 5],
    ['{"a":1 "b":2}', 'expected "," or "}"', 8],
    ['[1 2]', 'expected "," or "]"', 4],
    ['x', 'unexpected character', 0],
    ['1e400', 'number out of range', 5],
    ['9007199254740993', 'integer beyond 2^53 loses precision', 16],
    ['"abc', 'unterminated string', 4],
    ['"\\ud800"', 'lone surrogate in string', 8],
    ['"a\u0001b"', 'unescaped control character in string', 2],
    ['"\\u12"', 'bad \\u escape', 1],
    ['"\\x41"', 'bad escape', 1],
    ['"\\', 'bad escape', 1],
    ['{"a":1,"a":2}', 'duplicate object key', 10],
    ['{} {}', 'unexpected data after the JSON value', 3],
  ])('names the fault in %j and where it stopped', (text, reason, offset) => {
    const err = expectCode(() => parseStrictJson(text), 'invalid_request');
    expect(err.message).toBe(`malformed JSON: ${reason}`);
    expect(err.details).toStrictEqual({ offset });
  });

  it('names bad UTF-8 and the bounds it enforces', () => {
    expect(expectCode(() => parseStrictJson(new Uint8Array([0x22, 0xc3, 0x28, 0x22])), 'invalid_request').message).toBe(
      'JSON input is not well-formed UTF-8',
    );
    for (const input of ['"abcd"', new TextEncoder().encode('"abcd"')]) {
      const err = expectCode(() => parseStrictJson(input, { maxBytes: 5 }), 'limit_exceeded');
      expect([err.message, err.details]).toStrictEqual(['JSON input exceeds the size bound', { maxBytes: 5 }]);
      // Exactly at the bound is still accepted, for text and bytes alike.
      expect(parseStrictJson(input, { maxBytes: 6 })).toBe('abcd');
    }
    const deep = expectCode(() => parseStrictJson('[[[1]]]', { maxDepth: 2 }), 'limit_exceeded');
    expect([deep.message, deep.details]).toStrictEqual(['JSON nesting exceeds the depth bound', { maxDepth: 2 }]);
    expect(parseStrictJson('[[1]]', { maxDepth: 2 })).toStrictEqual([[1]]);
  });

  it('gives members the same property shape JSON.parse does (writable, enumerable, configurable)', () => {
    const value = parseStrictJson('{"a":1,"__proto__":2}') as Record<string, unknown>;
    for (const key of ['a', '__proto__']) {
      expect(Object.getOwnPropertyDescriptor(value, key)).toStrictEqual(Object.getOwnPropertyDescriptor(JSON.parse('{"a":1,"__proto__":2}'), key));
    }
  });
});

/** Whether offset `i` of valid JSON `text` is inside a string. */
function inString(text: string, i: number): boolean {
  let inside = false;
  for (let p = 0; p < i; p++) {
    if (text[p] === '\\' && inside) p++;
    else if (text[p] === '"') inside = !inside;
  }
  return inside;
}
