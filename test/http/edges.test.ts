/**
 * The listeners' edges on a real gateway: slow clients are cut by the
 * server's time limits, oversize bodies are 413 (not 429, which invites a
 * retry of the same bytes), malformed bodies are invalid_request.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Config } from '../../src/config.ts';
import { startGateway, type Gateway } from '../../src/main.ts';

const OPERATOR_KEY = 'edges-operator-key-not-a-secret';
const CALLER_KEY = 'edges-caller-key-not-a-secret';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
let dir: string;
let gw: Gateway;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'baton-edges-'));
  gw = await startGateway(
    Config.parse({
      port: 0,
      dataDir: dir,
      logLevel: 'silent',
      operators: [{ id: 'ops', apiKeySha256: sha(OPERATOR_KEY) }],
      admin: { port: 0 },
      callers: [{ id: 'planner', apiKeySha256: sha(CALLER_KEY), preset: 'standard' }],
      server: { headersTimeoutMs: 400, requestTimeoutMs: 400, keepAliveTimeoutMs: 400 },
    }),
  );
});
afterAll(async () => {
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Opens a raw socket, sends `head`, then drips one body byte every 50 ms; resolves with what the server said before it closed. */
function slowClient(url: string, head: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const s = connect(Number(port), hostname);
    let got = '';
    const drip = setInterval(() => s.write('x'), 50);
    s.on('data', (d) => (got += d.toString()));
    s.on('error', () => {});
    s.on('close', () => {
      clearInterval(drip);
      resolve(got);
    });
    s.write(head);
  });
}

describe('listener time limits', () => {
  it('a client that drips its body is answered 408 and disconnected at the request timeout', async () => {
    const said = await slowClient(gw.url, `POST /a2a/rest/message:send HTTP/1.1\r\nHost: x\r\nX-API-Key: ${CALLER_KEY}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`);
    expect(said).toMatch(/^HTTP\/1\.1 408/);
  });

  it('a client that drips its headers is disconnected at the headers timeout', async () => {
    const said = await slowClient(gw.url, 'GET /healthz HTTP/1.1\r\nX-Slow: ');
    expect(said).toMatch(/^(HTTP\/1\.1 408[\s\S]*)?$/);
  });

  it('the operator API has the same limits', async () => {
    const said = await slowClient(gw.adminUrl!, `POST /admin/audit/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${OPERATOR_KEY}\r\nContent-Length: 100000\r\n\r\n`);
    expect(said).toMatch(/^HTTP\/1\.1 408/);
  });
});

describe('bodies', () => {
  it('an oversize body on /push/inbound is 413 limit_exceeded', async () => {
    const res = await fetch(`${gw.url}/push/inbound/att_x`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `"${'x'.repeat(300 * 1024)}"` });
    expect(res.status).toBe(413);
  });

  it('an oversize body on the operator API is 413 limit_exceeded', async () => {
    const res = await fetch(`${gw.adminUrl}/admin/delegations/dlg_x/revoke`, { method: 'POST', headers: { 'x-api-key': OPERATOR_KEY }, body: JSON.stringify({ reason: 'x'.repeat(100 * 1024) }) });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('limit_exceeded');
  });

  it('a JSON string as an HTTP+JSON body is invalid_request (400), not a 500 storage_error', async () => {
    // The tenant-prefixed routes write `body.tenant`, which throws on a string.
    for (const path of ['/a2a/rest/message:send', '/a2a/rest/t1/message:send', '/a2a/rest/t1/tasks/att_x/pushNotificationConfigs']) {
      const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': CALLER_KEY }, body: '"just a string"' });
      expect([path, res.status]).toEqual([path, 400]);
    }
  });

  it('a JSON string as an operator body is invalid_request', async () => {
    const res = await fetch(`${gw.adminUrl}/admin/delegations/dlg_x/revoke`, { method: 'POST', headers: { 'x-api-key': OPERATOR_KEY }, body: '"revoke it"' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_request');
  });

  it('GET /admin/push/deliveries lists without ?status=, and refuses an unknown status', async () => {
    const all = await fetch(`${gw.adminUrl}/admin/push/deliveries`, { headers: { 'x-api-key': OPERATOR_KEY } });
    expect(all.status).toBe(200);
    expect(await all.json()).toEqual([]);
    const bad = await fetch(`${gw.adminUrl}/admin/push/deliveries?status=lost`, { headers: { 'x-api-key': OPERATOR_KEY } });
    expect(bad.status).toBe(400);
  });
});
