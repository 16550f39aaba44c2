/**
 * Key guessing is throttled per source (issue #25 item 19): after
 * `authThrottle.maxFailures` failed credentials in a window, the caller API
 * (both bindings), the operator API and the console sign-in answer 429
 * `limit_exceeded` with `Retry-After` — even to the right key — until the
 * window ends; the throttle's memory is bounded.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Config } from '../../src/config.ts';
import { AuthThrottle, AuthThrottleConfig } from '../../src/http/auth-throttle.ts';
import { startGateway, type Gateway } from '../../src/main.ts';

const OPERATOR_KEY = 'throttle-operator-key-not-a-secret';
const CALLER_KEY = 'throttle-caller-key-not-a-secret';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function start(): Promise<Gateway> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-throttle-'));
  const gw = await startGateway(
    Config.parse({
      port: 0,
      dataDir: dir,
      logLevel: 'silent',
      operators: [{ id: 'ops', apiKeySha256: sha(OPERATOR_KEY) }],
      admin: { port: 0 },
      callers: [{ id: 'planner', apiKeySha256: sha(CALLER_KEY), preset: 'standard' }],
      authThrottle: { maxFailures: 3, windowMs: 60_000 },
    }),
  );
  cleanups.push(async () => {
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return gw;
}

const getTask = (gw: Gateway, key: string) => fetch(`${gw.url}/a2a/rest/tasks/att_none`, { headers: { 'a2a-version': '1.0', 'x-api-key': key } });
const rpcGetTask = (gw: Gateway, key: string) =>
  fetch(`${gw.url}/a2a/jsonrpc`, { method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': key }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'att_none' } }) });
const admin = (gw: Gateway, key: string) => fetch(`${gw.adminUrl}/admin/push/deliveries`, { headers: { 'x-api-key': key } });

describe('throttling failed credentials', () => {
  it('the caller API: three wrong keys, then 429 limit_exceeded with Retry-After on both bindings, even for the right key', async () => {
    const gw = await start();
    for (let i = 0; i < 3; i++) expect((await getTask(gw, `wrong-key-${i}-xxxxxxxx`)).status).toBe(401);
    const rest = await getTask(gw, CALLER_KEY);
    expect(rest.status).toBe(429);
    expect(Number(rest.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const body = (await rest.json()) as { error: { details: Array<{ domain?: string; metadata?: Record<string, string> }> } };
    expect(body.error.details.find((d) => d.domain === 'baton')?.metadata?.baton).toBe('limit_exceeded');
    const rpc = (await (await rpcGetTask(gw, CALLER_KEY)).json()) as { error: { code: number } };
    expect(rpc.error.code).toBe(-32055);
    // The operator listener keeps its own count.
    expect((await admin(gw, OPERATOR_KEY)).status).toBe(200);
  });

  it('the operator API and the console sign-in share one count', async () => {
    const gw = await start();
    for (let i = 0; i < 2; i++) expect((await admin(gw, 'not-an-operator-key')).status).toBe(401);
    const login = await fetch(`${gw.adminUrl}/console/login`);
    const pre = login.headers.getSetCookie().find((c) => c.startsWith('baton_console_pre='))!.split(';')[0]!.slice('baton_console_pre='.length);
    const signIn = (key: string) =>
      fetch(`${gw.adminUrl}/console/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: gw.adminUrl!, cookie: `baton_console_pre=${pre}` }, body: new URLSearchParams({ pre, key }).toString() });
    expect((await signIn('also-not-an-operator-key')).status).toBe(401);
    const refused = await signIn(OPERATOR_KEY);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    const api = await admin(gw, OPERATOR_KEY);
    expect(api.status).toBe(429);
    expect(((await api.json()) as { error: { code: string } }).error.code).toBe('limit_exceeded');
    // The public listener was not touched.
    expect((await getTask(gw, CALLER_KEY)).status).not.toBe(429);
  });

  it('a source may try again once its window ends, and memory is bounded by maxSources', () => {
    let now = 0;
    const throttle = new AuthThrottle(AuthThrottleConfig.parse({ maxFailures: 2, windowMs: 1_000, maxSources: 100 }), () => now);
    const from = (addr: string) => ({ socket: { remoteAddress: addr } }) as unknown as IncomingMessage;
    throttle.failed(from('10.0.0.1'));
    throttle.failed(from('10.0.0.1'));
    expect(throttle.refusal(from('10.0.0.1'))?.code).toBe('limit_exceeded');
    expect(throttle.refusal(from('10.0.0.2'))).toBeUndefined();
    now = 1_000;
    expect(throttle.refusal(from('10.0.0.1'))).toBeUndefined();
    for (let i = 0; i < 1_000; i++) throttle.failed(from(`10.1.${i >> 8}.${i & 255}`));
    expect(throttle.size).toBe(100);
  });
});
