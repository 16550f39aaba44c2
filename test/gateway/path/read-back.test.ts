/**
 * The task view Baton keeps of a delegatee's task (path/read-back.ts
 * storedView): status, artifacts and history without the contract chains
 * Baton attached, and — when its canonical bytes would not fit an attempt
 * record — history dropped first, then artifacts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { storedView } from '../../../src/gateway/path/read-back.ts';
import { CONTRACT_EXTENSION } from '../../../src/gateway/present.ts';
import { canonicalBytes } from '../../../src/records/canonical.ts';
import { RECORD_LIMITS } from '../../../src/records/limits.ts';
import type { JsonValue } from '../../../src/records/strict-json.ts';

/** What the view may take: the record bound less the room kept for the envelope and the rest of the body. */
const BUDGET = RECORD_LIMITS.maxRecordBytes - 16 * 1024;
const status = { state: 'TASK_STATE_COMPLETED' };
const artifact = (text: string) => ({ artifactId: 'a', parts: [{ text }] });
const message = (text: string, metadata?: { [key: string]: JsonValue }) => ({ messageId: 'm1', role: 'ROLE_USER', parts: [{ text }], ...(metadata ? { metadata } : {}) });
const size = (v: unknown) => canonicalBytes(v).byteLength;

describe('storedView', () => {
  it('keeps status, artifacts and history, without the contract chain Baton attached to its own messages', () => {
    const view = storedView({ id: 't', status, artifacts: [artifact('done')], history: [message('hi', { [CONTRACT_EXTENSION]: { chain: ['x'] }, other: 1 })] });
    expect(view).toEqual({ status, artifacts: [artifact('done')], history: [message('hi', { other: 1 })] });
  });

  it('drops the history first, then the artifacts, when the view would not fit', () => {
    const big = 'x'.repeat(BUDGET);
    expect(storedView({ status, artifacts: [artifact('done')], history: [message(big)] })).toEqual({ status, artifacts: [artifact('done')], truncated: 'history' });
    expect(storedView({ status, artifacts: [artifact(big)], history: [message('hi')] })).toEqual({ status, truncated: 'history,artifacts' });
  });

  it('measures UTF-8 bytes, not characters: a view of fewer characters than the budget but more bytes is cut', () => {
    // 'é' is two bytes in UTF-8: the text has about two thirds of the budget in characters and 4/3 of it in bytes.
    const text = 'é'.repeat(Math.floor((BUDGET * 2) / 3));
    const whole = { status, history: [message(text)] };
    expect(JSON.stringify(whole).length).toBeLessThan(BUDGET);
    expect(size(whole)).toBeGreaterThan(BUDGET);
    expect(storedView(whole)).toEqual({ status, truncated: 'history' });
  });

  it('measures a view by its canonical bytes: JSON.stringify writes as many for any JSON value (issue #24 measures it so)', () => {
    const text = fc.string({ unit: 'grapheme' });
    const json = fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), text, fc.array(tie('value')), fc.dictionary(text, tie('value'))),
    })).value;
    fc.assert(fc.property(json, (v) => Buffer.byteLength(JSON.stringify(v), 'utf8') === size(v)), { numRuns: 500 });
  });

  it('keeps a view of exactly the budget, and cuts one byte more', () => {
    const room = (n: number) => ({ status, history: [message('x'.repeat(n))] });
    const fits = BUDGET - size(room(0));
    expect(size(room(fits))).toBe(BUDGET);
    expect(storedView(room(fits))).toEqual(room(fits));
    expect(storedView(room(fits + 1))).toEqual({ status, truncated: 'history' });
  });
});
