/**
 * Tracing of an MCP tool call (issue #26: "traces cover MCP effects"): one
 * `baton.request` span (binding `mcp`) with a child per step, and the MCP
 * server receives the forward span's W3C trace context in `_meta`.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notesServerConfig } from '../../e2e/mcp/readme-example.ts';
import { startNotesServer, type NotesServer } from '../../e2e/mcp/notes-server.ts';
import { Config } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { startGateway, type Gateway } from '../../src/main.ts';
import { until } from '../helpers/until.ts';

const KEY = 'mcp-tracing-key-not-a-secret';
const exporter = new InMemorySpanExporter();
let dir: string;
let gw: Gateway;
let notes: NotesServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'baton-mcp-trace-'));
  notes = await startNotesServer();
  gw = await startGateway(
    Config.parse({
      port: 0,
      dataDir: dir,
      tracing: { enabled: true, serviceName: 'baton-test' },
      callers: [{ id: 'planner', apiKeySha256: createHash('sha256').update(KEY).digest('hex'), preset: 'standard' }],
      presets: [{ id: 'standard', tools: ['notes/create_note'] }],
      mcpServers: [notesServerConfig(notes.url)],
    }),
    { logger: createLogger({ level: 'silent' }), spanExporter: exporter },
  );
});
afterAll(async () => {
  await gw?.close();
  await notes?.close();
  rmSync(dir, { recursive: true, force: true });
});

const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

describe('tracing an MCP tool call', () => {
  it('one request span with a child per step; the server gets the forward span as its parent in _meta', async () => {
    const client = new Client({ name: 'trace-client', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp/notes`), { requestInit: { headers: { 'x-api-key': KEY } } }));
    exporter.reset();
    const r = (await client.callTool({ name: 'create_note', arguments: { title: 'traced' } })) as { _meta: Record<string, { attemptId: string; outcome: string }> };
    await client.close();
    expect(r._meta['urn:baton:outcome:v2']!.outcome).toBe('succeeded');
    const attemptId = r._meta['urn:baton:outcome:v2']!.attemptId;
    const spans = (await until(() => {
      const verdict = exporter.getFinishedSpans().find((s) => s.name === 'baton.verdict' && s.attributes['baton.attempt_id'] === attemptId);
      const all = verdict ? exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === verdict.spanContext().traceId) : [];
      return all.some((s) => s.name === 'baton.request') ? all : undefined;
    }, 250, 20, 'the trace of the tool call')) as ReadableSpan[];
    const root = spans.find((s) => s.name === 'baton.request')!;
    expect(parentOf(root)).toBeUndefined();
    expect(root.attributes).toMatchObject({ 'baton.binding': 'mcp', 'baton.delegatee': 'notes' });
    const names = spans.map((s) => s.name);
    for (const step of ['baton.validate', 'baton.admit', 'baton.forward', 'baton.read_back', 'baton.verdict']) expect(names, step).toContain(step);
    const forward = spans.find((s) => s.name === 'baton.forward')!;
    expect(forward.attributes).toMatchObject({ 'baton.attempt_id': attemptId, 'baton.mcp.tool': 'create_note', 'baton.forwarded': 'result' });
    const sent = notes.metas.get('create_note')!.at(-1) as { traceparent?: string };
    expect(sent.traceparent).toBe(`00-${root.spanContext().traceId}-${forward.spanContext().spanId}-01`);
  });
});
