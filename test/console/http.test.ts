/**
 * The operator console over plain HTTP against a real gateway: sign-in,
 * cookie flags, CSRF and origin checks on every state change, typed
 * confirmation, sign-out, and the console never served on the public port.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Config } from '../../src/config.ts';
import { startGateway, type Gateway } from '../../src/main.ts';

const KEY = 'console-operator-key-not-a-secret';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
let dir: string;
let gw: Gateway;
let base: string;
let config: Config;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wt18c-console-http-'));
  config = Config.parse({ port: 0, dataDir: dir, logLevel: 'silent', operators: [{ id: 'ops', apiKeySha256: sha(KEY) }], admin: { port: 0 } });
  gw = await startGateway(config);
  base = `${gw.adminUrl}/console`;
});
afterAll(async () => {
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

const cookiesOf = (res: Response) => res.headers.getSetCookie();
const valueOf = (setCookies: string[], name: string) => setCookies.find((c) => c.startsWith(`${name}=`))?.split(';')[0]!.slice(name.length + 1);
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const post = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: gw.adminUrl!, ...headers }, body: form(fields) });

/** Signs in as a browser would: the form (pre-session token), then the key; returns the session cookie and the page's CSRF token. */
async function signIn(): Promise<{ cookie: string; csrf: string }> {
  const login = await fetch(`${base}/login`);
  const pre = valueOf(cookiesOf(login), 'baton_console_pre')!;
  const res = await post('/login', { pre, key: KEY }, { cookie: `baton_console_pre=${pre}` });
  expect(res.status).toBe(303);
  const session = valueOf(cookiesOf(res), 'baton_console')!;
  const page = await (await fetch(`${base}/attempts`, { headers: { cookie: `baton_console=${session}` } })).text();
  return { cookie: `baton_console=${session}`, csrf: /name="csrf" value="([^"]+)"/.exec(page)![1]! };
}

describe('console sign-in', () => {
  it('is served on the operator listener only, never on the public one', async () => {
    expect((await fetch(`${gw.url}/console/login`)).status).toBe(404);
    expect((await fetch(`${base}/login`)).status).toBe(200);
  });

  it('sends a visitor without a session to the sign-in page; live streams and actions answer 401', async () => {
    const res = await fetch(`${base}/attempts`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/console/login');
    expect((await fetch(`${base}/events`)).status).toBe(401);
    expect((await post('/breakers/trip', { kind: 'space', id: config.spaceId, trigger: 'operator', reason: 'x', csrf: 'x' })).status).toBe(401);
  });

  it('exchanges the key for an HttpOnly, SameSite=Strict session cookie; the key is in no URL and no page', async () => {
    const login = await fetch(`${base}/login`);
    expect(login.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(login.headers.get('x-frame-options')).toBe('DENY');
    const loginHtml = await login.text();
    expect(loginHtml).toMatch(/<form method="post" action="\/console\/login"/);
    expect(loginHtml).not.toMatch(/(src|href)=["']?(https?:)?\/\//); // nothing fetched from elsewhere
    const pre = valueOf(cookiesOf(login), 'baton_console_pre')!;
    const res = await post('/login', { pre, key: KEY }, { cookie: `baton_console_pre=${pre}` });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/console/attempts');
    const set = cookiesOf(res).find((c) => c.startsWith('baton_console='))!;
    expect(set).toMatch(/; HttpOnly/);
    expect(set).toMatch(/; SameSite=Strict/);
    expect(set).toMatch(/; Path=\/console/);
    expect(set).toMatch(/; Max-Age=\d+/);
    expect(set).not.toContain(KEY);
    const page = await (await fetch(`${base}/attempts`, { headers: { cookie: set.split(';')[0]! } })).text();
    expect(page).toContain('Signed in as <strong>ops</strong>');
    expect(page).not.toContain(KEY);
    expect(page).not.toMatch(/localStorage|sessionStorage/);
  });

  it('refuses a wrong key (401, no session) and a sign-in without the pre-session token (403: login CSRF)', async () => {
    const login = await fetch(`${base}/login`);
    const pre = valueOf(cookiesOf(login), 'baton_console_pre')!;
    const wrong = await post('/login', { pre, key: 'not-the-key' }, { cookie: `baton_console_pre=${pre}` });
    expect(wrong.status).toBe(401);
    expect(valueOf(cookiesOf(wrong), 'baton_console')).toBeUndefined();
    const forged = await post('/login', { pre: 'guessed', key: KEY }, { cookie: `baton_console_pre=${pre}` });
    expect(forged.status).toBe(403);
    expect(valueOf(cookiesOf(forged), 'baton_console')).toBeUndefined();
  });
});

describe('console actions', () => {
  it('refuses a state change without the CSRF token, with another session\'s token, or from another origin (deny, 403); nothing is appended', async () => {
    const a = await signIn();
    const b = await signIn();
    const scope = { space_id: config.spaceId, scope_kind: 'space' as const, scope_id: config.spaceId };
    const before = (await gw.store.control.head(scope))!.position;
    const trip = { kind: 'space', id: config.spaceId, trigger: 'operator', reason: 'csrf probe' };
    for (const [fields, headers] of [
      [trip, { cookie: a.cookie }],
      [{ ...trip, csrf: b.csrf }, { cookie: a.cookie }],
      [{ ...trip, csrf: a.csrf }, { cookie: a.cookie, origin: 'http://evil.example' }],
      [{ ...trip, csrf: a.csrf }, { cookie: a.cookie, origin: '', 'sec-fetch-site': 'cross-site' }],
    ] as const) {
      const res = await post('/breakers/trip', fields, headers);
      expect(res.status).toBe(403);
      expect(await res.text()).toContain('deny: refused');
    }
    expect((await gw.store.control.head(scope))!.position).toBe(before);
  });

  it('records the signed-in operator as the actor of an action (trip then reset a breaker)', async () => {
    const { cookie, csrf } = await signIn();
    const scope = { space_id: config.spaceId, scope_kind: 'space' as const, scope_id: config.spaceId };
    const res = await post('/breakers/trip', { kind: 'space', id: config.spaceId, trigger: 'operator', reason: 'console test', csrf }, { cookie });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/console/breakers?ok=tripped');
    const head = (await gw.store.control.head(scope))!;
    expect(head.state).toBe('tripped');
    const [event] = await gw.store.control.readStream({ project_id: head.project_id, branch_id: head.branch_id }, { after: head.position - 1, limit: 1 });
    expect(event!.actor_ref.object_id).toBe('actor_operator_ops');
    const page = await (await fetch(`${base}/breakers`, { headers: { cookie } })).text();
    expect(page).toContain(`space:${config.spaceId}`);
    expect((await post('/breakers/reset', { kind: 'space', id: config.spaceId, reason: 'done', csrf }, { cookie })).status).toBe(303);
    expect((await gw.store.control.head(scope))!.state).not.toBe('tripped');
  });

  it('refuses a revoke whose typed confirmation does not match the delegation id (invalid_request, 400)', async () => {
    const { cookie, csrf } = await signIn();
    const res = await post('/delegations/dlg_a/revoke', { reason: 'x', confirm: 'dlg_b', csrf }, { cookie });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('invalid_request: the confirmation does not match');
    const unknown = await post('/delegations/dlg_a/revoke', { reason: 'x', confirm: 'dlg_a', csrf }, { cookie });
    expect(await unknown.text()).toContain('invalid_request: no such delegation');
  });

  it('signs out: the cookie is cleared and the old session is dead', async () => {
    const { cookie, csrf } = await signIn();
    const res = await post('/logout', { csrf }, { cookie });
    expect(res.status).toBe(303);
    expect(cookiesOf(res).find((c) => c.startsWith('baton_console='))).toMatch(/^baton_console=; .*Max-Age=0/);
    expect((await fetch(`${base}/attempts`, { headers: { cookie }, redirect: 'manual' })).status).toBe(303);
  });

  it('charts count front-door refusals by their ADR-0014 code', async () => {
    const { cookie } = await signIn();
    const res = await fetch(`${gw.url}/agents/nobody/a2a/jsonrpc`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'wrong' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: {} }) });
    await res.text();
    const charts = await (await fetch(`${base}/charts`, { headers: { cookie } })).text();
    expect(res.status).toBe(404); // no such delegatee here
    expect(charts).toMatch(/<th scope="col">refused: invalid_request<\/th>/);
  });

  it('serves its bundled assets and renders every view', async () => {
    const { cookie } = await signIn();
    const htmx = await fetch(`${base}/assets/htmx.min.js`);
    expect(htmx.status).toBe(200);
    expect(htmx.headers.get('content-type')).toMatch(/javascript/);
    expect((await fetch(`${base}/assets/sse.min.js`)).status).toBe(200);
    for (const view of ['attempts', 'trees', 'approvals', 'approvals?state=pending', 'escalations', 'breakers', 'push', 'push?status=dead', 'audit?run=1', 'charts']) {
      const res = await fetch(`${base}/${view}`, { headers: { cookie } });
      expect(res.status, view).toBe(200);
      expect(await res.text(), view).toContain('Signed in as');
    }
    expect(await (await fetch(`${base}/audit?run=1`, { headers: { cookie } })).text()).toContain('No breaks');
    expect(await (await fetch(`${base}/approvals`, { headers: { cookie } })).text()).toContain('No human gates are configured');
  });
});
