/**
 * How canonical.ts knows an object it froze (issue #24: a hidden member, not
 * a WeakSet and a WeakMap): only the object it froze is trusted, never a copy
 * that carried the member along or an object that inherits it, so a cached
 * text can never stand for other content; an object someone else froze first
 * is still known; and no copy or encoding of a record sees the member.
 */
import { describe, expect, it } from 'vitest';
import { canonicalCopy, canonicalText, freezeCanonical, isCanonicalFrozen, knownText } from '../../src/records/canonical.ts';
import { expectCode } from '../helpers/errors.ts';

/** A record-like value whose text canonical.ts caches (written at the top). */
const sealed = () => {
  const v = freezeCanonical({ id: 'rec_1', body: { n: 1, tags: ['a'] } });
  expect(canonicalText(v)).toBe('{"body":{"n":1,"tags":["a"]},"id":"rec_1"}');
  expect(knownText(v)).toBe('{"body":{"n":1,"tags":["a"]},"id":"rec_1"}');
  return v;
};

describe('an object canonical.ts froze', () => {
  it('is known with its text; a copy made with its property descriptors is not, and is written as what it holds', () => {
    const v = sealed();
    // Descriptors copy every own member, the hidden one included; the copy can be changed before it is frozen.
    const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(v)) as Record<string, unknown>;
    Object.defineProperty(copy, 'extra', { value: true, enumerable: true });
    Object.freeze(copy);
    expect(isCanonicalFrozen(copy)).toBe(false);
    expect(knownText(copy)).toBeUndefined();
    expect(canonicalText(copy)).toBe('{"body":{"n":1,"tags":["a"]},"extra":true,"id":"rec_1"}');
  });

  it('lends nothing to an object that inherits from it: that one is refused as not plain, not written as its prototype', () => {
    const v = sealed();
    const heir = Object.freeze(Object.create(v) as object);
    expect(isCanonicalFrozen(heir)).toBe(false);
    expect(knownText(heir)).toBeUndefined();
    expect(expectCode(() => canonicalText(heir), 'invalid_request').message).toBe('only plain objects can be canonicalised');
  });

  it('is still known when something else froze it first, and its text is cached all the same', () => {
    const inner = Object.freeze({ z: 1, a: 2 });
    const outer = Object.freeze({ inner });
    expect(isCanonicalFrozen(outer)).toBe(false);
    expect(freezeCanonical(outer)).toBe(outer);
    expect(isCanonicalFrozen(outer)).toBe(true);
    expect(isCanonicalFrozen(inner)).toBe(true);
    expect(canonicalText(outer)).toBe('{"inner":{"a":2,"z":1}}');
    expect(knownText(outer)).toBe('{"inner":{"a":2,"z":1}}');
  });

  it('shows no extra member to spread, Object.assign, Object.keys, JSON or structuredClone, and none of those copies is trusted', () => {
    const v = canonicalCopy({ id: 'rec_2', body: { n: 2 } });
    expect(isCanonicalFrozen(v)).toBe(true);
    expect(Object.keys(v)).toStrictEqual(['id', 'body']);
    expect(JSON.parse(JSON.stringify(v))).toStrictEqual({ id: 'rec_2', body: { n: 2 } });
    for (const copy of [{ ...v }, Object.assign({}, v), structuredClone(v)]) {
      expect(Object.getOwnPropertySymbols(copy)).toStrictEqual([]);
      expect(isCanonicalFrozen(copy)).toBe(false);
      expect(copy).toStrictEqual({ id: 'rec_2', body: { n: 2 } });
    }
  });

  it('an unfrozen value is never known, however often it is written', () => {
    const v = { b: [1], a: { c: 'x' } };
    expect(canonicalText(v)).toBe('{"a":{"c":"x"},"b":[1]}');
    expect(isCanonicalFrozen(v)).toBe(false);
    expect(knownText(v)).toBeUndefined();
    v.b.push(2);
    expect(canonicalText(v)).toBe('{"a":{"c":"x"},"b":[1,2]}');
  });
});
