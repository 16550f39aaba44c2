import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/push/secret-box.ts';
import { expectCode } from '../helpers/errors.ts';

const box = new SecretBox(Buffer.alloc(32, 7));

describe('secret box', () => {
  it('seals with a fresh nonce and opens only in the same context', () => {
    const a = box.seal('{"token":"t0p"}', 'task-1/c1');
    const b = box.seal('{"token":"t0p"}', 'task-1/c1');
    expect(a).not.toBe(b);
    expect(a).not.toContain('t0p');
    expect(box.open(a, 'task-1/c1')).toBe('{"token":"t0p"}');
    expectCode(() => box.open(a, 'task-2/c1'), 'storage_error');
  });

  it('refuses a tampered ciphertext and another key', () => {
    const sealed = box.seal('hello', 'ctx');
    const parts = sealed.split('.');
    const ct = Buffer.from(parts[2]!, 'base64url');
    ct[0] = ct[0]! ^ 1;
    expectCode(() => box.open([parts[0], parts[1], ct.toString('base64url'), parts[3]].join('.'), 'ctx'), 'storage_error');
    expectCode(() => new SecretBox(Buffer.alloc(32, 8)).open(sealed, 'ctx'), 'storage_error');
    expectCode(() => box.open('v2.x.y.z', 'ctx'), 'storage_error');
  });

  it('mints per-task inbound tokens that only match their task', () => {
    const t = box.inboundToken('att_1');
    expect(box.inboundTokenMatches('att_1', t)).toBe(true);
    expect(box.inboundTokenMatches('att_2', t)).toBe(false);
    expect(box.inboundTokenMatches('att_1', `${t}x`)).toBe(false);
    expect(box.inboundTokenMatches('att_1', undefined)).toBe(false);
    expect(new SecretBox(Buffer.alloc(32, 8)).inboundTokenMatches('att_1', t)).toBe(false);
  });

  it('generates a 0600 secret file once and reuses it; the environment wins', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-secret-'));
    const first = await SecretBox.open(dir, {});
    const file = join(dir, 'push-secret');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = await SecretBox.open(dir, {});
    expect(again.inboundToken('x')).toBe(first.inboundToken('x'));
    const fromEnv = await SecretBox.open(dir, { BATON_PUSH_SECRET: Buffer.alloc(32, 9).toString('base64url') });
    expect(fromEnv.inboundToken('x')).not.toBe(first.inboundToken('x'));
    expect(readFileSync(file, 'utf8').trim().length).toBeGreaterThanOrEqual(43);
    await expect(SecretBox.open(dir, { BATON_PUSH_SECRET: 'c2hvcnQ' })).rejects.toThrow(/at least 32 bytes/);
  });
});
