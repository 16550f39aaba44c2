/**
 * A real MCP server for the adapter's tests, built with the official SDK
 * (McpServer over Streamable HTTP on loopback). It keeps notes in memory and
 * counts every call per tool, so a test can assert what reached it. Its
 * `lying_create` answers like `create_note` but stores nothing (the read
 * route then disagrees); `refuses` always rejects its params (-32602);
 * `hangup` drops the connection after receiving the call; `slow` waits until
 * cancelled.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { z } from 'zod';

export interface NotesServer {
  url: string;
  calls: Map<string, number>;
  /** Every `_meta` a call arrived with, by tool. */
  metas: Map<string, unknown[]>;
  notes: Map<string, string>;
  /** Resolves when a `slow` call has started; its abort signal fires on cancellation. */
  slowStarted(): Promise<AbortSignal>;
  /** `long_job` runs as an MCP Task (taskSupport required) until this finishes every job started so far; returns their task ids. */
  finishJobs(): Promise<string[]>;
  /** Task ids of `long_job` calls started so far. */
  jobs: string[];
  close(): Promise<void>;
}

export async function startNotesServer(): Promise<NotesServer> {
  const calls = new Map<string, number>();
  const metas = new Map<string, unknown[]>();
  const notes = new Map<string, string>();
  let slowWaiter: ((s: AbortSignal) => void) | undefined;
  const slowStarted = new Promise<AbortSignal>((r) => (slowWaiter = r));
  const taskStore = new InMemoryTaskStore();
  const jobs: string[] = [];
  const pendingJobs = new Map<string, string>();
  const count = (tool: string, meta: unknown) => {
    calls.set(tool, (calls.get(tool) ?? 0) + 1);
    metas.set(tool, [...(metas.get(tool) ?? []), meta]);
  };

  const build = () => {
    const mcp = new McpServer({ name: 'notes', version: '1.0.0' }, { capabilities: { tasks: { requests: { tools: { call: {} } }, cancel: {} } }, taskStore });
    mcp.experimental.tasks.registerToolTask('long_job', { inputSchema: { label: z.string() }, annotations: { destructiveHint: false }, execution: { taskSupport: 'required' } }, {
      createTask: async ({ label }, extra) => {
        count('long_job', extra._meta);
        const task = await extra.taskStore.createTask({ ttl: 600_000 });
        jobs.push(task.taskId);
        pendingJobs.set(task.taskId, label);
        return { task };
      },
      getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: async (_args, extra) => extra.taskStore.getTaskResult(extra.taskId) as never,
    });
    mcp.registerTool('create_note', { inputSchema: { title: z.string().min(1) }, annotations: { destructiveHint: false } }, async ({ title }, extra) => {
      count('create_note', extra._meta);
      const id = `n-${randomUUID().slice(0, 8)}`;
      notes.set(id, title);
      return { content: [{ type: 'text', text: `created ${id}` }], structuredContent: { id, title } };
    });
    mcp.registerTool('lying_create', { inputSchema: { title: z.string().min(1) }, annotations: { destructiveHint: false } }, async ({ title }, extra) => {
      count('lying_create', extra._meta);
      return { content: [{ type: 'text', text: 'created n-fake' }], structuredContent: { id: 'n-fake', title } };
    });
    mcp.registerTool('get_note', { inputSchema: { id: z.string() }, annotations: { readOnlyHint: true } }, async ({ id }, extra) => {
      count('get_note', extra._meta);
      const title = notes.get(id);
      if (title === undefined) return { content: [{ type: 'text', text: 'no such note' }], isError: true };
      return { content: [{ type: 'text', text: title }], structuredContent: { id, title } };
    });
    mcp.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }, extra) => {
      count('echo', extra._meta);
      return { content: [{ type: 'text', text }] };
    });
    mcp.registerTool('delete_all', { inputSchema: {} }, async (_args, extra) => {
      count('delete_all', extra._meta);
      notes.clear();
      return { content: [{ type: 'text', text: 'deleted' }] };
    });
    for (const name of ['refuses', 'hangup']) {
      mcp.registerTool(name, { inputSchema: { x: z.string() } }, async () => {
        throw new McpError(ErrorCode.InternalError, 'never reached: the edge answers for this tool');
      });
    }
    mcp.registerTool('slow', { inputSchema: {} }, async (_args, extra) => {
      count('slow', extra._meta);
      slowWaiter?.(extra.signal);
      await new Promise<void>((resolve) => extra.signal.addEventListener('abort', () => resolve(), { once: true }));
      return { content: [{ type: 'text', text: 'finished' }] };
    });
    return mcp;
  };

  const app = express();
  app.use(express.json());
  // `refuses` is refused as a request, before any tool runs: a JSON-RPC invalid-params error (as an edge in front of a server would).
  app.post('/mcp', (req, res, next) => {
    const m = req.body as { id?: unknown; method?: string; params?: { name?: string; _meta?: unknown } };
    if (m?.method !== 'tools/call' || (m.params?.name !== 'refuses' && m.params?.name !== 'hangup')) return next();
    count(m.params.name, m.params._meta);
    // `hangup` ran (counted) and the connection drops before any answer: the caller cannot know.
    if (m.params.name === 'hangup') return void req.socket.destroy();
    res.json({ jsonrpc: '2.0', id: m.id, error: { code: ErrorCode.InvalidParams, message: 'refused: x is not acceptable here' } });
  });
  const transports = new Map<string, StreamableHTTPServerTransport>();
  app.all('/mcp', async (req, res) => {
    const sid = req.header('mcp-session-id');
    let transport = sid ? transports.get(sid) : undefined;
    if (!transport) {
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), enableJsonResponse: true, onsessioninitialized: (id) => void transports.set(id, transport!) });
      await build().connect(transport);
    }
    await transport.handleRequest(req, res, req.body);
  });
  const server: Server = createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  return {
    url,
    calls,
    metas,
    notes,
    slowStarted: () => slowStarted,
    jobs,
    finishJobs: async () => {
      const done = [...pendingJobs];
      pendingJobs.clear();
      for (const [id, label] of done) await taskStore.storeTaskResult(id, 'completed', { content: [{ type: 'text', text: `job ${label} done` }] });
      return done.map(([id]) => id);
    },
    close: async () => {
      for (const t of transports.values()) await t.close().catch(() => undefined);
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
