/**
 * What an operator sees of MCP effects (issue #26: "the console, CLI,
 * metrics, traces and `baton audit verify` cover MCP effects"): a real
 * gateway on SQLite in front of the SDK notes server, three calls through a
 * stock MCP client — verified through a read route, observed without one,
 * and a lying server left unknown — plus one held at the gate; then the
 * audit, the metrics, the console and the operator CLI are read back.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditReport } from '../src/audit/verify.ts';
import { Config } from '../src/config.ts';
import { createLogger } from '../src/log.ts';
import { startGateway, type Gateway } from '../src/main.ts';
import { McpServerConfig } from '../src/mcp/config.ts';
import { baton } from '../test/cli/run.ts';
import { sample, scrape } from '../test/telemetry/prom-text.ts';
import { startNotesServer, type NotesServer } from './mcp/notes-server.ts';
import { notesServerConfig, readmeExample } from './mcp/readme-example.ts';

const OUTCOME = 'urn:baton:outcome:v2';
const APPROVAL = 'urn:baton:approval:v1';
const CALLER = 'mcp-ops-planner-key-not-a-secret';
const ALICE = 'mcp-ops-alice-key-not-a-secret';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

let notes: NotesServer;
let gw: Gateway;
let dir: string;
let env: Record<string, string>;
let client: Client;
/** The calls made in beforeAll: attempt id by what the call was. */
const ids = { verified: '', observed: '', lying: '', held: '' };

beforeAll(async () => {
  notes = await startNotesServer();
  dir = mkdtempSync(join(tmpdir(), 'baton-mcp-ops-'));
  const example = readmeExample();
  McpServerConfig.parse(example.mcpServers[0]);
  // A config file, so the CLI in a child process reads the very config the gateway runs with.
  const raw = {
    port: 0,
    dataDir: dir,
    logLevel: 'silent',
    admin: { port: 0 },
    metrics: { enabled: true },
    operators: [{ id: 'alice', apiKeySha256: sha(ALICE) }],
    approvals: { approvers: [{ operator: 'alice' }] },
    callers: [{ id: 'planner', apiKeySha256: sha(CALLER), preset: 'standard' }],
    mcpServers: [
      notesServerConfig(notes.url),
    ],
    presets: [{ id: 'standard', tools: ['notes/create_note', 'notes/lying_create', 'notes/echo', 'notes/delete_all'], maxToolCalls: 100 }],
  };
  const file = join(dir, 'baton.json');
  writeFileSync(file, JSON.stringify(raw));
  env = { BATON_CONFIG: file, BATON_LOG_LEVEL: 'silent' };
  gw = await startGateway(Config.parse(raw), { logger: createLogger({ level: 'silent' }) });

  client = new Client({ name: 'ops-test-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp/notes`), { requestInit: { headers: { 'x-api-key': CALLER } } }));
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = (await client.callTool({ name, arguments: args })) as { _meta: Record<string, { attemptId: string; outcome: string; verified: boolean }> };
    return r._meta[OUTCOME]!;
  };
  const verified = await call('create_note', { title: 'ops minutes' });
  const observed = await call('echo', { text: 'ops hello' });
  const lying = await call('lying_create', { title: 'ops phantom' });
  expect([verified, observed, lying].map((m) => [m.outcome, m.verified])).toEqual([['succeeded', true], ['succeeded', false], ['unknown', false]]);
  ids.verified = verified.attemptId;
  ids.observed = observed.attemptId;
  ids.lying = lying.attemptId;
  const gated = await client.callTool({ name: 'delete_all', arguments: {} }).then(() => undefined, (e: unknown) => e);
  expect(gated).toBeInstanceOf(McpError);
  ids.held = ((gated as McpError).data as { details: Record<string, { task: string }> }).details[APPROVAL]!.task;
}, 60_000);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await gw?.close();
  await notes?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

type Body = Record<string, unknown> & { receipt_ref: { object_id: string; revision_id: string }; input_ref: { object_id: string }; reservation_id: string; tool: { arguments_digest: string }; view_digest: string };
async function latest(id: string) {
  const revs = await gw.store.listRevisions(id);
  return revs[revs.length - 1]!.body as Body;
}

/** Every record and content row one MCP call wrote: attempt, input, decision, receipt; its arguments and result view. */
async function written(id: string) {
  const a = await latest(id);
  const input = (await gw.store.listRevisions(a.input_ref.object_id))[0]!.body as { message_digest: string };
  const decision = (await gw.store.ledger.reservation(a.reservation_id))!.decision_ref.object_id;
  return { records: [id, a.input_ref.object_id, decision, a.receipt_ref.object_id], content: [input.message_digest, a.view_digest] };
}

/** A copy of the gateway's SQLite file, taken while it runs, for the CLI to audit and a test to tamper with. */
function copyOfStore(name: string): string {
  const path = join(dir, `${name}.db`);
  const db = new Database(join(dir, 'baton.db'), { readonly: true });
  try {
    db.prepare('VACUUM INTO ?').run(path);
  } finally {
    db.close();
  }
  return path;
}

/** Changes one row of the copy, as anyone holding the file could: the immutability triggers are just more SQL. */
function tamper(path: string, sql: string, ...params: unknown[]) {
  const db = new Database(path);
  try {
    for (const t of ['records_immutable_u', 'records_immutable_d']) db.exec(`DROP TRIGGER IF EXISTS ${t}`);
    expect(db.prepare(sql).run(...params).changes).toBe(1);
  } finally {
    db.close();
  }
}
const count = (path: string, sql: string, ...params: unknown[]) => {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare(sql).get(...params) as { n: number }).n;
  } finally {
    db.close();
  }
};
/** The audit of a copy alone: BATON_CONFIG='' (no file), the copy named by BATON_SQLITE_PATH. */
const auditCopy = (path: string, ...args: string[]) => baton(['audit', 'verify', ...args], { BATON_CONFIG: '', BATON_SQLITE_PATH: path, BATON_LOG_LEVEL: 'silent' });

describe('baton audit verify covers MCP effects', () => {
  it('reports the store clean, every MCP attempt revision, input, decision and receipt and their content among what it checked', async () => {
    const copy = copyOfStore('clean');
    const mcp = await Promise.all([ids.verified, ids.observed, ids.lying].map(written));
    const records = mcp.flatMap((w) => w.records);
    const marks = records.map(() => '?').join(',');
    // Attempts: admitted and closed (2 revisions each); input, decision, receipt: one each.
    expect(count(copy, `SELECT count(*) AS n FROM records WHERE record_id IN (${marks})`, ...records)).toBe(3 * 5);
    expect(count(copy, `SELECT count(*) AS n FROM records WHERE schema_ref LIKE '%#verification_receipt' AND record_id IN (${marks})`, ...records)).toBe(3);
    const content = mcp.flatMap((w) => w.content);
    expect(count(copy, `SELECT count(*) AS n FROM content WHERE document IS NOT NULL AND digest IN (${content.map(() => '?').join(',')})`, ...content)).toBe(6);

    const r = await auditCopy(copy, '--json');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as AuditReport;
    expect(report).toMatchObject({ break_count: 0, breaks: [], content_purged: 0 });
    expect(report.records_checked).toBe(count(copy, 'SELECT count(*) AS n FROM records'));
    expect(report.content_checked).toBe(count(copy, 'SELECT count(*) AS n FROM content'));
    // The CLI against the running gateway's own config and store says the same.
    const live = await baton(['audit', 'verify'], env);
    expect(live.code, live.stderr).toBe(0);
    expect(live.stdout.trim().endsWith('audit: clean')).toBe(true);
  });

  it('names the MCP receipt whose read-back verdict was changed from disagreed to agreed', async () => {
    const copy = copyOfStore('receipt');
    const ref = (await latest(ids.lying)).receipt_ref;
    tamper(copy, `UPDATE records SET document = replace(document, '"readback":"disagreed"', '"readback":"agreed"') WHERE record_id = ? AND revision_id = ?`, ref.object_id, ref.revision_id);
    const r = await auditCopy(copy);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`BREAK record_digest_mismatch  record ${ref.object_id} revision ${ref.revision_id}`);
    expect(r.stdout.trim().endsWith('audit: 1 break')).toBe(true);
  });

  it('names the MCP call whose stored arguments were changed', async () => {
    const copy = copyOfStore('arguments');
    const [digest] = (await written(ids.verified)).content;
    tamper(copy, `UPDATE content SET document = replace(document, 'ops minutes', 'ops minutez') WHERE digest = ?`, digest);
    const report = JSON.parse((await auditCopy(copy, '--json')).stdout) as AuditReport;
    expect(report.break_count).toBe(1);
    expect(report.breaks[0]).toMatchObject({ kind: 'content_tampered', where: { record_id: digest } });
  });
});

describe('metrics count MCP calls under the server id', () => {
  it('admissions by operation, outcomes, the read-back disagreement and the gate refusal on the mcp binding', async () => {
    const lines = await scrape(`${gw.adminUrl}/metrics`);
    expect(sample(lines, 'baton_admissions_total', { delegatee: 'notes', operation: 'mcp.tools/call' })).toBe(3);
    expect(sample(lines, 'baton_outcomes_total', { delegatee: 'notes', outcome: 'succeeded' })).toBe(2);
    expect(sample(lines, 'baton_outcomes_total', { delegatee: 'notes', outcome: 'unknown' })).toBe(1);
    expect(sample(lines, 'baton_readback_disagreements_total', { delegatee: 'notes' })).toBe(1);
    // The gated call: refused with interaction_required on the MCP binding, named by its server.
    expect(sample(lines, 'baton_refusals_total', { code: 'interaction_required', delegatee: 'notes', binding: 'mcp' })).toBe(1);
    // Nothing of it fell into `other`.
    expect(lines.filter((l) => /delegatee="other"/.test(l))).toEqual([]);
    expect(sample(lines, 'baton_request_duration_seconds_count', { binding: 'mcp' })).toBeGreaterThanOrEqual(6);
  });
});

const row = (page: string, id: string) => {
  const m = new RegExp(`<tr data-attempt="${id}">([\\s\\S]*?)</tr>`).exec(page);
  return m ? text(m[1]!) : undefined;
};
const text = (markup: string) => markup.replace(/<[^>]+>/g, ' ').replace(/&quot;/g, '"').replace(/\s+/g, ' ').trim();

describe('the console shows MCP attempts', () => {
  let cookie: string;
  const get = async (path: string) => {
    const res = await fetch(`${gw.adminUrl}/console${path}`, { headers: { cookie }, redirect: 'manual' });
    expect(res.status, path).toBe(200);
    return res.text();
  };
  beforeAll(async () => {
    // Signs in as a browser would: the form (pre-session token), then the key.
    const login = await fetch(`${gw.adminUrl}/console/login`);
    const pre = /baton_console_pre=([^;]+)/.exec(login.headers.getSetCookie().join('\n'))![1]!;
    const res = await fetch(`${gw.adminUrl}/console/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: gw.adminUrl!, cookie: `baton_console_pre=${pre}` },
      body: new URLSearchParams({ pre, key: ALICE }).toString(),
    });
    expect(res.status).toBe(303);
    cookie = `baton_console=${/baton_console=([^;]+)/.exec(res.headers.getSetCookie().join('\n'))![1]!}`;
  });

  it('lists each MCP call with its tool and outcome, linked to its page', async () => {
    const page = await get('/attempts');
    expect(row(page, ids.verified)).toMatch(new RegExp(`^${ids.verified} closed succeeded notes tool notes/create_note planner .+ dlg_\\w+$`));
    expect(row(page, ids.observed)).toMatch(new RegExp(`^${ids.observed} closed succeeded notes tool notes/echo planner `));
    expect(row(page, ids.lying)).toMatch(new RegExp(`^${ids.lying} closed unknown notes tool notes/lying_create planner `));
    expect(page).toContain(`<a href="/console/attempts/${ids.lying}">`);
    expect(text(await get('/trees'))).toContain('notes/lying_create closed unknown');
  });

  it("shows one MCP attempt's page: tool, adapter, outcome, how it was verified and its receipt", async () => {
    const a = await latest(ids.lying);
    const page = text(await get(`/attempts/${ids.lying}`));
    expect(page).toContain(`Attempt ${ids.lying} : closed , outcome unknown`);
    expect(page).toContain('Verification read back on a separate route: disagreed');
    expect(page).toMatch(/Adapter mcp binding streamable_http version \S+/);
    expect(page).toContain(`Tool notes/lying_create arguments ${a.tool.arguments_digest}`);
    expect(page).toContain(`Receipt ${a.receipt_ref.object_id} profile mcp-read-route/1 outcome unknown`);
    expect(page).toMatch(/Reservation res_\w+ unknown/);
    expect(text(await get(`/attempts/${ids.observed}`))).toContain('Verification observed only, never verified (no read route)');
    expect(text(await get(`/attempts/${ids.verified}`))).toContain('Verification read back on a separate route: agreed');
  });

  it('shows the held MCP call with its exact preview', async () => {
    const page = text(await get(`/approvals/${ids.held}`));
    expect(page).toContain('Operation mcp.tools/call');
    expect(page).toContain('tool "delete_all" arguments {}');
  });
});

describe('the operator CLI lists MCP attempts and approvals', () => {
  it('trees: a TOOL column for MCP calls', async () => {
    const r = await baton(['trees'], env);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n').map((l) => l.trim());
    expect(lines.find((l) => l.startsWith('ATTEMPT'))).toMatch(/^ATTEMPT\s+DELEGATION\s+DELEGATEE\s+TOOL\s+CALLER\s+STATE\s+OUTCOME$/);
    expect(lines.find((l) => l.startsWith(ids.verified))).toMatch(/^\S+\s+dlg_\w+\s+notes\s+notes\/create_note\s+planner\s+closed\s+succeeded$/);
    expect(lines.find((l) => l.startsWith(ids.lying))).toMatch(/^\S+\s+dlg_\w+\s+notes\s+notes\/lying_create\s+planner\s+closed\s+unknown$/);
  });

  it('attempt audit: the adapter, the tool and arguments digest, observed, and the MCP receipt', async () => {
    const a = await latest(ids.observed);
    const r = await baton(['attempt', 'audit', ids.observed], env);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.slice(1, 4)).toEqual([`  remote mcp streamable_http ${notes.url}`, `  tool notes/echo  arguments ${a.tool.arguments_digest}`, '  verification observed']);
    expect(lines).toContain(`  record_id ${a.receipt_ref.object_id}  revision_id ${a.receipt_ref.revision_id}  outcome succeeded  profile mcp-observed/1  readback not_applicable`);
  });

  it('approvals list and show: the held MCP call with its operation and rendering', async () => {
    const list = await baton(['approvals', 'list'], env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.split('\n').find((l) => l.startsWith(ids.held))).toMatch(/^\S+\s+pending\s+T3\s+planner\s+notes\s+\S+\s+\S+\s+tool "delete_all"$/);
    const shown = await baton(['approvals', 'show', ids.held], env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('operation       mcp.tools/call');
    expect(shown.stdout).toContain('message:\n  tool "delete_all"\n  arguments {}');
  });
});
