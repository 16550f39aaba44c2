/**
 * Both paths of parseStrictJson (src/records/strict-json.ts, issue #27
 * mutants). The fast path may only answer what the strict parser would: a
 * bracket, colon or digit inside a string must not hide nesting, a member or a
 * long integer from its counts. The strict parser is reached here on purpose
 * with a safe 16-digit integer (the fast path leaves any token that long to it).
 */
import { describe, expect, it } from 'vitest';
import { parseStrictJson } from '../../src/records/strict-json.ts';

const LONG = '1234567890123456'; // 16 digits, below 2^53: only the strict parser reads it
const outcome = (input: string | Uint8Array, maxDepth?: number): unknown => {
  try {
    return { value: parseStrictJson(input, maxDepth === undefined ? {} : { maxDepth }) };
  } catch (err) {
    const e = err as { code: string; message: string; details: unknown };
    return [e.code, e.message, e.details];
  }
};
const TOO_DEEP = ['limit_exceeded', 'JSON nesting exceeds the depth bound', { maxDepth: 64 }];
const malformed = (reason: string, offset: number) => ['invalid_request', `malformed JSON: ${reason}`, { offset }];
const nest = (n: number, inner = '') => '['.repeat(n) + inner + ']'.repeat(n);

describe('the fast path never answers what the strict parser refuses', () => {
  it('brackets inside strings do not hide nesting', () => {
    for (const s of ['"]]]]"', '"}}}}"', '"\\\\"', '"\\"]]"', '"a\\\\\\"]"', '"]\\\\"']) {
      expect(outcome(`[${s},${nest(63)}]`)).toStrictEqual({ value: [JSON.parse(s), JSON.parse(nest(63))] });
      expect(outcome(`[${s},${nest(64)}]`)).toStrictEqual(TOO_DEEP);
      expect(outcome(`{"k":${s},"n":${nest(64)}}`)).toStrictEqual(TOO_DEEP);
      expect(outcome(`[${nest(64, s)}]`)).toStrictEqual(TOO_DEEP);
    }
  });

  it('objects and arrays both count towards the bound, closing either kind ends a level', () => {
    const objects = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
    expect(outcome(objects(64))).toStrictEqual({ value: JSON.parse(objects(64)) });
    expect(outcome(objects(65))).toStrictEqual(TOO_DEEP);
    expect(outcome(`[${'{"a":['.repeat(32)}1${']}'.repeat(32)}]`)).toStrictEqual(TOO_DEEP);
    // Siblings at the bound do not add up.
    const sibling = `[${nest(63)},${nest(63)},{"a":${nest(62)}}]`;
    expect(outcome(sibling)).toStrictEqual({ value: JSON.parse(sibling) });
    expect(outcome(`[{}, ${nest(63)}]`)).toStrictEqual({ value: [{}, JSON.parse(nest(63))] });
  });

  it('a small depth bound holds on short documents too, down to 0', () => {
    const bound = (maxDepth: number) => ['limit_exceeded', 'JSON nesting exceeds the depth bound', { maxDepth }];
    expect(outcome('[]', 0)).toStrictEqual(bound(0));
    expect(outcome('1', 0)).toStrictEqual({ value: 1 });
    expect(outcome('[[1]]', 1)).toStrictEqual(bound(1));
    expect(outcome('[1]', 1)).toStrictEqual({ value: [1] });
    expect(outcome('[[[[1]]]]', 3)).toStrictEqual(bound(3));
    expect(outcome('{"a":{"b":1}}', 1)).toStrictEqual(bound(1));
  });

  it('colons inside strings do not stand in for a duplicated member', () => {
    const docs = [
      '{"a":1,"a":2}',
      '{"a:":1,"a:":2}',
      '{"a":":","a":1}',
      '{"\\"":1,"\\"":2}',
      '{"\\\\":1,"\\\\":2}',
      '{"x":"\\\\","x":"\\\\"}',
      '{"x":"\\"","y":{"z":1,"z":2}}',
      '[{"a":"b\\\\"},{"c":1,"c":"\\\\\\""}]',
      '{"k":"\\\\\\\\","k":0}',
      // Found by fuzzing a mutant that closed strings by the quote's position: empty keys shift its pairing.
      '[{"": 0,"":[1000000000,""],"]":[null,"",""]}]',
    ];
    for (const d of docs) expect(outcome(d)).toMatchObject(['invalid_request', 'malformed JSON: duplicate object key', {}]);
  });

  it('digits inside strings do not count towards an integer token, and digits after a string do', () => {
    expect(outcome('["123456789012345","6"]')).toStrictEqual({ value: ['123456789012345', '6'] });
    const bigAt = (doc: string, token: string) => expect(outcome(doc)).toStrictEqual(malformed('integer beyond 2^53 loses precision', doc.indexOf(token) + token.length));
    bigAt('["1",9007199254740993]', '9007199254740993');
    bigAt('{"a":"1234567890","b":12345678901234567}', '12345678901234567');
    bigAt('[123456789012345,9007199254740993]', '9007199254740993');
    bigAt('[9007199254740992]', '9007199254740992');
    expect(outcome('[900719925474099]')).toStrictEqual({ value: [900719925474099] });
  });

  it('an out-of-range number or a lone surrogate is refused at any depth', () => {
    expect(outcome('[1,[1e400]]')).toStrictEqual(malformed('number out of range', 9));
    expect(outcome('{"a":{"b":-1e400}}')).toStrictEqual(malformed('number out of range', 16));
    expect(outcome('[1,["\\ud800"]]')).toStrictEqual(malformed('lone surrogate in string', 12));
    expect(outcome('["ok","\\udc00"]')).toStrictEqual(malformed('lone surrogate in string', 14));
    expect(outcome('{"a":{"b":"\\udc00"}}')).toStrictEqual(malformed('lone surrogate in string', 18));
    expect(outcome('{"a":1,"\\ud800":2}')).toStrictEqual(malformed('lone surrogate in string', 15));
    expect(outcome('{"a":[{"\\ud800":1}]}')).toStrictEqual(malformed('lone surrogate in string', 15));
    expect(outcome('[null,true,false,{"a":null},[null]]')).toStrictEqual({ value: [null, true, false, { a: null }, [null]] });
  });
});

describe('the strict parser', () => {
  it('parses empty containers, escapes and spaces exactly', () => {
    expect(outcome(`[[],{},${LONG}]`)).toStrictEqual({ value: [[], {}, Number(LONG)] });
    expect(outcome(`[ [ ] , { } ,${LONG}]`)).toStrictEqual({ value: [[], {}, Number(LONG)] });
    expect(outcome(`["\\b\\f\\n\\r\\t\\"\\\\\\/","a b\\u00e9\\u00E9",${LONG}]`)).toStrictEqual({ value: ['\b\f\n\r\t"\\/', 'a béé', Number(LONG)] });
  });

  it('refuses a bad escape, a short \\u escape, and a raw control character, at their offsets', () => {
    expect(outcome(`["\\x",${LONG}]`)).toStrictEqual(malformed('bad escape', 2));
    expect(outcome(`["\\u00g0",${LONG}]`)).toStrictEqual(malformed('bad \\u escape', 2));
    expect(outcome('["\\u00e')).toStrictEqual(malformed('bad \\u escape', 2));
    expect(outcome('["\\')).toStrictEqual(malformed('bad escape', 2));
    expect(outcome(`["a\u001fb",${LONG}]`)).toStrictEqual(malformed('unescaped control character in string', 3));
  });

  it('accepts exactly 64 levels and refuses 65', () => {
    expect(outcome(nest(64, LONG))).toStrictEqual({ value: JSON.parse(nest(64, LONG)) });
    expect(outcome(nest(65, LONG))).toStrictEqual(TOO_DEEP);
    expect(outcome(nest(3, LONG), 3)).toStrictEqual({ value: [[[Number(LONG)]]] });
    expect(outcome(nest(4, LONG), 3)).toStrictEqual(['limit_exceeded', 'JSON nesting exceeds the depth bound', { maxDepth: 3 }]);
  });

  it('gives members the property shape JSON.parse does, "__proto__" included', () => {
    const v = parseStrictJson(`{"a":${LONG},"__proto__":{"x":1}}`) as Record<string, unknown>;
    expect(Object.keys(v)).toStrictEqual(['a', '__proto__']);
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    for (const k of ['a', '__proto__']) expect(Object.getOwnPropertyDescriptor(v, k)).toMatchObject({ enumerable: true, writable: true, configurable: true });
  });

  it('reads a byte order mark as data: refused, never skipped', () => {
    expect(outcome(Uint8Array.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]))).toStrictEqual(malformed('unexpected character', 0));
    expect(outcome(Uint8Array.from([0x7b, 0x7d]))).toStrictEqual({ value: {} });
  });
});
