/**
 * `baton serve --workers 2` (issue #15): two gateway processes behind one
 * port on one SQLite store. Delegated calls through that port all complete
 * verified, both workers do the work, a killed worker is replaced while the
 * port keeps serving, SIGHUP to the primary (named `baton`) reloads every
 * worker, and SIGTERM drains the group and frees the port.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { spawnAgent, stopAll } from './harness/process.ts';
import { tryConnect } from './harness/net.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const API_KEY = 'test-key-serve-workers';
const run = promisify(execFile);
afterAll(stopAll);

/** utime+stime in clock ticks, from /proc. */
const cpuTicks = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
};

async function send(url: string, n: number): Promise<{ state?: string; outcome?: string }> {
  const res = await fetch(`${url}/agents/honest/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY },
    body: JSON.stringify({ jsonrpc: '2.0', id: n, method: 'SendMessage', params: { message: { messageId: `workers-${n}`, role: 'ROLE_USER', parts: [{ text: 'x' }] } } }),
  });
  const body = (await res.json()) as { result?: { task?: { status?: { state?: string }; metadata?: Record<string, { outcome?: string }> } } };
  return { state: body.result?.task?.status?.state, outcome: body.result?.task?.metadata?.['urn:baton:outcome:v2']?.outcome };
}

it('two workers share one port and one store; a dead worker is replaced; SIGTERM drains both', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-workers-'));
  const agent = await spawnAgent({ behaviour: 'honest', name: 'honest', stepMs: 0 });
  const jwks = join(dir, 'honest.jwks.json');
  writeFileSync(jwks, JSON.stringify(agent.jwks));
  const config = join(dir, 'baton.json');
  writeFileSync(
    config,
    JSON.stringify({
      port: 0,
      dataDir: dir,
      logLevel: 'info',
      shutdown: { drainMs: 2_000 },
      trust: { pinnedJwks: { [agent.url]: jwks }, jkuAllowedOrigins: [] },
      delegatees: [{ id: 'honest', cardUrl: `${agent.url}/.well-known/agent-card.json`, acceptance: { minArtifacts: 1 }, allowHttp: true }],
      callers: [{ id: 'planner', apiKeySha256: createHash('sha256').update(API_KEY).digest('hex'), preset: 'standard' }],
      presets: [{ id: 'standard', maxInvocations: 5 }],
    }),
  );
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', '-c', config, 'serve', '--workers', '2'], { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const waitFor = (re: RegExp) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const m = re.exec(out);
        if (m) resolve(m);
      };
      proc.stdout!.on('data', check);
      proc.stderr!.on('data', check);
      check();
      void exited.then(() => reject(new Error(`baton exited early:\n${out.slice(-2000)}`)));
      // Bounded below the test's timeout, so `finally` still stops the group when a line never comes.
      setTimeout(() => reject(new Error(`no ${re} within 60 s:\n${out.slice(-2000)}`)), 60_000).unref();
    });
  try {
    const [, url, pidList] = await waitFor(/baton: listening on (http:\/\/127\.0\.0\.1:(?:\d+)) \(2 workers, pids ([\d ]+)\)/);
    const pids = pidList!.split(' ').map(Number);
    expect(pids).toHaveLength(2);
    const before = pids.map(cpuTicks);
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => send(url!, i)));
    expect(results).toEqual(Array.from({ length: 16 }, () => ({ state: 'TASK_STATE_COMPLETED', outcome: 'succeeded' })));
    // Connections are handed to the workers in turn, so both did delegated work (an idle worker gains ~0 ticks).
    const gained = pids.map((p, i) => cpuTicks(p) - before[i]!);
    for (const g of gained) expect(g).toBeGreaterThanOrEqual(3);

    process.kill(pids[0]!, 'SIGKILL');
    await waitFor(new RegExp(`worker ${pids[0]} exited \\(SIGKILL\\); starting a replacement`));
    // The surviving worker keeps the port answering meanwhile, and afterwards the pair serves again.
    expect(await send(url!, 100)).toEqual({ state: 'TASK_STATE_COMPLETED', outcome: 'succeeded' });

    const [, replacement] = await waitFor(new RegExp(`worker (\\d+) serving \\(replaced ${pids[0]}\\)`));
    // `kill -HUP $(pidof baton)` (README): only the primary is named baton; it passes the reload on to each worker.
    const named = async (name: string) => (await run('pidof', [name]).catch(() => ({ stdout: '' }))).stdout.trim().split(/\s+/).map(Number);
    expect(await named('baton')).toContain(proc.pid);
    const workers = await named('baton-worker');
    expect(workers).toEqual(expect.arrayContaining([pids[1], Number(replacement)]));
    expect(await named('baton')).not.toContain(pids[1]);
    process.kill(proc.pid!, 'SIGHUP');
    await waitFor(/configuration reloaded[\s\S]*configuration reloaded/);

    process.kill(proc.pid!, 'SIGTERM');
    expect(await exited, out.slice(-2000)).toBe(0);
    expect(await tryConnect(Number(new URL(url!).port))).toBe('refused');
  } finally {
    try {
      process.kill(-proc.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
    await agent.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
