/**
 * An MCP server behind another organisation's Baton (issue #26
 * "Cross-organisation"): org A's Baton fronts org B's /mcp/notes, which
 * fronts a real SDK MCP server; the two share nothing but keys and URLs
 * (separate SQLite stores). A identifies B by B's signed MCP card, presents
 * its chain in `_meta`, B verifies and extends it, fences A's streams
 * through A's signed head statements, verifies the call through its read
 * route and answers with its signed consumption receipt, by which A
 * settles; A verifies through its own read route, through B. Run on SQLite
 * (e2e/mcp-federation.test.ts) and with B on PostgreSQL (….pg.test.ts).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../src/store/port.ts';
import { baton as batonCli } from '../test/cli/run.ts';
import { CALLER_KEY, startFederation, type Federation } from './gateway/federation.ts';
import { startNotesServer, type NotesServer } from './mcp/notes-server.ts';

const OUTCOME = 'urn:baton:outcome:v2';

async function withStore<T>(open: () => Promise<Store>, fn: (s: Store) => Promise<T>): Promise<T> {
  const s = await open();
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

export function mcpFederationSuite(name: string, setup: () => Promise<{ pgUrls?: Record<number, string> }>): void {
describe(`${name}: an MCP server behind another organisation's Baton (separate stores)`, () => {
  let notes: NotesServer;
  let fed: Federation;
  let client: Client;

  beforeAll(async () => {
    notes = await startNotesServer();
    fed = await startFederation({ ...(await setup()), mcpUrl: notes.url, config: { revocationSweepMs: 100 } });
    client = new Client({ name: 'org-a-caller', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${fed.orgs[0]!.url}/mcp/notes`), { requestInit: { headers: { 'x-api-key': CALLER_KEY } } }));
  }, 180_000);
  afterAll(async () => {
    await client?.close().catch(() => undefined);
    await fed?.close();
    await notes?.close();
  });

  it('B serves a signed card for its MCP endpoint naming Baton B as the one who acts', async () => {
    const card = (await (await fetch(`${fed.orgs[1]!.url}/mcp/notes/.well-known/agent-card.json`)).json()) as { signatures?: unknown[]; supportedInterfaces: Array<{ url: string; protocolBinding: string }>; capabilities: { extensions: Array<{ params?: { agent_actor_ref?: { object_id: string } } }> } };
    expect(card.signatures!.length).toBeGreaterThan(0); // one per current signing key
    expect(card.supportedInterfaces).toEqual([{ url: `${fed.orgs[1]!.url}/mcp/notes`, protocolBinding: 'MCP', protocolVersion: '2025-06-18' }]);
    expect(card.capabilities.extensions[0]!.params!.agent_actor_ref!.object_id).toBe('actor_baton_b');
  });

  it('a call admitted at A and B, verified at both through their read routes, settled at A by B\'s signed receipt', async () => {
    const statements = fed.proxies.b!.requests;
    const r = (await client.callTool({ name: 'create_note', arguments: { title: 'federated minutes' } })) as { structuredContent?: { id: string; title: string }; _meta: Record<string, { attemptId: string; outcome: string; verified: boolean }> };
    expect(r._meta[OUTCOME]).toMatchObject({ outcome: 'succeeded', verified: true });
    expect(r.structuredContent).toMatchObject({ title: 'federated minutes' });
    expect(notes.notes.get(r.structuredContent!.id)).toBe('federated minutes');
    // B verified its effect, and A read it back through B: two reads of the note, one effect.
    expect(notes.calls.get('create_note')).toBe(1);
    expect(notes.calls.get('get_note')).toBe(2);
    // B fenced A's streams through A's signed head statements (RW-003 §1.2 across stores).
    expect(fed.proxies.b!.requests).toBeGreaterThan(statements);

    const a = await withStore(() => fed.orgs[0]!.store(), async (s) => {
      const attempt = (await s.getRecord(r._meta[OUTCOME]!.attemptId))!.body as { delegation_ref: { object_id: string }; reservation_id: string; receipt_ref: { object_id: string }; remote: { protocol: string; card: { form: string; identity: string; signed: boolean } } };
      return { attempt, reservation: (await s.ledger.reservation(attempt.reservation_id))!, receipt: (await s.getRecord(attempt.receipt_ref.object_id))!.body as { profile: string; readback: string; consumption?: { status: string; downstream: string; downstream_task_id: string; settled: Record<string, string> } } };
    });
    expect(a.attempt.remote).toMatchObject({ protocol: 'mcp', card: { form: 'public', identity: 'card_extension', signed: true } });
    expect(a.receipt).toMatchObject({ profile: 'mcp-read-route/1', readback: 'agreed', consumption: { status: 'agreed', downstream: 'actor_baton_b' } });
    expect(a.reservation.status).toBe('settled');
    expect(fed.proxies.b!.subjects).toContain(a.attempt.delegation_ref.object_id);

    const bTask = a.receipt.consumption!.downstream_task_id;
    const b = await withStore(() => fed.orgs[1]!.store(), async (s) => {
      const attempt = (await s.getRecord(bTask))!.body as { outcome: string; delegation_ref: { object_id: string }; reservation_id: string; tool: { server: string; name: string } };
      const leaf = (await s.getRecord(attempt.delegation_ref.object_id))!.body as { lineage: { parent_ref: { object_id: string } }; scope: { tools: string[] } };
      return { attempt, leaf, reservation: (await s.ledger.reservation(attempt.reservation_id))! };
    });
    // B's child extends A's: one more hop, the same one tool.
    expect(b.leaf.lineage.parent_ref.object_id).toBe(a.attempt.delegation_ref.object_id);
    expect(b.leaf.scope.tools).toEqual(['mcp:notes/create_note']);
    expect(b.attempt).toMatchObject({ outcome: 'succeeded', tool: { server: 'notes', name: 'create_note' } });
    expect(a.receipt.consumption!.settled).toEqual(b.reservation.amounts);
    // B's receipt is A's business: A's caller sees only A's outcome.
    expect(JSON.stringify(r)).not.toContain('consumptionReceipt');
  });

  // Last: it revokes org A's root for the slow call.
  it('A revoking its root stops a running call: a signed notice trips B\'s copy of the delegation, the server hears the cancellation, the outcome stays unknown', async () => {
    const running = client.callTool({ name: 'slow', arguments: {} }) as Promise<{ _meta: Record<string, { attemptId: string; outcome: string }> }>;
    const signal = await notes.slowStarted();
    const aAttempts = await withStore(() => fed.orgs[0]!.store(), async (s) => (await s.work.list(100, 'actor_baton_a')).map((w) => w.attempt_id));
    expect(aAttempts).toHaveLength(1);
    const aAttempt = await withStore(() => fed.orgs[0]!.store(), async (s) => (await s.getRecord(aAttempts[0]!))!.body as { root_ref: { object_id: string }; delegation_ref: { object_id: string } });
    const out = await batonCli(['control', 'revoke', aAttempt.root_ref.object_id, '--reason', 'e2e: org A revokes during an MCP call'], { BATON_CONFIG: fed.orgs[0]!.config, BATON_LOG_LEVEL: 'silent' });
    expect(out.code, out.stderr).toBe(0);
    if (!signal.aborted) await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
    const r = await running;
    expect(r._meta[OUTCOME]).toMatchObject({ attemptId: aAttempts[0], outcome: 'unknown' });
    // B heard A's signed notice: its copy of A's delegation to it is tripped, so nothing more runs under it there.
    const head = await withStore(() => fed.orgs[1]!.store(), (s) => s.control.head({ space_id: 'space_a', scope_kind: 'delegation', scope_id: aAttempt.delegation_ref.object_id }));
    expect(head?.state).toBe('tripped');
  });
});
}
