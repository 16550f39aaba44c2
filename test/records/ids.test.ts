/**
 * Identifiers (src/records/ids.ts): the production source writes the 48-bit
 * Unix millisecond then 10 CSPRNG bytes drawn from a 4 KiB pool, each byte
 * once, as 26 lowercase RFC 4648 base32hex characters, so ids sort by the
 * millisecond they were made in; external identifiers are refused with their
 * own message when empty, ill-formed, holding a control character or too long.
 */
import type * as NodeCrypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';

const draws = vi.hoisted(() => ({ calls: 0 }));
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof NodeCrypto>();
  return {
    ...actual,
    // Pool n (0-based) holds byteAt(n, i): every id is predictable.
    randomBytes: (size: number) => {
      const n = draws.calls++;
      const b = Buffer.alloc(size);
      for (let i = 0; i < size; i++) b[i] = (i * 7 + (i >> 8) * 3 + n * 13) & 255;
      return b;
    },
  };
});

const { checkIdentifier, Identifier, randomIds, sequentialIds } = await import('../../src/records/ids.ts');
const { expectCode } = await import('../helpers/errors.ts');

/** RFC 4648 §7 base32hex, lowercase, without padding: the reference the ids must match. */
const base32hex = (bytes: Uint8Array): string => {
  const bits = [...bytes].map((b) => b.toString(2).padStart(8, '0')).join('');
  let out = '';
  for (let i = 0; i < bits.length; i += 5) out += '0123456789abcdefghijklmnopqrstuv'[parseInt(bits.slice(i, i + 5).padEnd(5, '0'), 2)];
  return out;
};
const poolBytes = (n: number, from: number) => Uint8Array.from({ length: 10 }, (_, i) => ((from + i) * 7 + ((from + i) >> 8) * 3 + n * 13) & 255);
/** The 48-bit big-endian millisecond, then the random bytes. */
const idBytes = (ms: number, random: Uint8Array) => Uint8Array.from([...Array.from({ length: 6 }, (_, i) => Math.floor(ms / 2 ** (8 * (5 - i))) & 255), ...random]);

describe('randomIds', () => {
  it('writes the millisecond and 10 pool bytes as 26 base32hex characters, 409 ids per 4 KiB draw, each byte once', () => {
    const ms = Date.UTC(2026, 11, 4, 21, 30);
    const now = vi.spyOn(Date, 'now').mockReturnValue(ms);
    try {
      expect(draws.calls).toBe(0);
      const ids = Array.from({ length: 410 }, () => randomIds.next('card'));
      for (let i = 0; i < 409; i++) expect(ids[i]).toBe(`card_${base32hex(idBytes(ms, poolBytes(0, i * 10)))}`);
      expect(ids[409]).toBe(`card_${base32hex(idBytes(ms, poolBytes(1, 0)))}`);
      expect(draws.calls).toBe(2);
      expect(ids[0]).toMatch(/^card_[0-9a-v]{26}$/);
      expect(ids[1]).not.toBe(ids[0]);
    } finally {
      now.mockRestore();
    }
  });

  it('sorts ids by the millisecond they were made in, whatever their random bits', () => {
    const now = vi.spyOn(Date, 'now');
    try {
      const made = [1, 2, 255, 256, 65_536, 2 ** 40, 2 ** 47, 2 ** 48 - 1].flatMap((ms) => {
        now.mockReturnValue(ms);
        return [randomIds.next('rsv'), randomIds.next('rsv')].sort();
      });
      expect([...made].sort()).toStrictEqual(made);
    } finally {
      now.mockRestore();
    }
  });

  it('takes prefixes of a lowercase letter then up to 15 of [a-z0-9_]', () => {
    expect(randomIds.next(`a${'b_9'.repeat(5)}`)).toMatch(/^ab_9b_9b_9b_9b_9_[0-9a-v]{26}$/);
    for (const bad of ['', 'Card', '9a', `a${'b'.repeat(16)}`, 'card!', 'ca-rd', '_a']) {
      expect(() => randomIds.next(bad)).toThrow(new TypeError(`bad id prefix ${JSON.stringify(bad)}`));
    }
  });
});

describe('sequentialIds', () => {
  it('counts from 1 under the seed, six digits, seed "t" by default', () => {
    const ids = sequentialIds();
    expect([ids.next('x'), ids.next('y')]).toStrictEqual(['x_t_000001', 'y_t_000002']);
    expect(sequentialIds('s9').next('rev')).toBe('rev_s9_000001');
  });
});

describe('checkIdentifier', () => {
  const refusal = (value: string, field?: string) => {
    try {
      checkIdentifier(value, field);
    } catch (err) {
      const e = err as { code: string; message: string; details: unknown };
      return [e.code, e.message, e.details];
    }
    return 'accepted';
  };

  it('names the field in each refusal', () => {
    expect(refusal('')).toStrictEqual(['invalid_request', 'identifier is empty', { field: 'identifier' }]);
    expect(refusal('', 'task_id')).toStrictEqual(['invalid_request', 'task_id is empty', { field: 'task_id' }]);
    expect(refusal('a\ud800', 'task_id')).toStrictEqual(['invalid_request', 'task_id holds a lone surrogate', { field: 'task_id' }]);
    expect(refusal('a\u0000', 'task_id')).toStrictEqual(['invalid_request', 'task_id holds a control character', { field: 'task_id' }]);
    expect(refusal('é'.repeat(1025), 'task_id')).toStrictEqual(['limit_exceeded', 'task_id exceeds 2048 bytes', { field: 'task_id' }]);
  });

  it('refuses C0, DEL, C1 and U+2028/2029, and nothing next to them', () => {
    for (const c of ['\u0000', '\u001f', '\u007f', '\u0085', '\u009f', '\u2028', '\u2029']) expect(refusal(`id${c}x`)).not.toBe('accepted');
    for (const c of [' ', '~', '\u00a0', '\u2027', '\u202a', 'é']) expect(refusal(`id${c}x`)).toBe('accepted');
  });

  it('accepts exactly 2048 UTF-8 bytes and refuses 2049', () => {
    expect(checkIdentifier('é'.repeat(1024))).toBe('é'.repeat(1024));
    expect(refusal(`${'é'.repeat(1024)}a`)).toStrictEqual(['limit_exceeded', 'identifier exceeds 2048 bytes', { field: 'identifier' }]);
    expectCode(() => checkIdentifier('a'.repeat(2049)), 'limit_exceeded');
  });

  it('Identifier (the zod form) reports the same message as an issue', () => {
    expect(Identifier.safeParse('rec_1').success).toBe(true);
    const r = Identifier.safeParse('');
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => [i.code, i.message])).toStrictEqual([['custom', 'identifier is empty']]);
    expect(Identifier.safeParse('a\u2028').error?.issues[0]?.message).toBe('identifier holds a control character');
  });
});
