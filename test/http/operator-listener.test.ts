/**
 * The operator listener's browser-facing edges (issue #25 item 19): it
 * answers only the host names it knows (a DNS-rebinding page names its own,
 * and could otherwise read /metrics), and /admin/docs — where operators type
 * their key — cannot be framed by another site.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Config } from '../../src/config.ts';
import { startGateway, type Gateway } from '../../src/main.ts';

const OPERATOR_KEY = 'listener-operator-key-not-a-secret';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
let dir: string;
let gw: Gateway;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'baton-operator-listener-'));
  gw = await startGateway(
    Config.parse({ port: 0, dataDir: dir, logLevel: 'silent', operators: [{ id: 'ops', apiKeySha256: sha(OPERATOR_KEY) }], admin: { port: 0, allowedHosts: ['ops.internal'] }, metrics: { enabled: true } }),
  );
});
afterAll(async () => {
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** GET with an explicit Host header (fetch does not let a caller choose it). */
function get(path: string, host: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const { port } = new URL(gw.adminUrl!);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: Number(port), path, headers: { host, ...headers } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the operator listener', () => {
  it('refuses a request naming a host it does not serve (DNS rebinding), on every route', async () => {
    for (const path of ['/metrics', '/readyz', '/admin/docs', '/console/login']) {
      const res = await get(path, 'rebind.attacker.example:8081', { 'x-api-key': OPERATOR_KEY });
      expect([path, res.status]).toEqual([path, 403]);
      expect((JSON.parse(res.body) as { error: { code: string } }).error.code).toBe('deny');
    }
  });

  it('answers loopback names, its own address, admin.allowedHosts and IP literals (a scraper by address)', async () => {
    const { port } = new URL(gw.adminUrl!);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'LOCALHOST', `[::1]:${port}`, 'ops.internal:443', '10.1.2.3:8081', '[fd00::5]']) expect([host, (await get('/metrics', host)).status]).toEqual([host, 200]);
  });

  it('/admin/docs cannot be framed by another site', async () => {
    const res = await get('/admin/docs', new URL(gw.adminUrl!).host);
    expect(res.status).toBe(200);
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(String(res.headers['content-security-policy'])).toContain("frame-ancestors 'none'");
  });
});
