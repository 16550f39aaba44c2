/**
 * Reloading without a restart, against the real `baton serve` process and
 * real delegatee agents (issue #17): SIGHUP with a good configuration (a new
 * delegatee serves at once) and with a bad one (refused, the old one stays,
 * logged with path and hint); `baton reload` through the operator API,
 * reporting changes that need a restart; `baton cards refresh` picking up a
 * rotated card before its max-age; a delegatee whose pinned keys do not
 * verify its card named on /readyz and refused as `unavailable`, not blamed
 * on the caller.
 */
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCard, cardJson } from './agents/card.ts';
import { signAgentCard, type SignedCard } from './agents/signed-card.ts';
import { spawnAgent, stopAll, type SpawnedAgent } from './harness/process.ts';
import { serveBaton, type ServedBaton } from './harness/serve.ts';
import { signCard } from '../src/cards/signer.ts';
import type { JsonValue } from '../src/records/strict-json.ts';
import { baton as cli } from '../test/cli/run.ts';

type Json = { [key: string]: JsonValue };
const run = promisify(execFile);
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const API_KEY = 'reload-e2e-caller-key-not-a-secret';
const OPERATOR_KEY = 'reload-e2e-operator-key-not-a-secret';

let dir: string;
let alpha: SpawnedAgent;
let beta: SpawnedAgent;
let gw: ServedBaton;
let configFile: string;
/** Card servers for the `rotating` and `mispinned` delegatees (their A2A endpoint is alpha's). */
let cardServer: Server;
let cardOrigin: string;
let rotating: SignedCard;
let servedCard = '';
let wrongServer: Server;
let wrongOrigin: string;
let wrongCard = '';
let wrongJwks: unknown;

const jwksFile = (name: string, jwks: unknown) => {
  const f = join(dir, `${name}.jwks.json`);
  writeFileSync(f, JSON.stringify(jwks));
  return f;
};

/** The base configuration (v1): alpha, the rotating card and the mis-pinned one; beta is added by a reload. */
function config(extra: { beta?: boolean; pinned?: Record<string, string>; more?: Record<string, unknown> } = {}) {
  const delegatee = (id: string, cardUrl: string, endpointOrigins: string[] = []) => ({ id, cardUrl, allowHttp: true, endpointOrigins, acceptance: { minArtifacts: 1 } });
  return {
    port: 0,
    dataDir: dir,
    logLevel: 'info',
    admin: { port: 0 },
    operators: [{ id: 'ops', apiKeySha256: sha256(OPERATOR_KEY) }],
    push: { enabled: false },
    trust: {
      pinnedJwks: {
        [alpha.url]: join(dir, 'alpha.jwks.json'),
        [cardOrigin]: join(dir, 'rotating.jwks.json'),
        [wrongOrigin]: join(dir, 'rotating.jwks.json'), // not the key that signs the card served there
        ...(extra.beta ? { [beta.url]: join(dir, 'beta.jwks.json') } : {}),
        ...extra.pinned,
      },
      jkuAllowedOrigins: [],
    },
    delegatees: [
      delegatee('alpha', `${alpha.url}/.well-known/agent-card.json`),
      delegatee('rotating', `${cardOrigin}/card.json`, [alpha.url]),
      delegatee('mispinned', `${wrongOrigin}/card.json`, [alpha.url]),
      ...(extra.beta ? [delegatee('beta', `${beta.url}/.well-known/agent-card.json`)] : []),
      { ...delegatee('vault', `${cardOrigin}/vault.json`, [alpha.url]), requireApproval: true as const },
    ],
    callers: [
      { id: 'planner', apiKeySha256: sha256(API_KEY), preset: 'standard' },
      { id: 'bot', apiKeySha256: sha256('reload-e2e-bot-key-not-a-secret'), preset: 'guarded' },
    ],
    presets: [{ id: 'standard', maxInvocations: 50 }, { id: 'guarded', maxInvocations: 50 }],
    approvals: { approvers: [{ operator: 'ops' }], rules: [{ preset: 'guarded', tier: 'T3_consequential_propose' }] },
    ...extra.more,
  };
}
const write = (c: unknown) => writeFileSync(configFile, JSON.stringify(c));

async function send(id: string, text: string): Promise<{ status: number; body: { result?: { task?: { status?: { state?: string } } }; error?: { code: number; message: string; data?: Array<Record<string, unknown>> } } }> {
  const res = await fetch(`${gw.url}/agents/${id}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: `m-${text}`, role: 'ROLE_USER', parts: [{ text }] } } }),
  });
  return { status: res.status, body: (await res.json()) as never };
}
const stateOf = (r: Awaited<ReturnType<typeof send>>) => r.body.result?.task?.status?.state;
const operatorEnv = () => ({ BATON_OPERATOR_KEY: OPERATOR_KEY, BATON_CONFIG: '' });

/** Re-signs the rotating card with its own key, with `description` changed (a rotation that keeps identity). */
async function rotate(description: string): Promise<void> {
  const { signatures: _s, ...unsigned } = rotating.card;
  servedCard = JSON.stringify(await signCard({ ...unsigned, description } as Json, [rotating.signingKey]));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wt17b-reload-'));
  configFile = join(dir, 'baton.json');
  [alpha, beta] = await Promise.all([spawnAgent({ behaviour: 'honest', name: 'alpha' }), spawnAgent({ behaviour: 'honest', name: 'beta' })]);
  jwksFile('alpha', alpha.jwks);
  jwksFile('beta', beta.jwks);
  // Served with a long max-age: without a refresh Baton would keep the first copy for an hour.
  cardServer = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600' }).end(servedCard));
  wrongServer = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(wrongCard));
  await Promise.all([new Promise<void>((r) => cardServer.listen(0, '127.0.0.1', r)), new Promise<void>((r) => wrongServer.listen(0, '127.0.0.1', r))]);
  cardOrigin = `http://127.0.0.1:${(cardServer.address() as AddressInfo).port}`;
  wrongOrigin = `http://127.0.0.1:${(wrongServer.address() as AddressInfo).port}`;
  rotating = await signAgentCard(cardJson(buildCard({ name: 'rotating', baseUrl: alpha.url })) as Json, 'rotating', cardOrigin);
  jwksFile('rotating', rotating.jwks);
  await rotate('first edition');
  // Signed by a key of its own, while the operator pinned the rotating card's key for its origin.
  const mispinned = await signAgentCard(cardJson(buildCard({ name: 'mispinned', baseUrl: alpha.url })) as Json, 'mispinned', wrongOrigin);
  wrongCard = JSON.stringify(mispinned.card);
  wrongJwks = mispinned.jwks;
  write(config());
  gw = await serveBaton(configFile, { BATON_CONFIG: '' });
}, 90_000);

afterAll(async () => {
  await gw?.stop();
  await stopAll();
  cardServer?.closeAllConnections();
  wrongServer?.closeAllConnections();
  await Promise.all([new Promise((r) => cardServer?.close(r)), new Promise((r) => wrongServer?.close(r))]);
  rmSync(dir, { recursive: true, force: true });
});

describe('SIGHUP', () => {
  it('with a good configuration: a new delegatee serves without a restart', async () => {
    expect(stateOf(await send('alpha', 'before'))).toBe('TASK_STATE_COMPLETED');
    expect((await send('beta', 'not yet')).status).toBe(404); // no such route before the reload
    write(config({ beta: true }));
    const from = gw.logs.length;
    gw.signal('SIGHUP');
    const line = await gw.waitForLog('configuration reloaded', from);
    expect(line.changed).toEqual(['delegatees: +beta', 'trust']);
    expect(stateOf(await send('beta', 'after'))).toBe('TASK_STATE_COMPLETED');
    const counts = (await beta.log()).counts;
    expect((counts.SendMessage ?? 0) + (counts.SendStreamingMessage ?? 0)).toBeGreaterThanOrEqual(1);
  });

  it('with a bad configuration: refused with path and hint, the old one stays', async () => {
    const bad = config({ beta: true, pinned: { 'http://127.0.0.1:1': join(dir, 'missing.jwks.json') } });
    bad.delegatees.push({ ...bad.delegatees[0]! }); // duplicate id "alpha" (index 4 once beta is dropped)
    bad.delegatees = bad.delegatees.filter((d) => d.id !== 'beta'); // would remove beta, if it were applied
    write(bad);
    const from = gw.logs.length;
    gw.signal('SIGHUP');
    await gw.waitForLog('reload refused: the running configuration stays', from);
    const errors = gw.logs.slice(from).filter((l) => String(l.msg).startsWith('reload refused: '));
    expect(errors.map((l) => l.path)).toEqual(expect.arrayContaining(['delegatees[4].id', 'trust.pinnedJwks["http://127.0.0.1:1"]']));
    expect(errors.every((l) => !('stack' in l) && !JSON.stringify(l).includes('    at '))).toBe(true);
    expect(errors.find((l) => l.path === 'delegatees[4].id')?.hint).toMatch(/unique/);
    // beta (which the refused file drops) still serves: nothing of the bad configuration was applied.
    expect(stateOf(await send('beta', 'still here'))).toBe('TASK_STATE_COMPLETED');
  });
});

describe('kill -HUP $(pidof baton), as the README writes it (issue 25 item 11)', () => {
  it('pidof baton finds the serve process (it is named baton, not node), and its SIGHUP reloads', async () => {
    const { stdout } = await run('pidof', ['baton']);
    expect(stdout.trim().split(/\s+/).map(Number)).toContain(gw.pid);
    write(config({ beta: true }));
    const from = gw.logs.length;
    // Only this test's gateway is signalled: other gateways may be running on the machine.
    await run('kill', ['-HUP', String(gw.pid)]);
    await gw.waitForLog(/^configuration reloaded/, from);
  });

  it('the CLI points at README sections that exist', async () => {
    const r = await cli(['reload'], { BATON_OPERATOR_KEY: '', BATON_CONFIG: configFile });
    const section = /see README "([^"]+)"/.exec(r.stderr)?.[1];
    expect(section, r.stderr).toBeDefined();
    expect(readFileSync(new URL('../README.md', import.meta.url), 'utf8')).toMatch(new RegExp(`^#+ ${section}$`, 'm'));
  });
});

describe('baton reload (CLI → operator API)', () => {
  it('applies live changes and names those that need a restart', async () => {
    write(config({ beta: false, more: { revocationSweepMs: 900, follow: { tickMs: 300 } } }));
    const r = await cli(['reload', '--admin', gw.adminUrl!, '--json'], operatorEnv());
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { applied: boolean; changed: string[]; restartRequired: string[] };
    expect(report).toMatchObject({ applied: true, changed: ['delegatees: -beta', 'trust'], restartRequired: ['follow', 'revocationSweepMs'] });
    expect((await send('beta', 'gone')).status).toBe(404);
    expect(stateOf(await send('alpha', 'still'))).toBe('TASK_STATE_COMPLETED');
  });

  it('a refused configuration: exit 1, every problem with its path and hint', async () => {
    write({ ...config(), callers: [{ id: 'planner', apiKeySha256: sha256(API_KEY), preset: 'nope' }] });
    const r = await cli(['reload', '--admin', gw.adminUrl!], operatorEnv());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('reload refused');
    expect(r.stderr).toContain('callers[0].preset: preset "nope" is not defined');
    expect(r.stderr).toContain('hint: define it under presets');
    expect(stateOf(await send('alpha', 'unchanged'))).toBe('TASK_STATE_COMPLETED');
    write(config());
  });

  it('refuses to side-step a human gate: an ungated alias for a gated card, a caller moved off a gated preset', async () => {
    const alias = config();
    alias.delegatees.push({ id: 'vault-free', cardUrl: `${cardOrigin}/vault.json`, allowHttp: true, endpointOrigins: [alpha.url], acceptance: { minArtifacts: 1 } });
    write(alias);
    const r = await cli(['reload', '--admin', gw.adminUrl!], operatorEnv());
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stderr).toContain(`delegatees[${alias.delegatees.length - 1}].cardUrl: "vault-free" would reach the card of gated delegatee "vault" without its human gate`);
    expect((await send('vault-free', 'no gate')).status).toBe(404); // nothing of it was applied

    const moved = config();
    moved.callers[1]!.preset = 'standard';
    write(moved);
    const m = await cli(['reload', '--admin', gw.adminUrl!], operatorEnv());
    expect(m.code, m.stdout + m.stderr).toBe(1);
    expect(m.stderr).toContain('callers[1].preset: moving caller "bot" from preset "guarded" to "standard" would lift the human gate on "alpha"');
    write(config());
  });

  it('the operator API refuses a reload without an operator key', async () => {
    const res = await fetch(`${gw.adminUrl}/admin/reload`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('authentication_required');
  });
});

describe('baton cards refresh', () => {
  const proxyDescription = async () => ((await (await fetch(`${gw.url}/agents/rotating/.well-known/agent-card.json`)).json()) as { description: string }).description;

  it('picks up a rotated card now instead of after its max-age', async () => {
    expect(stateOf(await send('rotating', 'first'))).toBe('TASK_STATE_COMPLETED');
    expect(await proxyDescription()).toMatch(/^first edition/);
    await rotate('second edition');
    expect(await proxyDescription()).toMatch(/^first edition/); // max-age=3600: still the cached copy
    const r = await cli(['cards', 'refresh', 'rotating', '--admin', gw.adminUrl!, '--json'], operatorEnv());
    expect(r.code).toBe(0);
    const [result] = JSON.parse(r.stdout) as Array<{ delegatee: string; ok: boolean; payload_digest: string }>;
    expect(result).toMatchObject({ delegatee: 'rotating', ok: true });
    expect(await proxyDescription()).toMatch(/^second edition/);
    expect(stateOf(await send('rotating', 'second'))).toBe('TASK_STATE_COMPLETED');
  });

  it('an unknown delegatee is the caller’s mistake (invalid_request)', async () => {
    const r = await cli(['cards', 'refresh', 'nobody', '--admin', gw.adminUrl!], operatorEnv());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('invalid_request: no such delegatee');
  });
});

describe('a delegatee whose pinned keys do not verify its card', () => {
  it('is unavailable to the caller (not INVALID_PARAMS), named on /readyz and in the log', async () => {
    const from = gw.logs.length;
    const r = await send('mispinned', 'never');
    expect(r.body.error?.code).toBe(-32050);
    expect(r.body.error?.data?.[0]).toMatchObject({ reason: 'UNAVAILABLE', metadata: { baton: 'unavailable', delegatee: 'mispinned' } });
    const ready = (await (await fetch(`${gw.url}/readyz`)).json()) as { status: string; degraded: Array<{ delegatee: string }> };
    expect(ready.status).toBe('degraded');
    expect(ready.degraded.map((d) => d.delegatee)).toEqual(['mispinned']);
    const line = await gw.waitForLog('delegatee card does not verify: /readyz reports it degraded', from);
    expect(line.delegatee).toBe('mispinned');
    // The operator fixes the pin and reloads: the next call verifies, /readyz is ready again.
    write(config({ pinned: { [wrongOrigin]: jwksFile('mispinned', wrongJwks) } }));
    expect((await cli(['reload', '--admin', gw.adminUrl!], operatorEnv())).code).toBe(0);
    expect(stateOf(await send('mispinned', 'now'))).toBe('TASK_STATE_COMPLETED');
    expect(((await (await fetch(`${gw.url}/readyz`)).json()) as { status: string }).status).toBe('ready');
  });
});
