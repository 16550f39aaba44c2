/**
 * The writer's two shortcuts from issue #24 (src/records/canonical.ts), held by
 * counts rather than bytes (the bytes are checked against canonicalize in
 * canonical.test.ts): a plain string is quoted without JSON.stringify, and a
 * member name is quoted once and remembered, up to a bound, because names come
 * from parsed input too. The two tests share the module's name cache, so the
 * bound comes last.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { canonicalText } from '../../src/records/canonical.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('canonical writer shortcuts (counted)', () => {
  it('writes plain strings and member names it has quoted before without JSON.stringify', () => {
    const value = { alpha: 'rev_01HZX3', beta: ['sha256:00ff', 'two words'], gamma: { delta: 'x' }, '': '' };
    const expected = '{"":"","alpha":"rev_01HZX3","beta":["sha256:00ff","two words"],"gamma":{"delta":"x"}}';
    expect(canonicalText(value)).toBe(expected);
    const stringify = vi.spyOn(JSON, 'stringify');
    expect(canonicalText(value)).toBe(expected);
    expect(stringify).not.toHaveBeenCalled();
  });

  it('keeps at most 4,096 quoted member names: names beyond the bound are quoted again on every write', () => {
    const names = 5000;
    const many = Object.fromEntries(Array.from({ length: names }, (_, i) => [`bound_${i}`, null]));
    const text = canonicalText(many);
    const stringify = vi.spyOn(JSON, 'stringify');
    expect(canonicalText(many)).toBe(text);
    // Whatever names the cache held before, at most 4,096 of these are kept.
    expect(stringify.mock.calls.length).toBeGreaterThanOrEqual(names - 4096);
    expect(stringify.mock.calls.every(([arg]) => typeof arg === 'string' && arg.startsWith('bound_'))).toBe(true);
  });
});
