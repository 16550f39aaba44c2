/**
 * The paths of src/records/canonical.ts besides canonicalText (issue #27
 * mutants): canonicalCopy, memberTexts/composeObjectText (json-text.ts),
 * frozenCopy and freezeCanonical keep the same refusals, the same nesting bound and the same
 * heights as the one-pass writer.
 */
import { describe, expect, it } from 'vitest';
import { canonicalCopy, canonicalText, freezeCanonical, frozenCopy, isCanonicalFrozen, memberTexts } from '../../src/records/canonical.ts';
import { composeObjectText } from '../../src/records/json-text.ts';
import { expectCode } from '../helpers/errors.ts';

const nest = (n: number, wrap: (v: unknown) => unknown = (v) => [v], leaf: unknown = 1): unknown => {
  let v: unknown = leaf;
  for (let i = 0; i < n; i++) v = wrap(v);
  return v;
};
const refusal = (fn: () => unknown): [string, unknown] => {
  const err = expectCode(fn, 'invalid_request');
  return [err.message, err.details];
};
const TOO_DEEP: [string, unknown] = ['value nests too deeply to canonicalise', {}];
const NOT_PLAIN: [string, unknown] = ['only plain objects can be canonicalised', {}];

describe('canonicalCopy', () => {
  it.each([
    ['arrays', (v: unknown) => [v]],
    ['objects', (v: unknown) => ({ k: v })],
  ])('accepts a scalar 128 levels of %s down and refuses 129, as canonicalText does', (_name, wrap) => {
    const ok = nest(128, wrap);
    expect(canonicalText(canonicalCopy(ok))).toBe(canonicalText(ok));
    expect(refusal(() => canonicalCopy(nest(129, wrap)))).toStrictEqual(TOO_DEEP);
    // An empty container at the bottom is a level too.
    expect(() => canonicalCopy(nest(128, wrap, []))).not.toThrow();
    expect(refusal(() => canonicalCopy(nest(129, wrap, {})))).toStrictEqual(TOO_DEEP);
  });

  it.each([
    ['arrays', (v: unknown) => [v]],
    ['objects', (v: unknown) => ({ k: v, z: 0 })],
    ['mixed members', (v: unknown) => ({ a: 0, k: [v, 0], z: [0] })],
  ])('a copy of nested %s remembers its height: the bound holds when it is placed deeper', (_name, wrap) => {
    const copy = canonicalCopy(nest(50, wrap));
    const plain = nest(50, wrap);
    for (let n = 0; n <= 130; n += 1) {
      const expected = (() => {
        try {
          canonicalText(nest(n, (v) => [v], plain));
          return 'ok';
        } catch {
          return 'refused';
        }
      })();
      if (expected === 'ok') expect(() => canonicalText(nest(n, (v) => [v], copy))).not.toThrow();
      else expect(refusal(() => canonicalText(nest(n, (v) => [v], copy)))).toStrictEqual(TOO_DEEP);
    }
  });

  it('an array copy of several members takes the tallest for its height', () => {
    const copy = canonicalCopy([nest(60), 0, [0], nest(10)]);
    expect(() => canonicalText(nest(67, (v) => [v], copy))).not.toThrow();
    expect(refusal(() => canonicalText(nest(68, (v) => [v], copy)))).toStrictEqual(TOO_DEEP);
    const obj = canonicalCopy({ a: nest(10), b: nest(60), c: 0 });
    expect(() => canonicalText(nest(67, (v) => [v], obj))).not.toThrow();
    expect(refusal(() => canonicalText(nest(68, (v) => [v], obj)))).toStrictEqual(TOO_DEEP);
  });

  it('refuses what canonicalText refuses, with the same message and details', () => {
    expect(refusal(() => canonicalCopy({ a: new Date(0) }))).toStrictEqual(NOT_PLAIN);
    expect(refusal(() => canonicalCopy(new Map()))).toStrictEqual(NOT_PLAIN);
    expect(refusal(() => canonicalCopy({ a: 1, b: undefined }))).toStrictEqual(['undefined member cannot be canonicalised', { key: 'b' }]);
    expect(refusal(() => canonicalCopy([1, { '\ud800': 1 }]))).toStrictEqual(['key holds a lone surrogate', {}]);
  });

  it('copies a null-prototype object as a plain object, and a "__proto__" key as an own enumerable member', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { b: 2, a: [1] });
    const copy = canonicalCopy(bare);
    expect(copy).not.toBe(bare);
    expect(canonicalText(copy)).toBe('{"a":[1],"b":2}');
    const parsed = JSON.parse('{"__proto__":{"x":1},"y":2}') as Record<string, unknown>;
    const c = canonicalCopy(parsed);
    expect(Object.keys(c)).toStrictEqual(['__proto__', 'y']);
    expect(Object.getPrototypeOf(c)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(c, '__proto__')).toMatchObject({ value: { x: 1 }, enumerable: true });
    expect((c as { x?: unknown }).x).toBeUndefined();
    expect(canonicalText(c)).toBe('{"__proto__":{"x":1},"y":2}');
    expect(isCanonicalFrozen(c)).toBe(true);
    expect(isCanonicalFrozen(c['__proto__'])).toBe(true);
  });
});

describe('canonicalCopy beneath the top level (a sorted copy, written by JSON.stringify)', () => {
  it('writes keys that may be array indices the long way: objects list those first, RFC 8785 sorts them as strings', () => {
    const copy = canonicalCopy({ body: { '9': 'b', '10': 'a', z: { '2': 0, '11': 1 }, a: [{ y: 1, x: 2 }], '': null } });
    expect(canonicalText(copy)).toBe('{"body":{"":null,"10":"a","9":"b","a":[{"x":2,"y":1}],"z":{"11":1,"2":0}}}');
    expect(canonicalText(canonicalCopy({ body: { b: { d: 1, c: '\u2028"\n' }, a: -0 } }))).toBe('{"body":{"a":0,"b":{"c":"\u2028\\"\\n","d":1}}}');
    // Indices that all begin with 9: numerically 95 comes first, as text "900" does.
    expect(canonicalText(canonicalCopy({ body: { '95': 1, '900': 2 } }))).toBe('{"body":{"900":2,"95":1}}');
  });

  it('copies null-prototype objects and "__proto__" members beneath the top level as plain data', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { b: 2, a: 1 });
    const parsed = JSON.parse('{"__proto__":{"x":1},"y":2}') as Record<string, unknown>;
    const copy = canonicalCopy({ body: { bare, parsed } });
    expect(canonicalText(copy)).toBe('{"body":{"bare":{"a":1,"b":2},"parsed":{"__proto__":{"x":1},"y":2}}}');
    expect(Object.getPrototypeOf(copy.body.parsed)).toBe(Object.prototype);
  });

  it('writes a top-level copy member by member: separators, and a height that counts its own level', () => {
    expect(canonicalText(canonicalCopy([1, 'a', [2]]))).toBe('[1,"a",[2]]');
    expect(canonicalText(canonicalCopy({ b: 1, a: 'x' }))).toBe('{"a":"x","b":1}');
    for (const copy of [canonicalCopy([0]), canonicalCopy({ a: 0 })]) {
      expect(() => canonicalText(nest(127, (v) => [v], copy))).not.toThrow();
      expect(refusal(() => canonicalText(nest(128, (v) => [v], copy)))).toStrictEqual(TOO_DEEP);
    }
  });

  it('refuses beneath the top level what canonicalText refuses, with the same message and details', () => {
    const deep = (v: unknown) => ({ body: { inner: [v] } });
    for (const bad of [{ x: '\ud800' }, { x: Number.NaN }, { x: undefined }, { x: new Date(0) }, { x: () => 1 }, { x: 1n }, { '\udc00': 1 }]) {
      expect(refusal(() => canonicalCopy(deep(bad))), JSON.stringify(Object.keys(bad))).toStrictEqual(refusal(() => canonicalText(deep(bad))));
    }
  });

  it('copies the body and all beneath it, frozen, so the caller\'s objects stay theirs', () => {
    const shared = freezeCanonical({ k: [1] });
    const input = { body: { inner: { a: 1 }, shared } };
    const copy = canonicalCopy(input);
    expect(copy.body).not.toBe(input.body);
    expect(copy.body.inner).not.toBe(input.body.inner);
    expect(Object.isFrozen(copy.body.inner) && Object.isFrozen(copy.body.shared.k)).toBe(true);
    expect(Object.isFrozen(input.body.inner)).toBe(false);
    input.body.inner.a = 2;
    expect(canonicalText(copy)).toBe('{"body":{"inner":{"a":1},"shared":{"k":[1]}}}');
    expect(isCanonicalFrozen(copy.body)).toBe(true);
  });
});

describe('memberTexts and composeObjectText', () => {
  it('give each member its text, and compose to canonicalText of the object', () => {
    const value = { b: [1, 'x'], a: { z: null, y: true } };
    const members = memberTexts(value);
    expect([...members]).toStrictEqual([
      ['b', '[1,"x"]'],
      ['a', '{"y":true,"z":null}'],
    ]);
    expect(composeObjectText(members)).toBe(canonicalText(value));
    expect(composeObjectText(new Map())).toBe('{}');
  });

  it('accept a null-prototype object and refuse arrays and other objects', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 });
    expect([...memberTexts(bare)]).toStrictEqual([['a', '1']]);
    expect(refusal(() => memberTexts([1]))).toStrictEqual(NOT_PLAIN);
    expect(refusal(() => memberTexts(new Map()))).toStrictEqual(NOT_PLAIN);
    expect(refusal(() => memberTexts(new Date(0)))).toStrictEqual(NOT_PLAIN);
  });

  it('refuse an undefined member by key, and a lone-surrogate key', () => {
    expect(refusal(() => memberTexts({ a: 1, c: undefined }))).toStrictEqual(['undefined member cannot be canonicalised', { key: 'c' }]);
    expect(refusal(() => composeObjectText(new Map([['\udc00', '1']])))).toStrictEqual(['key holds a lone surrogate', {}]);
  });

  it('members are written one level down: 127 more levels fit beneath a member, 128 do not', () => {
    expect(() => memberTexts({ a: nest(127) })).not.toThrow();
    expect(refusal(() => memberTexts({ a: nest(128) }))).toStrictEqual(TOO_DEEP);
  });
});

describe('frozenCopy and freezeCanonical', () => {
  it('frozenCopy shares a frozen value, copies null members and leaves non-JSON objects as they are', () => {
    const frozen = freezeCanonical({ a: [1] });
    expect(frozenCopy(frozen)).toBe(frozen);
    expect(frozenCopy(null)).toBeNull();
    expect(frozenCopy(3)).toBe(3);
    const date = new Date(0);
    const copy = frozenCopy({ n: null, d: date, f: frozen, list: [null, 'x'] });
    expect(copy.n).toBeNull();
    expect(copy.d).toBe(date);
    expect(copy.f).toBe(frozen);
    expect(copy.list).toStrictEqual([null, 'x']);
    expect(Object.isFrozen(date)).toBe(false);
    // An undefined member is copied as it is (canonicalising it is what refuses it).
    const withUndefined = frozenCopy({ a: undefined, b: 1 });
    expect(Object.keys(withUndefined)).toStrictEqual(['a', 'b']);
    expect(withUndefined.a).toBeUndefined();
    expect(Object.isFrozen(withUndefined)).toBe(true);
  });

  it('frozenCopy copies a null-prototype object rather than freezing the caller\'s', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 });
    const copy = frozenCopy(bare);
    expect(copy).not.toBe(bare);
    expect(Object.isFrozen(bare)).toBe(false);
    expect(isCanonicalFrozen(copy)).toBe(true);
    expect(canonicalText(copy)).toBe('{"a":1}');
  });

  it('freezeCanonical freezes null-prototype objects, and nothing above a non-JSON value', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: [1] });
    expect(isCanonicalFrozen(freezeCanonical(bare))).toBe(true);
    const inner = { d: new Date(0) };
    const outer = freezeCanonical({ x: inner, y: [1] });
    expect(isCanonicalFrozen(outer)).toBe(false);
    expect(isCanonicalFrozen(inner)).toBe(false);
    expect(isCanonicalFrozen(outer.y)).toBe(true);
    expect(Object.isFrozen(outer)).toBe(false);
    const list = freezeCanonical([[{ d: new Date(0) }], 1]);
    expect(isCanonicalFrozen(list)).toBe(false);
    expect(isCanonicalFrozen(list[0])).toBe(false);
  });

  it('isCanonicalFrozen is false for scalars and null', () => {
    expect(isCanonicalFrozen(null)).toBe(false);
    expect(isCanonicalFrozen(1)).toBe(false);
    expect(isCanonicalFrozen('x')).toBe(false);
    expect(isCanonicalFrozen(Object.freeze({}))).toBe(false);
  });
});
