/**
 * The quick start's `npm start` is the process an operator's supervisor
 * signals: SIGTERM sent to npm must reach Baton, which drains and exits, and
 * leaves nothing listening behind.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { freePort, tryConnect } from './harness/net.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));



it('SIGTERM to `npm start` drains Baton and exits; nothing keeps listening', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-npm-start-'));
  const port = await freePort();
  // Its own process group, so a failing run can still kill whatever npm started.
  const npm = spawn('npm', ['start'], { cwd: ROOT, detached: true, env: { ...process.env, BATON_DATA_DIR: dir, BATON_PORT: String(port), BATON_LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  npm.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  npm.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((r) => npm.once('exit', (code) => r(code)));
  try {
    await new Promise<void>((resolve, reject) => {
      const check = () => (out.includes('baton: listening on') ? resolve() : undefined);
      npm.stdout!.on('data', check);
      void exited.then(() => reject(new Error(`npm start exited early:\n${out.slice(-2000)}`)));
    });
    expect(await tryConnect(port)).toBe('accepted');
    npm.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out).toMatch(/"signal":"SIGTERM"/);
    expect(out).toMatch(/stopped after draining/);
    expect(await tryConnect(port)).toBe('refused');
  } finally {
    try {
      process.kill(-npm.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
    rmSync(dir, { recursive: true, force: true });
  }
}, 90_000);
