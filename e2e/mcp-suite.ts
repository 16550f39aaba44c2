/**
 * MCP tools behind Baton (issue #26): a stock MCP client (the official SDK)
 * lists and calls tools of a real SDK MCP server through a real gateway on
 * loopback, on each store (e2e/mcp.test.ts SQLite, e2e/mcp.pg.test.ts
 * PostgreSQL). Each test asserts the record, reservation and call count of
 * its own call (attempt id from the result's outcome metadata).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Config } from '../src/config.ts';
import { startGateway, type Gateway } from '../src/main.ts';
import { McpServerConfig } from '../src/mcp/config.ts';
import { GatewayPresetConfig } from '../src/contracts/machine-preset.ts';
import { startNotesServer, type NotesServer } from './mcp/notes-server.ts';
// The README's example: its tool policies are the ones under test.
import { notesServerConfig, readmeExample } from './mcp/readme-example.ts';

const OUTCOME = 'urn:baton:outcome:v2';
const CONTRACT = 'urn:rw-agent-delegation:0.1.1:delegation-contract';
const KEYS = { planner: 'mcp-planner-key-not-a-secret', reader: 'mcp-reader-key-not-a-secret', tiny: 'mcp-tiny-key-not-a-secret' };
const ALICE = 'mcp-operator-alice-key-not-a-secret';
const APPROVAL = 'urn:baton:approval:v1';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

type Meta = { attemptId: string; outcome: string | null; verified: boolean };
type Result = { content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown>; isError?: boolean; _meta?: Record<string, unknown> };

export interface McpSetup {
  /** The config's `store` block (undefined: the embedded SQLite file under dataDir). */
  store?: Record<string, unknown>;
  /** Rows in the store's `records` table, counted apart from the gateway. */
  records(dataDir: string): Promise<number>;
}

export function mcpSuite(name: string, setup: () => Promise<McpSetup>): void {
describe(`${name}: MCP tools behind Baton`, () => {
  let notes: NotesServer;
  let gw: Gateway;
  let dir: string;
  let s: McpSetup;
  const clients: Client[] = [];

  beforeAll(async () => {
    notes = await startNotesServer();
    s = await setup();
    dir = mkdtempSync(join(tmpdir(), 'baton-mcp-'));
    const example = readmeExample();
    // The README's example parses as the gateway parses config (issue #26 "a config that its test parses").
    McpServerConfig.parse(example.mcpServers[0]);
    const config = Config.parse({
      port: 0,
      dataDir: dir,
      logLevel: 'silent',
      revocationSweepMs: 50,
      admin: { port: 0 },
      operators: [{ id: 'alice', apiKeySha256: sha(ALICE) }],
      approvals: { approvers: [{ operator: 'alice' }] },
      callers: [
        { id: 'planner', apiKeySha256: sha(KEYS.planner), preset: 'standard' },
        { id: 'reader', apiKeySha256: sha(KEYS.reader), preset: 'narrow' },
        { id: 'tiny', apiKeySha256: sha(KEYS.tiny), preset: 'tiny' },
      ],
      mcpServers: [
        notesServerConfig(notes.url, [{ name: 'refuses', requireApproval: false }, { name: 'hangup', requireApproval: false, readRoute: { tool: 'get_note', arguments: { id: '$.arguments.x' } } }, { name: 'slow', requireApproval: false }, { name: 'get_note', cost: { dimension: 'credits', amount: 3 } }]),
        // The same server, for its MCP Tasks tool: one waits for the task, one hands it to the durable follower at once.
        ...(['jobs', 'later'] as const).map((id) => ({ ...(example.mcpServers[0] as Record<string, unknown>), id, url: notes.url, allowHttp: true, auth: undefined, callTimeoutMs: id === 'jobs' ? 20_000 : 100, tools: [{ name: 'long_job' }] })),
      ],
      follow: { tickMs: 50, pollMinMs: 20, pollMaxMs: 100 },
      presets: [
        { ...GatewayPresetConfig.parse(example.presets[0]), tools: ['notes/create_note', 'notes/lying_create', 'notes/echo', 'notes/delete_all', 'notes/refuses', 'notes/hangup', 'notes/slow', 'notes/get_note', 'jobs/long_job', 'later/long_job'], budgets: [{ name: 'credits', unit: 'credit', ceiling: 5 }] },
        { id: 'narrow', tools: ['notes/echo', 'notes/get_note'] },
        { id: 'tiny', tools: ['notes/echo'], maxPerMinute: 1 },
      ],
      ...(s.store ? { store: s.store } : {}),
    });
    gw = await startGateway(config);
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await gw?.close();
    await notes?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function client(key: string, server = 'notes'): Promise<Client> {
    const c = new Client({ name: 'test-client', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp/${server}`), { requestInit: { headers: { 'x-api-key': key } } }));
    clients.push(c);
    return c;
  }
  const call = async (c: Client, name: string, args: Record<string, unknown>) => (await c.callTool({ name, arguments: args })) as Result;
  const metaOf = (r: Result) => r._meta![OUTCOME] as Meta;
  async function attempt(id: string) {
    const revs = await gw.store.listRevisions(id);
    return revs[revs.length - 1]!.body as { state: string; outcome?: string; verification?: string; reservation_id: string; receipt_ref?: { object_id: string }; remote: Record<string, unknown>; tool?: Record<string, unknown>; approval?: Record<string, unknown> };
  }
  async function receipt(id: string) {
    const ref = (await attempt(id)).receipt_ref!;
    const revs = await gw.store.listRevisions(ref.object_id);
    return revs[0]!.body as { profile: string; readback: string; outcome: string; reasons: string[] };
  }
  const reservation = async (id: string) => (await gw.store.ledger.reservation((await attempt(id)).reservation_id))!.status;
  const records = () => s.records(dir);
  async function refusal(p: Promise<unknown>): Promise<{ code: number; data: { code: string; details: Record<string, unknown> } }> {
    const err = await p.then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    return err as never;
  }

  it('lists only the tools the caller\'s preset scope names; no credential, no session', async () => {
    const planner = (await (await client(KEYS.planner)).listTools()).tools.map((t) => t.name).sort();
    expect(planner).toEqual(['create_note', 'delete_all', 'echo', 'get_note', 'hangup', 'lying_create', 'refuses', 'slow']);
    expect((await (await client(KEYS.reader)).listTools()).tools.map((t) => t.name).sort()).toEqual(['echo', 'get_note']);
    const anonymous = new Client({ name: 'anonymous', version: '1.0.0' });
    await expect(anonymous.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp/notes`)))).rejects.toMatchObject({ code: 401, message: expect.stringContaining('authentication_required') });
  });

  it('admits a call, forwards the contract chain in _meta and projects succeeded only after the read route agrees', async () => {
    const before = notes.calls.get('get_note') ?? 0;
    const r = await call(await client(KEYS.planner), 'create_note', { title: 'minutes of Tuesday' });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ title: 'minutes of Tuesday' });
    const meta = metaOf(r);
    expect(meta).toMatchObject({ outcome: 'succeeded', verified: true });
    expect(notes.calls.get('get_note')).toBe(before + 1);
    const sent = notes.metas.get('create_note')!.at(-1) as Record<string, { chain: Array<{ record_id: string; body: { scope: { tools: string[] } } }> }>;
    const a = await attempt(meta.attemptId);
    // The whole chain, root and the child for exactly this tool, as an A2A message carries it.
    expect(sent[CONTRACT]!.chain.map((c) => c.record_id)).toEqual([(a as unknown as { root_ref: { object_id: string } }).root_ref.object_id, (a as unknown as { delegation_ref: { object_id: string } }).delegation_ref.object_id]);
    expect(sent[CONTRACT]!.chain[1]!.body.scope.tools).toEqual(['mcp:notes/create_note']);
    expect(a).toMatchObject({ state: 'closed', outcome: 'succeeded', remote: { protocol: 'mcp', binding: 'streamable_http', endpoint: notes.url }, tool: { server: 'notes', name: 'create_note' } });
    expect(a.verification).toBeUndefined();
    expect(await receipt(meta.attemptId)).toMatchObject({ profile: 'mcp-read-route/1', readback: 'agreed', outcome: 'succeeded' });
    expect(await reservation(meta.attemptId)).toBe('settled');
  });

  it('records a tool without a read route as observed, never verified', async () => {
    const r = await call(await client(KEYS.planner), 'echo', { text: 'hello' });
    expect(r.content[0]).toMatchObject({ type: 'text', text: 'hello' });
    const meta = metaOf(r);
    expect(meta).toMatchObject({ outcome: 'succeeded', verified: false });
    expect(await attempt(meta.attemptId)).toMatchObject({ verification: 'observed' });
    expect(await receipt(meta.attemptId)).toMatchObject({ profile: 'mcp-observed/1', readback: 'not_applicable' });
    expect(await reservation(meta.attemptId)).toBe('settled');
  });

  it('never projects succeeded for a server whose read route disagrees: unknown, held', async () => {
    const r = await call(await client(KEYS.planner), 'lying_create', { title: 'phantom' });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toBeUndefined();
    const meta = metaOf(r);
    expect(meta).toMatchObject({ outcome: 'unknown', verified: false });
    expect(await receipt(meta.attemptId)).toMatchObject({ profile: 'mcp-read-route/1', readback: 'disagreed', outcome: 'unknown' });
    // Held for reconciliation: the ledger's `unknown`, never released (ADR-0014).
    expect(await reservation(meta.attemptId)).toBe('unknown');
  });

  it('refuses arguments that do not match the input schema with nothing written and nothing sent', async () => {
    const c = await client(KEYS.planner);
    const [written, sent] = [await records(), notes.calls.get('create_note') ?? 0];
    const err = await refusal(call(c, 'create_note', { title: 5 }));
    expect(err.data).toMatchObject({ code: 'invalid_request', details: { tool: 'create_note', at: '/title' } });
    expect(await records()).toBe(written);
    expect(notes.calls.get('create_note') ?? 0).toBe(sent);
  });

  it('refuses a call outside the caller\'s scope (deny) before anything is written or sent', async () => {
    const written = await records();
    expect((await refusal(call(await client(KEYS.reader), 'create_note', { title: 'x' }))).data.code).toBe('deny');
    expect(notes.calls.get('create_note') ?? 0).toBe(1);
    expect(await records()).toBe(written);
  });

  it('holds a destructive tool at the gate with its exact preview; runs it once, after a named human approves that exact call', async () => {
    const c = await client(KEYS.planner);
    const gated = await refusal(call(c, 'delete_all', {}));
    expect(gated.data.code).toBe('interaction_required');
    const held = gated.data.details[APPROVAL] as { task: string; tier: string; preview_digest: string };
    expect(held.tier).toBe('T3_consequential_propose');
    expect(notes.calls.get('delete_all')).toBeUndefined();
    // Before a decision, naming the request gets the gate's rule; another call naming it is no call of it.
    const early = await refusal(c.callTool({ name: 'delete_all', arguments: {}, _meta: { [APPROVAL]: { task: held.task } } }));
    expect(early.data).toMatchObject({ code: 'interaction_required', details: { rule: 'awaiting_approval' } });
    expect((await refusal(c.callTool({ name: 'echo', arguments: { text: 'x' }, _meta: { [APPROVAL]: { task: held.task } } }))).data.code).toBe('deny');
    // The operator sees the exact preview and approves it; the approval action admits and runs the call.
    const shown = await fetch(`${gw.adminUrl}/admin/approvals/${held.task}`, { headers: { 'x-api-key': ALICE } }).then((r) => r.json() as Promise<{ preview: { rendering: string; operation: string } }>);
    expect(shown.preview).toMatchObject({ operation: 'mcp.tools/call', rendering: 'tool "delete_all"\narguments {}' });
    const approved = await fetch(`${gw.adminUrl}/admin/approvals/${held.task}/approve`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': ALICE }, body: JSON.stringify({ previewDigest: held.preview_digest, note: 'checked' }) }).then((r) => r.json() as Promise<{ admission: { attempt_id: string } }>);
    expect(approved.admission.attempt_id).toBe(held.task);
    // The client collects the outcome by naming the request (bounded polling while the call runs).
    let r: Result | undefined;
    for (let i = 0; i < 200 && !r; i++) {
      r = (await c.callTool({ name: 'delete_all', arguments: {}, _meta: { [APPROVAL]: { task: held.task } } }).catch((e: unknown) => {
        if (e instanceof McpError && (e.data as { details?: { retry?: boolean } }).details?.retry) return undefined;
        throw e;
      })) as Result | undefined;
      if (!r) await new Promise((res) => setTimeout(res, 25));
    }
    expect(r!.content[0]).toMatchObject({ type: 'text', text: 'deleted' });
    expect(metaOf(r!)).toMatchObject({ attemptId: held.task, outcome: 'succeeded', verified: false });
    expect(notes.calls.get('delete_all')).toBe(1);
    const a = await attempt(held.task);
    expect(a).toMatchObject({ state: 'closed', approval: { tier: 'T3_consequential_propose' } });
    // Asking again returns the recorded outcome; the call is not run a second time.
    expect(metaOf((await c.callTool({ name: 'delete_all', arguments: {}, _meta: { [APPROVAL]: { task: held.task } } })) as Result)).toMatchObject({ attemptId: held.task, outcome: 'succeeded' });
    expect(notes.calls.get('delete_all')).toBe(1);
  });

  it('refuses a call over the preset\'s durable limit before transmission (limit_exceeded)', async () => {
    const c = await client(KEYS.tiny);
    const sent = notes.calls.get('echo') ?? 0;
    expect(metaOf(await call(c, 'echo', { text: 'first' }))).toMatchObject({ outcome: 'succeeded' });
    const err = await refusal(call(c, 'echo', { text: 'second' }));
    expect(err.data.code).toBe('limit_exceeded');
    expect(notes.calls.get('echo')).toBe(sent + 1);
  });

  it('charges a tool\'s declared cost in its preset\'s dimension; a root without that dimension cannot call it', async () => {
    const r = await call(await client(KEYS.planner), 'get_note', { id: 'n-none' });
    const meta = metaOf(r);
    // The tool answered with an error: it ran, so it is charged (failed, consumed).
    expect(meta).toMatchObject({ outcome: 'failed' });
    expect((await gw.store.ledger.reservation((await attempt(meta.attemptId)).reservation_id))!.amounts).toEqual({ invocations: '1', tool_calls: '1', credits: '3' });
    const sent = notes.calls.get('get_note') ?? 0;
    expect((await refusal(call(await client(KEYS.reader), 'get_note', { id: 'n-none' }))).data).toMatchObject({ code: 'deny', details: { dimension: 'credits' } });
    expect(notes.calls.get('get_note') ?? 0).toBe(sent);
  });

  it('releases the reservation when the server refuses the request as invalid params (not executed)', async () => {
    const err = await refusal(call(await client(KEYS.planner), 'refuses', { x: 'y' }));
    expect(err.data).toMatchObject({ code: 'invalid_request', details: { tool: 'refuses', released: true } });
    const id = err.data.details.attempt_id as string;
    expect(await reservation(id)).toBe('released');
    expect(await attempt(id)).toMatchObject({ state: 'closed', outcome: 'failed' });
  });

  it('runs a tool the server offers as an MCP Task as one: the task id is recorded, the result judged', async () => {
    const c = await client(KEYS.planner, 'jobs');
    const started = notes.jobs.length;
    const running = call(c, 'long_job', { label: 'a' });
    for (let i = 0; i < 400 && notes.jobs.length === started; i++) await new Promise((r) => setTimeout(r, 10));
    expect(await notes.finishJobs()).toEqual([notes.jobs[started]]);
    const r = await running;
    expect(r.content[0]).toMatchObject({ type: 'text', text: 'job a done' });
    const meta = metaOf(r);
    expect(meta).toMatchObject({ outcome: 'succeeded', verified: false });
    expect(await attempt(meta.attemptId)).toMatchObject({ state: 'closed', remote: { task_id: notes.jobs[started] }, tool: { server: 'jobs', name: 'long_job' } });
  });

  it('a task that outlives the caller\'s wait is followed to its verdict by the durable follower', async () => {
    const r = await call(await client(KEYS.planner, 'later'), 'long_job', { label: 'b' });
    expect(r.isError).toBe(true);
    expect(r.content[0]!.text).toMatch(/still runs at the server as an MCP Task/);
    const meta = metaOf(r);
    expect(meta.outcome).toBeNull();
    expect(await attempt(meta.attemptId)).toMatchObject({ state: 'dispatching' });
    const job = notes.jobs.at(-1)!;
    expect(await notes.finishJobs()).toEqual([job]);
    let closed: Awaited<ReturnType<typeof attempt>> | undefined;
    for (let i = 0; i < 400 && closed?.state !== 'closed'; i++) {
      closed = await attempt(meta.attemptId);
      if (closed.state !== 'closed') await new Promise((res) => setTimeout(res, 25));
    }
    expect(closed).toMatchObject({ state: 'closed', outcome: 'succeeded', verification: 'observed', remote: { task_id: job } });
    expect(await reservation(meta.attemptId)).toBe('settled');
  });

  it('holds a call whose connection dropped after sending: unknown, never released', async () => {
    const r = await call(await client(KEYS.planner), 'hangup', { x: 'y' });
    expect(notes.calls.get('hangup')).toBe(1);
    expect(r.isError).toBe(true);
    const meta = metaOf(r);
    expect(meta).toMatchObject({ outcome: 'unknown', verified: false });
    expect(await attempt(meta.attemptId)).toMatchObject({ state: 'closed', outcome: 'unknown' });
    expect(await reservation(meta.attemptId)).toBe('unknown');
    // RW-003 §10.3: a disconnect after sending triggers the read-back; what it shows is evidence, the outcome stays unknown.
    const rec = await receipt(meta.attemptId);
    expect(rec).toMatchObject({ profile: 'mcp-read-route/1', readback: 'disagreed', outcome: 'unknown' });
    expect(rec.reasons[1]).toBe('read route after the loss: does not show the change');
  });

  // Last: it suspends the server's agent stream for good.
  it('a suspension cancels a running call at the server, leaves it unknown, and refuses new calls', async () => {
    const c = await client(KEYS.planner);
    const running = call(c, 'slow', {});
    const signal = await notes.slowStarted();
    await gw.store.control.appendControl({
      event_type: 'rw003.agent_card.lifecycle_changed',
      control_scope_ref: { space_id: 'default', scope_kind: 'agent', scope_id: 'card_notes' },
      actor_ref: { object_id: 'actor_test_operator', revision_id: 'rev_1', content_digest: `sha256:${sha('operator')}` },
      idempotency_key: 'suspend-notes',
      payload: { lifecycle: 'suspended', reason: 'test' },
    });
    // The revocation sweep stops the call; the SDK's notifications/cancelled reaches the tool.
    if (!signal.aborted) await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
    const r = await running;
    const meta = metaOf(r);
    expect(meta).toMatchObject({ outcome: 'unknown', verified: false });
    expect(await attempt(meta.attemptId)).toMatchObject({ state: 'closed', outcome: 'unknown', cancel_cause: { cause: 'operator' } });
    expect(await reservation(meta.attemptId)).toBe('unknown');
    const sent = notes.calls.get('echo') ?? 0;
    expect((await refusal(call(c, 'echo', { text: 'after' }))).data.code).toBe('context_invalidated');
    expect(notes.calls.get('echo') ?? 0).toBe(sent);
  });
});
}
