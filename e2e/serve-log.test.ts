/**
 * What `baton serve` writes, read as a log pipeline reads it (issue #25
 * item 9): every stdout line is one strict JSON object (no duplicate key —
 * the access log once carried `request_id` twice) or one of the `baton: …`
 * banners; a refused streaming request, which the A2A SDK reports with
 * `console.error` and a stack trace, is one structured line, and nothing
 * multi-line reaches stdout or stderr.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseStrictJson } from '../src/records/strict-json.ts';
import { serveBaton, type ServedBaton } from './harness/serve.ts';

const API_KEY = 'serve-log-caller-key-not-a-secret';
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
let dir: string;
let gw: ServedBaton;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'baton-serve-log-'));
  const configFile = join(dir, 'baton.json');
  writeFileSync(configFile, JSON.stringify({ port: 0, dataDir: dir, logLevel: 'info', push: { enabled: false }, callers: [{ id: 'planner', apiKeySha256: sha256(API_KEY), preset: 'standard' }] }));
  gw = await serveBaton(configFile, { BATON_CONFIG: '' });
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const stream = (id: string, headers: Record<string, string>) =>
  fetch(`${gw.url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', accept: 'text/event-stream', 'x-request-id': id, ...headers },
    // Baton's own door needs the delegatee named in metadata: without it the stream is refused before its first event.
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'SendStreamingMessage', params: { message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } } }),
  });

it('every stdout line is strict JSON with one request_id, and a refused stream is one structured line', async () => {
  const refused = await stream('req-stream-refused', { 'x-api-key': API_KEY });
  expect(((await refused.json()) as { error?: { code?: number } }).error?.code).toBe(-32004); // UnsupportedOperationError
  await (await stream('req-stream-401', { 'x-api-key': 'not-the-key-at-all' })).text();
  await (await fetch(`${gw.url}/healthz`, { headers: { 'x-request-id': 'req-health' } })).text();
  for (const id of ['req-stream-refused', 'req-stream-401', 'req-health']) await waitForRequest(id);
  const sdk = await gw.waitForLog(/^Pre-stream error/);
  expect(sdk).toMatchObject({ level: 40, source: 'console', err_name: expect.any(String) });
  expect(JSON.stringify(sdk)).not.toMatch(/\bat .*\.(ts|js):\d+/); // no stack frames
  for (const line of gw.stdout) {
    if (line.startsWith('baton: ')) continue; // the documented banners (README "Running it")
    // The strict parser refuses duplicate keys: a line with `request_id` twice fails here.
    expect(() => parseStrictJson(line, { maxBytes: 1 << 20 }), line.slice(0, 200)).not.toThrow();
  }
  expect(gw.stderr()).not.toMatch(/\n\s+at /);
}, 30_000);

/** The access-log line of one request (written after its response). */
async function waitForRequest(id: string): Promise<void> {
  for (;;) {
    if (gw.logs.some((l) => l.msg === 'request' && l.request_id === id)) return;
    await gw.waitForLog('request', gw.logs.length);
  }
}
