import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Config, loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { startGateway, type Gateway } from '../../src/main.ts';

let dir: string;
let gw: Gateway;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'baton-gw-'));
  gw = await startGateway(Config.parse({ port: 0, dataDir: dir, logLevel: 'silent' }));
});
afterAll(async () => {
  await gw.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('gateway process', () => {
  it('answers /healthz and /readyz on loopback', async () => {
    expect(gw.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await (await fetch(`${gw.url}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${gw.url}/readyz`);
    expect(ready.status).toBe(200);
  });

  it('answers unknown routes with the error vocabulary', async () => {
    const res = await fetch(`${gw.url}/nope`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_request');
  });
});

describe('configuration', () => {
  it('defaults to the embedded loopback setup', () => {
    const c = loadConfig({ env: {} });
    expect(c).toMatchObject({ host: '127.0.0.1', port: 8080, store: { kind: 'sqlite' }, dataDir: './data' });
  });

  it('lets the environment override, and names every invalid field', () => {
    expect(loadConfig({ env: { BATON_PORT: '9001', BATON_PG_URL: 'postgres://127.0.0.1/test' } })).toMatchObject({
      port: 9001,
      store: { kind: 'postgres', url: 'postgres://127.0.0.1/test' },
    });
    expect(() => loadConfig({ env: { BATON_PORT: '99999', BATON_LOG_LEVEL: 'loud' } })).toThrow(/port[\s\S]*logLevel/);
  });

  it('takes a PostgreSQL store with prepared statements turned off, and nothing but a boolean for it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-cfg-'));
    try {
      const file = join(dir, 'baton.json');
      writeFileSync(file, JSON.stringify({ store: { kind: 'postgres', url: 'postgres://127.0.0.1/test', preparedStatements: false } }));
      expect(loadConfig({ file, env: {} }).store).toStrictEqual({ kind: 'postgres', url: 'postgres://127.0.0.1/test', preparedStatements: false });
      writeFileSync(file, JSON.stringify({ store: { kind: 'postgres', url: 'postgres://127.0.0.1/test', preparedStatements: 'no' } }));
      expect(() => loadConfig({ file, env: {} })).toThrow(/store\.preparedStatements/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('logging', () => {
  it('redacts secrets wherever they appear in a log object', () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _e, cb) => (lines.push(String(chunk)), cb()) });
    const log = createLogger({ level: 'info', destination: sink });
    log.info({ headers: { authorization: 'Bearer abc.def.ghi' }, token: 'tok-123', key: { d: 'private-d', x: 'pub' } }, 'req');
    log.info({ delivery: { headers: { 'x-a2a-notification-token': 'push-tok-456' } }, config: { sealed_credentials: 'v1.sealed-789' } }, 'push');
    const out = lines.join('');
    expect(out).not.toContain('push-tok-456');
    expect(out).not.toContain('sealed-789');
    expect(out).not.toContain('abc.def.ghi');
    expect(out).not.toContain('tok-123');
    expect(out).not.toContain('private-d');
    expect(out).toContain('pub');
  });
});

describe('gateway process without its store', () => {
  it('reports not ready once the store is gone', async () => {
    // Its own gateway: closing the store must not leak into any other test.
    const own = mkdtempSync(join(tmpdir(), 'baton-gw-nostore-'));
    const lone = await startGateway(Config.parse({ port: 0, dataDir: own, logLevel: 'silent' }));
    try {
      expect((await fetch(`${lone.url}/readyz`)).status).toBe(200);
      await lone.store.close();
      const ready = await fetch(`${lone.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({ status: 'not_ready', code: 'storage_error' });
    } finally {
      await lone.close();
      rmSync(own, { recursive: true, force: true });
    }
  });
});
