/**
 * MCP tools/call on loopback (issue #26 "the bench reports the added CPU per
 * tool call beside the A2A figure"): one SDK MCP server (bench/mcp-server.ts)
 * called directly and through Baton's `/mcp/notes`, at concurrency 1 and 8,
 * for a tool with a read route (`create_note`, re-read through `get_note`)
 * and one without (`echo`, observed). Measured as the A2A phases are
 * (bench/http.ts `measure`): fresh processes per concurrency, a warm-up, a
 * fixed window, CPU = utime+stime over the window / calls.
 *
 * Each phase opens one MCP session with the official SDK client (initialize,
 * notifications/initialized), then drives closed loops of raw JSON-RPC
 * `tools/call` POSTs in that session over the same undici load generator as
 * the A2A phases, so the client's own cost stays small and comparable.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { spawnReady } from '../e2e/harness/process.ts';
import { measure, type LoadFigures } from './http.ts';
import { JIT_BURST, type LoadTarget } from './lib/load.ts';
import { removeTemp, tempDir } from './lib/proc.ts';
import { API_KEY, BATON_MAIN, ROOT_LIFETIME_S, type Service } from './lib/world.ts';

const SERVER_MAIN = fileURLToPath(new URL('./mcp-server.ts', import.meta.url));
const OUTCOME = 'urn:baton:outcome:v2';
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

export type McpTool = 'create_note' | 'echo';
/** What Baton does after the call (README "Putting an MCP server behind Baton", step 4). */
const VERIFICATION: Record<McpTool, 'read route' | 'observed'> = { create_note: 'read route', echo: 'observed' };

export interface McpRow extends LoadFigures {
  route: 'direct' | 'baton';
  tool: McpTool;
  verification: 'read route' | 'observed';
  /** CPU ms per tools/call of Baton (absent direct), of the MCP server, and of the load generator. */
  cpuMsPerCall: { gateway?: number; server: number; client: number };
}

export interface McpResults {
  rows: McpRow[];
  timing: { warmupMs: number; durationMs: number; minWarm: number; jitWarm?: { requests: number; ms: number } };
  concurrencies: number[];
  /** When the phase ran (ISO 8601). */
  date: string;
  /** Measured alone (`BENCH_ONLY=mcp`) and merged into an earlier run's results. */
  only?: boolean;
}

/** The MCP server as its own process, so its CPU is read apart from Baton's. */
async function startMcpServer(): Promise<Service> {
  const proc = await spawnReady<{ url: string }>(SERVER_MAIN, [], {}, { timeoutMs: 30_000 });
  return { url: proc.ready.url, pid: proc.pid, stop: proc.stop };
}

/** Baton in front of the server only (no A2A delegatee): the README's tool policies, one caller, one preset. */
async function startMcpBaton(serverUrl: string): Promise<Service> {
  const dir = tempDir('mcp');
  const config = {
    port: 0,
    dataDir: dir,
    logLevel: 'warn',
    callers: [{ id: 'planner', apiKeySha256: sha256(API_KEY), preset: 'standard' }],
    mcpServers: [
      {
        id: 'notes',
        url: serverUrl,
        allowHttp: true,
        rw003: {
          attested_by: 'principal_baton_operator',
          agent_actor_ref: { object_id: 'actor_notes', revision_id: 'rev_1', content_digest: `sha256:${'0'.repeat(64)}` },
          accountable_operator: { operator_principal_ref: 'principal_notes_vendor', resolution: 'declared', evidence_ref: 'contract_bench', effective_from: '2026-01-01T00:00:00Z' },
        },
        tools: [
          { name: 'create_note', requireApproval: false, readRoute: { tool: 'get_note', arguments: { id: '$.result.structuredContent.id' }, expect: { 'structuredContent.title': '$.arguments.title' } } },
          { name: 'echo', requireApproval: false },
        ],
      },
    ],
    presets: [{ id: 'standard', tools: ['notes/create_note', 'notes/echo'], maxInvocations: 5, lifetimeSeconds: ROOT_LIFETIME_S, maxActiveRoots: 1024, maxPerMinute: 100_000 }],
  };
  const file = join(dir, 'baton.json');
  writeFileSync(file, JSON.stringify(config));
  try {
    const proc = await spawnReady<{ url: string }>(BATON_MAIN, [file], {}, { timeoutMs: 60_000 });
    return {
      url: `${proc.ready.url}/mcp/notes`,
      pid: proc.pid,
      async stop() {
        await proc.stop();
        removeTemp(dir);
      },
    };
  } catch (err) {
    removeTemp(dir);
    throw err;
  }
}

/** A session opened by the stock SDK client; the load then speaks JSON-RPC in it. */
async function openSession(url: string, auth: Record<string, string>): Promise<{ headers: Record<string, string>; close: () => Promise<void> }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: auth } });
  const client = new Client({ name: 'baton-bench', version: '1.0.0' });
  await client.connect(transport, { timeout: 30_000 });
  const headers = {
    ...auth,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-session-id': transport.sessionId ?? '',
    'mcp-protocol-version': transport.protocolVersion ?? '',
  };
  return {
    headers,
    close: async () => {
      await transport.terminateSession().catch(() => undefined);
      await client.close().catch(() => undefined);
    },
  };
}

/** A tools/call with a fresh JSON-RPC id (and, for create_note, a fresh title) per call. */
function toolCallBody(tool: McpTool, prefix: string): () => string {
  let n = 0;
  return () => {
    n++;
    const args = tool === 'create_note' ? { title: `${prefix}-${process.pid}-${n}` } : { text: 'x' };
    return JSON.stringify({ jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: tool, arguments: args } });
  };
}

/** Success: a tool result that is not an error; through Baton also outcome `succeeded`, verified exactly when a read route ran. */
export function toolSucceeded(verified?: boolean): (status: number, text: string) => string | undefined {
  return (status, text) => {
    if (status !== 200) return `HTTP ${status}: ${text.slice(0, 200)}`;
    let body: { result?: { isError?: boolean; content?: unknown; _meta?: Record<string, { outcome?: string; verified?: boolean }> }; error?: unknown };
    try {
      body = JSON.parse(text);
    } catch {
      return 'response is not JSON';
    }
    if (body.error) return `JSON-RPC error: ${JSON.stringify(body.error).slice(0, 250)}`;
    if (!body.result || body.result.isError) return `tool error: ${JSON.stringify(body.result?.content ?? null).slice(0, 200)}`;
    if (verified === undefined) return undefined;
    const meta = body.result._meta?.[OUTCOME];
    if (meta?.outcome !== 'succeeded' || meta.verified !== verified) return `outcome ${JSON.stringify(meta ?? null)}`;
    return undefined;
  };
}

async function phase(
  route: McpRow['route'],
  tool: McpTool,
  c: number,
  t: McpResults['timing'],
  server: Service,
  baton: Service | undefined,
): Promise<McpRow> {
  const url = baton ? baton.url : server.url;
  const session = await openSession(url, baton ? { 'x-api-key': API_KEY } : {});
  try {
    const { origin, pathname } = new URL(url);
    const target: LoadTarget = { origin, path: pathname, headers: session.headers, body: toolCallBody(tool, `${route}-c${c}`), check: toolSucceeded(baton ? tool === 'create_note' : undefined) };
    const { cpuMsPerRequest: cpu, ...m } = await measure(target, c, t, { ...(baton ? { proxy: baton.pid } : {}), agent: server.pid });
    return { route, tool, verification: VERIFICATION[tool], ...m, cpuMsPerCall: { ...(cpu.proxy !== undefined ? { gateway: cpu.proxy } : {}), server: cpu.agent, client: cpu.client } };
  } finally {
    await session.close();
  }
}

/** Per concurrency, a fresh server and a fresh Baton (fresh data dir); direct first, then through Baton. About 2.5 min full, 40 s quick. */
export async function benchMcp(quick: boolean, log: (s: string) => void): Promise<McpResults> {
  // Every phase past its JIT warm-up, as the A2A phases are (lib/load.ts warmJit); a smaller burst than theirs, since these run four Baton phases.
  const t = quick
    ? { warmupMs: 1_000, durationMs: 2_000, minWarm: 20, jitWarm: JIT_BURST.quick }
    : { warmupMs: 1_500, durationMs: 4_000, minWarm: 60, jitWarm: { requests: 2_000, ms: 25_000 } };
  const concurrencies = [1, 8];
  const rows: McpRow[] = [];
  const tools: McpTool[] = ['create_note', 'echo'];
  for (const c of concurrencies) {
    const server = await startMcpServer();
    let baton: Service | undefined;
    try {
      for (const tool of tools) {
        log(`  c=${c}: ${tool} direct`);
        rows.push(await phase('direct', tool, c, t, server, undefined));
      }
      baton = await startMcpBaton(server.url);
      for (const tool of tools) {
        log(`  c=${c}: ${tool} through Baton (${VERIFICATION[tool]})`);
        rows.push(await phase('baton', tool, c, t, server, baton));
      }
    } finally {
      await baton?.stop();
      await server.stop();
    }
  }
  return { rows, timing: t, concurrencies, date: new Date().toISOString() };
}
