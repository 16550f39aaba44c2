/**
 * The demo's MCP hop (issue #26, README "Putting an MCP server behind
 * Baton"): a real SDK MCP server (e2e/mcp/notes-server.ts) behind one Baton
 * at /mcp/notes, with `create_note` read back through `get_note`. The stock
 * SDK client makes one tools/call through Baton; the demo prints the tool's
 * result, Baton's outcome (`_meta["urn:baton:outcome:v2"]`), the delegation
 * tree and budget, the receipt, and what reached the server.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startNotesServer } from '../e2e/mcp/notes-server.ts';
import { API_KEY, startWorld } from '../e2e/gateway/world.ts';
import { renderLedgerTree } from '../src/ledger/render.ts';

const OUTCOME = 'urn:baton:outcome:v2';

/** What the hop showed, for the demo's test. */
export interface McpHop {
  text: string;
  meta: { attemptId: string; rootDelegationId: string; outcome: string | null; verified: boolean; receipt: { objectId: string } | null };
  receipt: { profile: string; readback: string; outcome: string; reasons: string[] };
  serverCalls: Record<string, number>;
}

/** The README's tool policy for `create_note`: operator-attested identity, no T3 gate, read back through `get_note`. */
function notesConfig(url: string): Record<string, unknown> {
  return {
    id: 'notes',
    url,
    allowHttp: true,
    rw003: {
      attested_by: 'principal_baton_operator',
      agent_actor_ref: { object_id: 'actor_notes', revision_id: 'rev_1', content_digest: `sha256:${'0'.repeat(64)}` },
      accountable_operator: { operator_principal_ref: 'principal_notes_vendor', resolution: 'declared', evidence_ref: 'contract_demo', effective_from: '2026-01-01T00:00:00Z' },
    },
    tools: [{ name: 'create_note', requireApproval: false, readRoute: { tool: 'get_note', arguments: { id: '$.result.structuredContent.id' }, expect: { 'structuredContent.title': '$.arguments.title' } } }],
  };
}

export async function mcpHop(say: (s?: string) => void): Promise<McpHop> {
  const notes = await startNotesServer();
  try {
    const world = await startWorld({ agents: {}, presets: [{ id: 'standard', maxInvocations: 5, tools: ['notes/create_note'] }], config: { mcpServers: [notesConfig(notes.url)] } });
    const client = new Client({ name: 'demo', version: '1.0.0' });
    try {
      say(`gateway ${world.url}/mcp/notes   MCP server ${notes.url}`);
      await client.connect(new StreamableHTTPClientTransport(new URL(`${world.url}/mcp/notes`), { requestInit: { headers: { 'x-api-key': API_KEY } } }));
      const args = { title: 'minutes of Tuesday' };
      const result = (await client.callTool({ name: 'create_note', arguments: args })) as { content: Array<{ text?: string }>; _meta?: Record<string, unknown> };
      const meta = result._meta?.[OUTCOME] as McpHop['meta'];
      const text = result.content[0]?.text ?? '';
      say(`  tools/call create_note ${JSON.stringify(args)} → ${JSON.stringify(text)}`);
      say(`  Baton attempt ${meta.attemptId}: outcome ${meta.outcome} (verified: ${meta.verified})`);
      const store = world.store();
      try {
        say('  delegation tree and budget (root first):');
        for (const line of renderLedgerTree((await store.ledger.tree(meta.rootDelegationId))!).split('\n')) say(`    ${line}`);
        const receiptId = meta.receipt!.objectId;
        const receipt = (await store.listRevisions(receiptId))[0]!.body as McpHop['receipt'];
        say(`  receipt ${receiptId}: profile ${receipt.profile}, read-back ${receipt.readback}, outcome ${receipt.outcome}`);
        say(`          ${receipt.reasons.join('; ')}`);
        const serverCalls = Object.fromEntries(notes.calls);
        say(`  the MCP server saw: ${Object.entries(serverCalls).map(([k, v]) => `${k} ×${v}`).join(', ')} (get_note is Baton's read route)`);
        return { text, meta, receipt, serverCalls };
      } finally {
        await store.close();
      }
    } finally {
      await client.close().catch(() => undefined);
      await world.close();
    }
  } finally {
    await notes.close();
  }
}
