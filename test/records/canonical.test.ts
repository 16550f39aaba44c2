import { describe, expect, it } from 'vitest';
import canonicalize from 'canonicalize';
import { canonicalBytes, canonicalCopy, canonicalText, freezeCanonical, frozenCopy, isCanonicalFrozen, memberTexts } from '../../src/records/canonical.ts';
import { composeObjectText } from '../../src/records/json-text.ts';
import { digestOf, sha256Digest } from '../../src/records/digest.ts';
import { parseStrictJson } from '../../src/records/strict-json.ts';
import { expectCode } from '../helpers/errors.ts';

// Vectors transcribed from RFC 8785 itself (§3.2.2, §3.2.3, Appendix B).
describe('RFC 8785 canonical form', () => {
  it('reproduces the §3.2.2 example byte for byte', () => {
    const input = String.raw`{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }`;
    expect(canonicalText(parseStrictJson(input))).toBe(
      String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
    );
  });

  it('sorts keys by UTF-16 code units (§3.2.3)', () => {
    const input = String.raw`{
      "\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One", "\ud83d\ude00": "Emoji: Grinning Face", "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis"
    }`;
    // JSON.parse would re-order the integer-like key "1", so compare the text.
    expect(canonicalText(parseStrictJson(input))).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
        '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it.each([
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ])('serialises IEEE 754 %s as %s (Appendix B)', (hex, expected) => {
    const n = Buffer.from(hex, 'hex').readDoubleBE(0);
    expect(canonicalText(n)).toBe(expected);
  });

  it('canonicalises nested structures and arrays in order', () => {
    expect(canonicalText({ b: [3, { z: 1, a: 2 }], a: { y: null, x: 'é' } })).toBe('{"a":{"x":"é","y":null},"b":[3,{"a":2,"z":1}]}');
    expect(new TextDecoder().decode(canonicalBytes({ a: 'é' }))).toBe('{"a":"é"}');
  });

  it.each([
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['lone surrogate', '\ud800'],
    ['lone surrogate key', { '\udc00': 1 }],
    ['undefined member', { a: undefined }],
    ['a Date', new Date(0)],
    ['a Map', new Map()],
    ['a bigint', 1n],
    ['a function', () => 1],
  ])('refuses %s instead of silently changing it', (_name, value) => {
    expectCode(() => canonicalText(value), 'invalid_request');
  });
});

describe('digests', () => {
  it('is sha256 over the canonical bytes, prefixed', () => {
    expect(sha256Digest('abc')).toBe('sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(digestOf({ b: 1, a: 2 })).toBe(sha256Digest('{"a":2,"b":1}'));
    expect(digestOf({ a: 2, b: 1 })).toBe(digestOf({ b: 1, a: 2 }));
    expect(digestOf({ a: 1 })).not.toBe(digestOf({ a: 1.5 }));
  });
});

// Issue #15: the one-pass writer and its cache must produce exactly the bytes
// the reference implementation (the `canonicalize` package) does.
describe('the one-pass writer against the reference', () => {
  // A small deterministic generator (no Math.random: failures must reproduce).
  let seed = 0x15;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const STRINGS = ['', 'a', 'é', '\u20ac', '\ud83d\ude00', '"\\\n\t\u0001', '1', '10', '\u0080', 'Z', 'z'];
  const NUMBERS = [0, -0, 1, -1, 0.1, 1e21, 1e-7, 333333333.3333333, 2 ** 53, -5e-324, 123456.789];
  const gen = (depth: number): unknown => {
    const k = rand(depth > 4 ? 4 : 7);
    if (k === 0) return STRINGS[rand(STRINGS.length)];
    if (k === 1) return NUMBERS[rand(NUMBERS.length)];
    if (k === 2) return [true, false, null][rand(3)];
    if (k === 3) return rand(50);
    if (k === 4) return Array.from({ length: rand(4) }, () => gen(depth + 1));
    return Object.fromEntries(Array.from({ length: rand(5) }, () => [STRINGS[rand(STRINGS.length)]! + String(rand(3)), gen(depth + 1)]));
  };

  it('matches canonicalize on 500 generated values, frozen or not, first use and cached', () => {
    for (let i = 0; i < 500; i++) {
      const value = gen(0);
      const expected = canonicalize(structuredClone(value));
      expect(canonicalText(value)).toBe(expected);
      const frozen = freezeCanonical(structuredClone(value));
      expect(canonicalText(frozen)).toBe(expected);
      expect(canonicalText(frozen)).toBe(expected);
      // A fresh wrapper around frozen parts reuses their cached text.
      expect(canonicalText({ wrap: frozen, n: i })).toBe(canonicalize({ wrap: value, n: i }));
      // Sealing's copy: its top level joined member by member, the level beneath written by JSON.stringify of a sorted copy.
      expect(canonicalText(canonicalCopy({ body: structuredClone(value), n: i }))).toBe(canonicalize({ body: value, n: i }));
      expect(canonicalText(canonicalCopy({ body: { inner: frozen }, n: i }))).toBe(canonicalize({ body: { inner: value }, n: i }));
    }
  });

  it('freezes deeply, so a cached text cannot go stale', () => {
    const record = freezeCanonical({ body: { items: [{ a: 1 }] }, id: 'x' });
    const before = canonicalText(record);
    expect(isCanonicalFrozen(record)).toBe(true);
    expect(isCanonicalFrozen(record.body.items[0])).toBe(true);
    expect(() => {
      (record.body.items[0] as { a: number }).a = 2;
    }).toThrow(TypeError);
    expect(() => (record.body.items as unknown[]).push(1)).toThrow(TypeError);
    expect(canonicalText(record)).toBe(before);
  });

  it('does not trust objects frozen by anyone else, and leaves non-JSON values unfrozen', () => {
    const outside = Object.freeze({ a: 1 });
    expect(isCanonicalFrozen(outside)).toBe(false);
    const withDate = { when: new Date(0) };
    freezeCanonical(withDate);
    expect(isCanonicalFrozen(withDate)).toBe(false);
    expect(Object.isFrozen(withDate)).toBe(false);
    expectCode(() => canonicalText(withDate), 'invalid_request');
  });

  it('keeps the nesting limit when a cached subtree is placed deeper', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100; i++) deep = [deep];
    const frozen = freezeCanonical(deep);
    expect(() => canonicalText(frozen)).not.toThrow();
    let wrapped: unknown = frozen;
    for (let i = 0; i < 40; i++) wrapped = [wrapped];
    expectCode(() => canonicalText(wrapped), 'invalid_request');
  });

  // Issue #19 mutants: the exact nesting bound, first use and cached, and each refusal's message.
  const nest = (n: number, wrap: (v: unknown) => unknown = (v) => [v]): unknown => {
    let v: unknown = 1;
    for (let i = 0; i < n; i++) v = wrap(v);
    return v;
  };
  const message = (value: unknown): [string, unknown] => {
    const err = expectCode(() => canonicalText(value), 'invalid_request');
    return [err.message, err.details];
  };

  it('accepts a scalar exactly 128 levels down and refuses 129', () => {
    expect(canonicalText(nest(128))).toBe(`${'['.repeat(128)}1${']'.repeat(128)}`);
    expect(message(nest(129))).toStrictEqual(['value nests too deeply to canonicalise', {}]);
    expect(canonicalText(nest(128, (v) => ({ k: v })))).toHaveLength(128 * 6 + 1);
    expect(message(nest(129, (v) => ({ k: v })))).toStrictEqual(['value nests too deeply to canonicalise', {}]);
  });

  it.each([
    ['arrays', (v: unknown) => [v]],
    ['objects', (v: unknown) => ({ k: v, z: 0 })],
  ])('a cached subtree of nested %s keeps its height: 28 levels above a 100-high subtree fit, 29 do not', (_name, wrap) => {
    const frozen = freezeCanonical(nest(100, wrap));
    canonicalText(frozen); // cache it
    expect(() => canonicalText(wrapAround(frozen, 28))).not.toThrow();
    expect(message(wrapAround(frozen, 29))).toStrictEqual(['value nests too deeply to canonicalise', {}]);
  });
  const wrapAround = (inner: unknown, n: number): unknown => {
    let v = inner;
    for (let i = 0; i < n; i++) v = [v];
    return v;
  };

  it('a cached subtree of mixed heights takes the tallest member', () => {
    const frozen = freezeCanonical({ a: nest(100), b: 0, c: [0] });
    canonicalText(frozen);
    expect(() => canonicalText(wrapAround(frozen, 27))).not.toThrow();
    expect(message(wrapAround(frozen, 28))).toStrictEqual(['value nests too deeply to canonicalise', {}]);
    const list = freezeCanonical([nest(100), 0, [0]]);
    canonicalText(list);
    expect(() => canonicalText(wrapAround(list, 27))).not.toThrow();
    expect(message(wrapAround(list, 28))).toStrictEqual(['value nests too deeply to canonicalise', {}]);
  });

  it('names each value JSON cannot carry faithfully', () => {
    expect(message('\ud800')).toStrictEqual(['string holds a lone surrogate', {}]);
    expect(message({ '\udc00': 1 })).toStrictEqual(['key holds a lone surrogate', {}]);
    expect(message(Number.NaN)).toStrictEqual(['non-finite number cannot be canonicalised', {}]);
    expect(message(-Infinity)).toStrictEqual(['non-finite number cannot be canonicalised', {}]);
    expect(message(new Map())).toStrictEqual(['only plain objects can be canonicalised', {}]);
    expect(message({ a: 1, b: undefined })).toStrictEqual(['undefined member cannot be canonicalised', { key: 'b' }]);
    expect(message(10n)).toStrictEqual(['a bigint cannot be canonicalised', {}]);
    expect(message(undefined)).toStrictEqual(['a undefined cannot be canonicalised', {}]);
    expect(message([() => 1])).toStrictEqual(['a function cannot be canonicalised', {}]);
  });

  it('quotes every single character of the first 256 code points and around the surrogates as the reference does, as a value and as a key', () => {
    // The writer quotes plain strings without JSON.stringify and remembers quoted keys (issue #24): each escape must still happen.
    const chars = [...Array.from({ length: 256 }, (_, i) => i), 0x2028, 0x2029, 0xd7ff, 0xe000, 0xfeff, 0xfffd, 0xffff].map((c) => String.fromCharCode(c));
    for (const c of chars) {
      for (const s of [c, `a${c}`, `${c}z`, `x${c}${c}y`]) {
        expect(canonicalText(s), JSON.stringify(s)).toBe(canonicalize(s));
        expect(canonicalText({ [s]: s }), JSON.stringify(s)).toBe(canonicalize({ [s]: s }));
        expect(canonicalText({ [s]: s }), `again ${JSON.stringify(s)}`).toBe(canonicalize({ [s]: s }));
      }
    }
    expect(canonicalText({ '\ud83d\ude00': '\ud83d\ude00' })).toBe(canonicalize({ '\ud83d\ude00': '\ud83d\ude00' }));
    for (const lone of ['\ud800', 'a\udfff', '\udbffz']) {
      expect(message(lone)).toStrictEqual(['string holds a lone surrogate', {}]);
      // A refused key is never remembered as quoted.
      for (let i = 0; i < 2; i++) expect(message({ [lone]: 1 })).toStrictEqual(['key holds a lone surrogate', {}]);
    }
  });

  it('a null-prototype object is a plain object', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { b: 2, a: 1 });
    expect(canonicalText(bare)).toBe('{"a":1,"b":2}');
    expect(canonicalText([true, false, null])).toBe('[true,false,null]');
  });

  it('never serves a text cached before the value was frozen', () => {
    const late = { a: 1, list: [1] };
    expect(canonicalText(late)).toBe('{"a":1,"list":[1]}');
    late.a = 2;
    late.list.push(2);
    freezeCanonical(late);
    expect(isCanonicalFrozen(late)).toBe(true);
    expect(isCanonicalFrozen(late.list)).toBe(true);
    expect(canonicalText(late)).toBe('{"a":2,"list":[1,2]}');
    // An array holding a non-JSON value is not trusted either.
    const mixed = [1, new Date(0)];
    freezeCanonical(mixed);
    expect(isCanonicalFrozen(mixed)).toBe(false);
  });

  it('canonicalCopy: a deep-frozen copy whose cached text is canonicalize\'s, leaving the original unfrozen', () => {
    for (let i = 0; i < 300; i++) {
      const value = { v: gen(0), shared: freezeCanonical(structuredClone(gen(1))), list: [gen(2), { n: i }] };
      const copy = canonicalCopy(value);
      expect(isCanonicalFrozen(copy)).toBe(true);
      expect(isCanonicalFrozen(value as unknown) || Object.isFrozen(value.list)).toBe(false);
      expect(copy.shared).toBe(value.shared);
      expect(copy).toStrictEqual(value);
      expect(canonicalText(copy)).toBe(canonicalize(structuredClone(value)));
      expect(canonicalText(copy.list)).toBe(canonicalize(structuredClone(value.list)));
    }
    const proto = canonicalCopy(JSON.parse('{"__proto__": {"x": 1}, "a": [1]}') as Record<string, unknown>);
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(canonicalText(proto)).toBe('{"__proto__":{"x":1},"a":[1]}');
    expectCode(() => canonicalCopy({ a: undefined }), 'invalid_request');
    expectCode(() => canonicalCopy({ a: new Date(0) }), 'invalid_request');
    expectCode(() => canonicalCopy({ a: '\ud800' }), 'invalid_request');
    expectCode(() => canonicalCopy({ ['\ud800']: 1 }), 'invalid_request');
    const nest = (n: number): unknown => (n === 0 ? 0 : [nest(n - 1)]);
    expect(canonicalText(canonicalCopy(nest(128)))).toBe(canonicalize(nest(128)));
    expectCode(() => canonicalCopy(nest(129)), 'invalid_request');
  });

  it('orders wide objects as the reference does, in any insertion order, on every writing path (in-place key sort)', () => {
    // Keys where UTF-16 code unit order and code point order disagree (a surrogate pair sorts before U+E000),
    // prefixes, digits and case; widths on both sides of the insertion-sort cut-off.
    const pool = ['\ue000', '\ud83d\ude00', '\uffff', 'a', 'aa', 'ab', 'B', 'b', '0', '10', '9', '', 'é', 'e\u0301'];
    for (const width of [0, 1, 2, 3, 17, 47, 48, 49, 64, 130]) {
      for (let round = 0; round < 6; round++) {
        const keys = Array.from({ length: width }, (_, i) => `${pool[i % pool.length]}${i < pool.length ? '' : String(i)}`);
        if (round === 1) keys.reverse();
        if (round >= 2) for (let i = keys.length - 1; i > 0; i--) { const j = rand(i + 1); [keys[i], keys[j]] = [keys[j]!, keys[i]!]; }
        const value = Object.fromEntries(keys.map((k, i) => [k, round % 2 ? { n: i, k } : i]));
        const order = Object.keys(value);
        const expected = canonicalize(value);
        expect(canonicalText(value), `${width}/${round}`).toBe(expected);
        expect(canonicalText(canonicalCopy(value)), `copy ${width}/${round}`).toBe(expected);
        expect(composeObjectText(memberTexts(value)), `members ${width}/${round}`).toBe(expected);
        expect(Object.keys(value), 'the caller\'s object keeps its own order').toEqual(order);
      }
    }
  });

  it('gives the text canonicalize gives for the object, with members added and replaced', () => {
    for (let i = 0; i < 200; i++) {
      const value = { a: gen(0), '\u20ac': gen(0), z: gen(1), '10': i };
      const members = memberTexts(value);
      expect(composeObjectText(members)).toBe(canonicalize(value));
      members.set('b', canonicalText(gen(0) ?? null));
      members.set('a', '"replaced"');
      expect(JSON.parse(composeObjectText(members))).toMatchObject({ a: 'replaced' });
      expect(composeObjectText(members)).toBe(canonicalize(JSON.parse(composeObjectText(members))));
    }
    expectCode(() => memberTexts({ a: undefined }), 'invalid_request');
    expectCode(() => memberTexts([1] as never), 'invalid_request');
  });
});

describe('frozenCopy (sealing never freezes what its caller owns)', () => {
  it('freezes a copy, shares already-frozen subtrees, and keeps a "__proto__" key as data', () => {
    const owned = { revision: 'r1', nested: { list: [1, { a: 2 }] } };
    const shared = freezeCanonical({ k: 'v' });
    const input = JSON.parse('{"__proto__": {"x": 1}}') as Record<string, unknown>;
    const sealed = frozenCopy({ owned, shared, input });
    expect(Object.isFrozen(owned)).toBe(false);
    expect(Object.isFrozen(owned.nested.list)).toBe(false);
    owned.revision = 'r2'; // the caller may still edit its own object
    expect(sealed.owned.revision).toBe('r1');
    expect(sealed.shared).toBe(shared);
    expect(isCanonicalFrozen(sealed)).toBe(true);
    expect(Object.getPrototypeOf(sealed.input)).toBe(Object.prototype);
    expect(canonicalText(sealed.input)).toBe('{"__proto__":{"x":1}}');
  });
});
