/**
 * The operator console in a real headless Chromium against a real gateway and
 * real agents: sign in with the keyboard, watch an attempt appear live (SSE)
 * and revoke its delegation, acknowledge an escalation, requeue a dead letter,
 * and a cross-site form post refused by the CSRF check.
 * BATON_CONSOLE_SCREENSHOTS=1 also writes the views to docs/console/
 * (scripts/console-screenshots.mjs).
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumMissing, launch } from './console/browser.ts';
import { pollUntil } from './harness/process.ts';
import { API_KEY, startWorld, type World } from './gateway/world.ts';

const OPS_KEY = 'e2e-console-operator-key-not-a-secret';
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const missing = chromiumMissing();
if (missing) console.warn(missing);
const SHOTS = process.env.BATON_CONSOLE_SCREENSHOTS ? new URL('../docs/console/', import.meta.url).pathname : undefined;

let world: World;
let browser: Browser;
let page: Page;
let console_: string;
/** The integrator's webhook: refuses until told otherwise (dead letters), then accepts. */
const hook = { fail: true, accepted: 0, server: undefined as Server | undefined, url: '' };
/** A page on another origin that posts a form to the console. */
let evil: Server;
let evilUrl = '';
/** An attempt whose page an earlier test opened (the accessibility check reads it too). */
const shown = { attempt: '' };

async function shot(name: string): Promise<void> {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: `${SHOTS}${name}.png`, fullPage: false });
}

const listen = async (server: Server) => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

describe.skipIf(missing !== undefined)('operator console in Chromium', () => {
  beforeAll(async () => {
    hook.server = createServer((req, res) => {
      req.resume().on('end', () => {
        if (!hook.fail) hook.accepted++;
        res.writeHead(hook.fail ? 500 : 204).end();
      });
    });
    hook.url = `${await listen(hook.server)}/hook`;
    world = await startWorld({
      agents: { steady: { behaviour: 'honest', stepMs: 20 }, gated: { behaviour: 'honest', stepMs: 20 } },
      presets: [{ id: 'standard', maxInvocations: 50 }],
      delegatees: { gated: { requireApproval: true } },
      config: {
        operators: [{ id: 'ops', apiKeySha256: sha256(OPS_KEY) }],
        admin: { port: 0 },
        revocationSweepMs: 100,
        approvals: { approvers: [{ operator: 'ops' }] },
        push: { allowHttp: true, allowAddresses: ['127.0.0.0/8'], intervalMs: 50, maxAttempts: 1, backoffBaseMs: 50, backoffMaxMs: 100 },
      },
    });
    console_ = `${world.adminUrl}/console`;
    evil = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><form method="post" action="${console_}/breakers/trip">
<input name="kind" value="space"><input name="id" value="default"><input name="trigger" value="operator"><input name="reason" value="forged">
</form><script>document.forms[0].submit()</script>`);
    });
    evilUrl = await listen(evil);
    browser = await launch();
    page = await (await browser.newContext({ viewport: { width: 1366, height: 768 } })).newPage();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await world?.close();
    await new Promise<void>((r) => (evil ? evil.close(() => r()) : r()));
    await new Promise<void>((r) => (hook.server ? hook.server.close(() => r()) : r()));
  });

  let rpcId = 0;
  const send = async (text: string, push = false, agent = 'steady') => {
    const res = await world.fetch(`${world.url}/agents/${agent}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': API_KEY, 'a2a-version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: ++rpcId,
        method: 'SendMessage',
        params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] }, configuration: { returnImmediately: true, ...(push ? { taskPushNotificationConfig: { url: hook.url, token: 'console-hook-token' } } : {}) } },
      }),
    });
    return ((await res.json()) as { result: { task: { id: string } } }).result.task.id;
  };
  const taskState = async (id: string) => {
    const res = await world.fetch(`${world.url}/agents/gated/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': API_KEY, 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method: 'GetTask', params: { id } }),
    });
    return ((await res.json()) as { result: { status: { state: string } } }).result.status.state;
  };
  const admin = async <T>(path: string) => (await (await fetch(`${world.adminUrl}${path}`, { headers: { 'x-api-key': OPS_KEY } })).json()) as T;

  it('signs in with the keyboard; the session cookie is invisible to script and no credential is kept in storage', async () => {
    await page.goto(`${console_}/`);
    await expect.poll(() => page.url()).toBe(`${console_}/login`);
    // The key field has focus on load (autofocus, applied once the page settles): type and press Enter, no mouse.
    await expect.poll(() => page.evaluate('document.activeElement && document.activeElement.id')).toBe('key');
    await page.keyboard.type(OPS_KEY);
    await shot('sign-in');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Live attempts' }).waitFor();
    expect(await page.getByText('Signed in as').textContent()).toContain('ops');
    expect(page.url()).not.toContain(OPS_KEY);
    // Script sees no cookie; storage holds nothing but htmx's note of the current path (no key, no token).
    const seen = (await page.evaluate('({ cookie: document.cookie, local: { ...localStorage }, session: { ...sessionStorage } })')) as { cookie: string; local: object; session: Record<string, string> };
    expect(seen.cookie).toBe('');
    expect(seen.local).toEqual({});
    // htmx notes the current path once it has settled (whenever that is): that key, and nothing else, may be there.
    expect(Object.keys(seen.session).filter((k) => k !== 'htmx-current-path-for-history')).toEqual([]);
    expect(JSON.stringify(seen)).not.toContain(OPS_KEY);
  });

  it('shows a new attempt live (no reload), and revoking its delegation with the typed confirmation cancels it', async () => {
    await page.goto(`${console_}/attempts`);
    await page.evaluate('window.stayed = true'); // lost if the page reloads
    const task = await send('slow work for the console');
    const row = page.locator(`tr[data-attempt="${task}"]`);
    await row.waitFor();
    expect(await page.evaluate('window.stayed')).toBe(true); // the SSE swap, not a reload
    expect(await row.textContent()).toContain('steady');
    await shot('attempts');
    // The row links its attempt's page and its delegation's: the delegation's has the controls.
    const link = row.locator('a[href^="/console/delegations/"]');
    const delegation = (await link.textContent())!.trim();
    await link.click();
    await page.getByRole('heading', { name: 'Revoke' }).waitFor();
    await shot('delegation');
    await page.getByLabel('Reason').first().fill('console test: stop it');
    await page.getByLabel('Type the delegation id to confirm').first().fill(delegation);
    await page.getByRole('button', { name: 'Revoke delegation' }).click();
    await page.getByText('Delegation revoked.').waitFor();
    await page.goto(`${console_}/attempts`);
    await expect.poll(async () => page.locator(`tr[data-attempt="${task}"]`).textContent(), { timeout: 20_000 }).toMatch(/closed\s+cancelled\s+revocation/);
    const audit = await admin<{ attempt: { body: { cancel_cause?: { cause: string } } } }>(`/admin/attempts/${task}`);
    expect(audit.attempt.body.cancel_cause?.cause).toBe('revocation');
    // The attempt's own page, linked from its row: what it called and how it ended.
    await page.locator(`tr[data-attempt="${task}"] a[href="/console/attempts/${task}"]`).click();
    await expect.poll(async () => page.locator('main').textContent()).toMatch(/outcome\s*cancelled\s*revocation[\s\S]*Adapter\s*a2a\s*binding\s*JSONRPC/);
    shown.attempt = task;
    await page.goto(`${console_}/trees`);
    await page.locator(`a[href="/console/delegations/${delegation}"]`).first().waitFor();
    await shot('trees');
  });

  it('trips a breaker and acknowledges its escalation; the operator is the recorded actor', async () => {
    await page.goto(`${console_}/breakers`);
    await page.getByLabel('Scope kind').first().selectOption('space');
    await page.getByLabel('Scope id').first().fill('default');
    await page.getByLabel('Reason').first().fill('console drill');
    await page.getByRole('button', { name: 'Trip' }).click();
    await page.getByText('Breaker tripped.').waitFor();
    await shot('breakers');
    await page.locator('tbody input[name="reason"]').first().fill('drill over');
    await page.locator('tbody').getByRole('button', { name: 'Reset' }).first().click();
    await page.getByText('Breaker reset.').waitFor();

    await page.goto(`${console_}/escalations`);
    const open = page.locator('tr[data-escalation]', { hasText: 'space:default' }).filter({ has: page.getByRole('button', { name: 'Acknowledge' }) });
    const id = await open.first().getAttribute('data-escalation');
    await open.first().getByLabel('Note').fill('seen in the console');
    await shot('escalations');
    await open.first().getByRole('button', { name: 'Acknowledge' }).click();
    await page.getByText('Escalation acknowledged.').waitFor();
    expect(await page.locator(`tr[data-escalation="${id}"]`).textContent()).toContain('acknowledged by actor_operator_ops: seen in the console');
    const listed = await admin<Array<{ record_id: string; body: { state: string; acknowledged_by: { object_id: string } } }>>('/admin/escalations?state=acknowledged');
    expect(listed.find((e) => e.record_id === id)?.body.acknowledged_by.object_id).toBe('actor_operator_ops');
  });

  it('requeues a dead letter, which is then delivered', async () => {
    const task = await send('notify me', true);
    const dead = await pollUntil(
      () => admin<Array<{ delivery_id: string; task_id: string }>>('/admin/push/deliveries?status=dead'),
      (l) => l.some((d) => d.task_id === task),
      { polls: 200, intervalMs: 100, what: 'a dead letter' },
    );
    const id = dead.find((d) => d.task_id === task)!.delivery_id;
    hook.fail = false;
    await page.goto(`${console_}/push?status=dead`);
    const row = page.locator(`tr[data-delivery="${id}"]`);
    expect(await row.textContent()).toContain('dead letter');
    await shot('push');
    await row.getByRole('button', { name: 'Requeue' }).click();
    await page.getByText('Delivery requeued.').waitFor();
    await pollUntil(
      () => admin<Array<{ delivery_id: string }>>('/admin/push/deliveries?status=delivered'),
      (l) => l.some((d) => d.delivery_id === id),
      { polls: 200, intervalMs: 100, what: 'the requeued delivery delivered' },
    );
    expect(hook.accepted).toBeGreaterThan(0);
  });

  it('refuses a form posted from another origin (CSRF): the session cookie rides along, the token does not', async () => {
    const before = (await admin<unknown[]>('/admin/escalations')).length;
    const refused = page.waitForResponse((r) => r.url() === `${console_}/breakers/trip`);
    await page.goto(evilUrl);
    const res = await refused;
    expect(res.status()).toBe(403); // not 401: the SameSite=Strict cookie is sent same-site (another port), the CSRF check stops it
    await page.getByText('deny: refused').waitFor();
    expect((await admin<unknown[]>('/admin/escalations')).length).toBe(before); // no trip, so no escalation
  });

  it('approves a pending task on its exact effect preview, and the task completes', async () => {
    const task = await send('please publish the quarterly note', false, 'gated');
    expect(await taskState(task)).toBe('TASK_STATE_AUTH_REQUIRED');
    await page.goto(`${console_}/approvals?state=pending`);
    const row = page.locator(`tr[data-approval="${task}"]`);
    expect(await row.textContent()).toContain('gated');
    await row.getByRole('link').click();
    await page.getByRole('heading', { name: 'Effect preview' }).waitFor();
    // The approver sees the exact message, the delegatee's card digest and the preview digest the form binds.
    expect(await page.getByLabel('The message as it will be forwarded').textContent()).toContain('[0] text: "please publish the quarterly note"');
    expect(await page.locator('main').textContent()).toMatch(/card\s+card_\S+\s+digest\s+sha256:/);
    await shot('approval');
    await page.getByLabel('Note').fill('checked the text');
    await page.getByRole('button', { name: 'Approve and forward' }).click();
    await page.getByText('Approved: the exact previewed message was admitted and forwarded.').waitFor();
    expect(await page.locator('.flash').last().textContent()).toMatch(/approval approve by ops/);
    await pollUntil(() => taskState(task), (s) => s === 'TASK_STATE_COMPLETED', { polls: 200, intervalMs: 100, what: 'the approved task completed' });
    await page.goto(`${console_}/attempts`);
    await expect.poll(async () => page.locator(`tr[data-attempt="${task}"]`).textContent(), { timeout: 20_000 }).toMatch(/closed\s+succeeded/);
  });

  it('denies a pending task: it ends rejected and nothing is forwarded', async () => {
    const forwarded = async () => (await world.agents.gated!.log()).counts.SendMessage ?? 0;
    const before = await forwarded();
    const task = await send('delete everything', false, 'gated');
    await page.goto(`${console_}/approvals/${task}`);
    await page.getByLabel('Reason').fill('not today');
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.getByText('Denied: the task ends rejected; nothing was forwarded.').waitFor();
    expect(await taskState(task)).toBe('TASK_STATE_REJECTED');
    expect(await forwarded()).toBe(before);
  });

  it('pages the Delegations view and filters it by delegatee, state and time (issue 25 item 20)', async () => {
    for (let i = 0; i < 3; i++) await send(`one root each ${i}`);
    const roots = () => page.locator('section.tree h2 code').allTextContents();
    await page.goto(`${console_}/trees?limit=1`);
    const first = await roots();
    expect(first).toHaveLength(1);
    await page.getByRole('link', { name: 'Next page' }).click();
    await page.waitForURL(/cursor=\d+/);
    const second = await roots();
    expect(second).toHaveLength(1);
    expect(second[0]).not.toBe(first[0]);
    expect(page.url()).toContain('limit=1'); // the filter travels with the cursor

    await page.goto(`${console_}/trees`);
    await page.getByLabel('Delegatee', { exact: true }).fill('nobody');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No delegations match this filter on this page.').waitFor();
    expect(page.url()).toContain('delegatee=nobody');
    await page.getByLabel('Delegatee', { exact: true }).fill('steady');
    await page.getByLabel('State or outcome').selectOption('cancelled');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/state=cancelled/);
    // Only the attempt revoked earlier in this suite was cancelled: one root, its attempts all steady.
    expect(await roots()).toHaveLength(1);
    expect(await page.locator('.node .badge', { hasText: /steady closed cancelled/ }).count()).toBeGreaterThanOrEqual(1);
    await page.goto(`${console_}/trees?since=${new Date(Date.now() + 3600_000).toISOString()}`);
    await page.getByText('No delegations match this filter on this page.').waitFor();
    await page.goto(`${console_}/trees?since=yesterday`);
    await page.getByText(/invalid_request: since: /).waitFor();
  });

  it('every view passes axe-core WCAG 2 A/AA checks (labels, contrast, names, landmarks)', async () => {
    const axe = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    const views = ['attempts', `attempts/${shown.attempt}`, 'trees', 'approvals', 'escalations', 'breakers', 'push', 'audit?run=1', 'charts'];
    const found: string[] = [];
    for (const view of views) {
      await page.goto(`${console_}/${view}`);
      // Injected through the debugging protocol: the console's CSP (rightly) allows no inline script.
      await page.evaluate(axe);
      const violations = (await page.evaluate("axe.run(document, { runOnly: ['wcag2a', 'wcag2aa'] }).then((r) => r.violations.map((v) => v.id + ': ' + v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')))")) as string[];
      found.push(...violations.map((v) => `${view} ${v}`));
    }
    expect(found).toEqual([]);
  });

  it('charts and audit render (screenshots)', async () => {
    await page.goto(`${console_}/charts`);
    await page.getByText('SendMessage admissions and refusals by code').waitFor();
    expect(await page.locator('figure.chart svg[role="img"]').count()).toBe(4);
    await shot('charts');
    await page.goto(`${console_}/audit?run=1`);
    await page.getByText('No breaks').waitFor();
    await shot('audit');
  });
});
