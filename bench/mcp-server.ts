/**
 * The MCP server the MCP benchmark calls (bench/mcp.ts): the official SDK's
 * McpServer over Streamable HTTP with session ids and JSON responses, as
 * e2e/mcp/notes-server.ts builds it, cut down to the three tools measured —
 * `create_note` (its read route is `get_note`), `get_note` and `echo` (no read
 * route: observed) — and with no per-call bookkeeping, so its CPU per call is
 * the floor of an SDK server rather than of a test fixture.
 *   tsx bench/mcp-server.ts
 * Prints `{"url": ...}` once listening; exits on SIGTERM or when stdin closes.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const notes = new Map<string, string>();

function build(): McpServer {
  const mcp = new McpServer({ name: 'notes', version: '1.0.0' });
  mcp.registerTool('create_note', { inputSchema: { title: z.string().min(1) }, annotations: { destructiveHint: false } }, async ({ title }) => {
    const id = `n-${randomUUID()}`;
    notes.set(id, title);
    return { content: [{ type: 'text', text: `created ${id}` }], structuredContent: { id, title } };
  });
  mcp.registerTool('get_note', { inputSchema: { id: z.string() }, annotations: { readOnlyHint: true } }, async ({ id }) => {
    const title = notes.get(id);
    if (title === undefined) return { content: [{ type: 'text', text: 'no such note' }], isError: true };
    return { content: [{ type: 'text', text: title }], structuredContent: { id, title } };
  });
  mcp.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return mcp;
}

const app = express();
app.use(express.json());
const transports = new Map<string, StreamableHTTPServerTransport>();
app.all('/mcp', async (req, res) => {
  const sid = req.header('mcp-session-id');
  let transport = sid ? transports.get(sid) : undefined;
  if (!transport) {
    const t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), enableJsonResponse: true, onsessioninitialized: (id) => void transports.set(id, t) });
    t.onclose = () => void (t.sessionId && transports.delete(t.sessionId));
    await build().connect(t);
    transport = t;
  }
  await transport.handleRequest(req, res, req.body);
});
const server = createServer(app);
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/mcp` })}\n`);
});
const stop = () => {
  setTimeout(() => process.exit(0), 2_000).unref();
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.once('SIGTERM', stop);
process.stdin.on('end', stop).resume();
