/** `baton delegate issue|show` end to end, in a scratch directory with the real store. */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
// Absolute, so it resolves whatever the child's cwd.
const TSX = import.meta.resolve('tsx');
const MAIN = resolve('src/cli/main.ts'); // the sources through tsx: a stale dist/ must not pass for them
const D = `sha256:${'a'.repeat(64)}`;
let dir: string;

const baton = (...args: string[]) =>
  run(process.execPath, ['--import', TSX, MAIN, ...args], { cwd: dir, env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('BATON_'))), BATON_CONFIG: '' } }).catch((e: { stdout: string; stderr: string; code: number }) => e);

describe('baton delegate', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'baton-delegate-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('issues from the local-direct preset, stores it, and shows the verified chain', async () => {
    const out = await baton(
      'delegate', 'issue', '--preset', 'local-direct',
      '--delegatee-card', `card_x@r3#${D}`, '--delegatee-actor', `actor_x@r1#${D}`, '--operator', `op_x@r1#${D}`,
      '--objective', 'Summarise PRJ-1', '--resource', 'PRJ-1', '--json',
    );
    const contract = JSON.parse(out.stdout) as { record_id: string; body: { limits: { max_invocations: number }; subdelegation_policy: { allowed: boolean } } };
    expect(contract.body.limits.max_invocations).toBe(1);
    expect(contract.body.subdelegation_policy.allowed).toBe(false);
    const shown = await baton('delegate', 'show', contract.record_id);
    expect(shown.stdout).toContain(`${contract.record_id}@`);
    expect(shown.stdout).toContain('chain: verified');
  });

  it('refuses a wildcard resource and an unknown delegation', async () => {
    const bad = (await baton(
      'delegate', 'issue', '--preset', 'local-direct',
      '--delegatee-card', `card_x@r3#${D}`, '--delegatee-actor', `actor_x@r1#${D}`, '--operator', `op_x@r1#${D}`,
      '--objective', 'x', '--resource', '*',
    )) as { code?: number; stderr: string };
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('wildcards');
    const missing = (await baton('delegate', 'show', 'dlg_nope')) as { code?: number; stderr: string };
    expect(missing.code).toBe(2);
  });
});
