/**
 * records/wire-json.ts: a request's JSON text with the sealed records it
 * embeds spliced in by their known canonical text (issue #24), and otherwise
 * the same value JSON.stringify would write.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalText } from '../../src/records/canonical.ts';
import { sealRecord } from '../../src/records/envelope.ts';
import { sequentialIds } from '../../src/records/ids.ts';
import { manualClock } from '../../src/records/time.ts';
import { wireJson } from '../../src/records/wire-json.ts';

const actor = { object_id: 'actor_owner', revision_id: 'rev_1', content_digest: `sha256:${'a'.repeat(64)}` };
const deps = { ids: sequentialIds('wire'), clock: manualClock('2026-12-01T10:00:00.000Z') };
/** A sealed record whose text is known, as a stored one's is (the store writes its canonical text). */
const contract = (n: number) => {
  const c = sealRecord({ type: 'delegation_contract', body: { zeta: n, alpha: ['read', 'x"y'], nested: { b: 1, a: 2 } }, issuedBy: actor, lifecycle: 'active' }, deps);
  canonicalText(c);
  return c;
};

describe('wireJson', () => {
  it('writes each sealed record of a forwarded request as its canonical text, and parses to what JSON.stringify writes', () => {
    const chain = [contract(1), contract(2)];
    const request = {
      jsonrpc: '2.0',
      id: 'SendStreamingMessage',
      method: 'SendStreamingMessage',
      params: { message: { role: 'ROLE_USER', parts: [{ text: 'hi' }], metadata: { k: 'v' } }, metadata: { 'urn:ext': { chain } } },
    };
    const text = wireJson(request);
    // A sealed record's members are not in JCS order at its top level, so JSON.stringify writes other bytes.
    for (const c of chain) {
      expect(text).toContain(canonicalText(c));
      expect(JSON.stringify(c)).not.toBe(canonicalText(c));
    }
    expect(JSON.parse(text)).toStrictEqual(JSON.parse(JSON.stringify(request)));
  });

  it('writes a sealed record whose text is not known yet as JSON.stringify does, and computes nothing', () => {
    const fresh = sealRecord({ type: 'grant', body: { b: 1, a: 2 }, issuedBy: actor, lifecycle: 'active' }, deps);
    expect(wireJson({ fresh })).toBe(JSON.stringify({ fresh }));
  });

  it('in the message placement too (one level deeper), and in an array at the top', () => {
    const chain = [contract(3)];
    const params = { message: { metadata: { 'urn:ext': { chain } } } };
    expect(wireJson({ params })).toContain(canonicalText(chain[0]));
    expect(wireJson(chain)).toBe(`[${canonicalText(chain[0])}]`);
  });

  it('leaves out what JSON.stringify leaves out, writes null where it does, and hands non-plain values to it', () => {
    const value = {
      u: undefined,
      f: () => 1,
      s: Symbol('s'),
      list: [undefined, () => 1, NaN, Infinity, -0, 'a\u0000"\\'],
      date: new Date(0),
      withToJson: { toJSON: () => ({ replaced: true }) },
      map: new Map([[1, 2]]),
      boxed: [new String('ab'), new Number(1), new Boolean(false)],
      nullProto: Object.assign(Object.create(null) as object, { b: 1 }),
      deep: { a: { b: { c: { d: { e: { f: { g: { h: [1, { i: undefined }] } } } } } } } },
    };
    expect(wireJson(value)).toBe(JSON.stringify(value));
    expect(() => wireJson({ n: 1n })).toThrow(TypeError);
  });

  it('parses to what JSON.stringify writes, for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const value = { v, list: [v] };
        expect(JSON.parse(wireJson(value))).toStrictEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 300 },
    );
  });
});
