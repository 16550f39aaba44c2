/**
 * The README's way of running Baton outside a checkout (issue #25 item 10):
 * the `baton` bin run directly — as `exec node_modules/.bin/baton … serve`
 * under a supervisor, never through `npx`, which does not pass SIGTERM on —
 * from a directory with only a config file. It starts without a `cardsDir`
 * (the package's example card) and drains and exits on SIGTERM sent to that
 * one process, leaving nothing listening. (`scripts/pack-check.mjs` runs the
 * same recipe against the packed tarball.)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');
const dir = mkdtempSync(join(tmpdir(), 'baton-serve-bin-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('runs from a directory without cards/ and drains on SIGTERM to its own process', async () => {
  // The recipe's config: no cardsDir, relative dataDir.
  writeFileSync(join(dir, 'baton.config.yaml'), ['port: 0', 'dataDir: ./data', 'logLevel: info', ''].join('\n'));
  const child = spawn(process.execPath, ['--import', TSX, MAIN, '--config', 'baton.config.yaml', 'serve'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, BATON_CONFIG: '' } });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', () => {
        const m = /baton: listening on (\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      void exited.then(() => reject(new Error(`serve exited before listening:\n${out.slice(-2000)}`)));
    });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const card = (await (await fetch(`${url}/.well-known/agent-card.json`)).json()) as { name?: string };
    expect(typeof card.name).toBe('string');
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out).toMatch(/stopped after draining/);
    expect(await fetch(`${url}/healthz`).then(() => 'answered', () => 'refused')).toBe('refused');
  } finally {
    child.kill('SIGKILL');
  }
}, 60_000);
