import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const TSX = join(ROOT, 'node_modules/.bin/tsx');

async function baton(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(TSX, ['src/cli/main.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env }, timeout: 90_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('baton keys / cards CLI', () => {
  it('rotates keys, signs cards into well-known and verifies them with only the JWKS; tampering exits 2', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'baton-cli-'));
    const env = { BATON_KEYS_DIR: join(dir, 'keys'), BATON_WELL_KNOWN_DIR: join(dir, 'wk'), BATON_PUBLIC_URL: 'https://baton.example', BATON_CONFIG: '' };
    expect((await baton(['keys', 'rotate', '--alg', 'EdDSA'], env)).code).toBe(0);
    const list = await baton(['keys', 'list', '--json'], env);
    const rows = JSON.parse(list.stdout) as Array<{ kid: string; alg: string; status: string }>;
    expect(rows.filter((r) => r.alg === 'EdDSA')).toHaveLength(2);
    expect(list.stdout).not.toMatch(/"d"/);

    const sign = await baton(['cards', 'sign'], env);
    expect(sign.code).toBe(0);
    const card = JSON.parse(await readFile(join(dir, 'wk', 'agent-card.json'), 'utf8')) as { signatures: unknown[] };
    expect(card.signatures).toHaveLength(3); // ES256 + both EdDSA keys during rotation

    const ok = await baton(['cards', 'verify', join(dir, 'wk', 'agent-card.json'), '--jwks', join(dir, 'wk', 'jwks.json')], env);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).verified_keys).toHaveLength(3);

    const text = await readFile(join(dir, 'wk', 'agent-card.json'), 'utf8');
    await writeFile(join(dir, 'evil.json'), text.replace('Baton delegation gateway', 'Evil gateway'));
    const bad = await baton(['cards', 'verify', join(dir, 'evil.json'), '--jwks', join(dir, 'wk', 'jwks.json')], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/invalid_request/);

    const oldEdDsa = rows.find((r) => r.alg === 'EdDSA' && r.status !== 'current')!;
    expect((await baton(['keys', 'retire', oldEdDsa.kid], env)).code).toBe(0);
    await baton(['cards', 'sign'], env);
    const resigned = JSON.parse(await readFile(join(dir, 'wk', 'agent-card.json'), 'utf8')) as { signatures: unknown[] };
    expect(resigned.signatures).toHaveLength(2);
  }, 180_000); // seven tsx process start-ups; slow when the whole suite runs beside it
});
