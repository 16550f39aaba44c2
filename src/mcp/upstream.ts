/**
 * One configured MCP server, as Baton reaches it (RW-003 §10.2): an official
 * SDK client over Streamable HTTP to the pinned URL, with the operator's
 * credential from the environment. It lists the server's tools (cached, the
 * discovery Baton records), calls a tool, and classifies every failure the
 * way the verdict needs it: the call provably did not run (released), or it
 * may have (unknown, held) — never guessed from message text.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, ErrorCode, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { unsupported } from '../errors.ts';
import type { JsonValue } from '../records/strict-json.ts';
import { VERSION } from '../version.ts';
import type { McpServerConfig } from './config.ts';
import { credentialHeader } from '../gateway/credential.ts';

type Json = { [k: string]: JsonValue };

export interface Discovery {
  protocolVersion: string;
  serverInfo: Json;
  capabilities: Json;
  tools: Tool[];
}

/** What a call to the server came to. */
export type CallResult =
  | { kind: 'result'; result: Json }
  /** The server refused the request before running it (a JSON-RPC protocol error, an HTTP refusal) or it never left Baton. */
  | { kind: 'not_executed'; reason: string; code?: number }
  /** Sent, then no usable answer: the tool may have run. */
  | { kind: 'lost'; reason: string };

/** JSON-RPC errors that mean the request was refused as a request, before any tool ran (JSON-RPC 2.0 §5.1). */
const REFUSED_AS_REQUEST = new Set<number>([ErrorCode.ParseError, ErrorCode.InvalidRequest, ErrorCode.MethodNotFound, ErrorCode.InvalidParams]);
/** Network errors raised before a request could be written: nothing reached the server. */
const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'ERR_TLS_CERT_ALTNAME_INVALID', 'UND_ERR_CONNECT_TIMEOUT']);

export function classifyFailure(err: unknown): Exclude<CallResult, { kind: 'result' }> {
  if (err instanceof McpError) {
    if (REFUSED_AS_REQUEST.has(err.code)) return { kind: 'not_executed', reason: `the server refused the call: ${err.message}`.slice(0, 512), code: err.code };
    return { kind: 'lost', reason: `the server answered ${err.code}: ${err.message}`.slice(0, 512) };
  }
  if (err instanceof StreamableHTTPError) {
    // A 4xx answer to the POST is a refusal of the request; a 5xx may come from a tool that ran.
    const status = err.code ?? 0;
    if (status >= 400 && status < 500) return { kind: 'not_executed', reason: `the server refused the request with HTTP ${status}` };
    return { kind: 'lost', reason: `the server answered HTTP ${status}` };
  }
  const code = causeCode(err);
  if (code && NEVER_SENT.has(code)) return { kind: 'not_executed', reason: `the request never reached the server (${code})` };
  return { kind: 'lost', reason: code ? `connection failed after sending (${code})` : 'no usable answer from the server' };
}

function causeCode(err: unknown): string | undefined {
  for (let e = err, i = 0; e && typeof e === 'object' && i < 5; e = (e as { cause?: unknown }).cause, i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

export class McpUpstream {
  private client: Promise<Client> | undefined;
  private tools: Promise<Map<string, Tool>> | undefined;
  private transport: StreamableHTTPClientTransport | undefined;

  constructor(readonly config: McpServerConfig) {}

  /**
   * The server's negotiated protocol revision and identity, once connected (RW-003 §10.3): the same
   * object while the session and the tool list last, so what is derived from it is computed once.
   */
  async discovery(): Promise<Discovery> {
    const client = await this.connected();
    const map = await this.toolMap();
    if (this.seen?.client === client && this.seen.tools === map) return this.seen.discovery;
    const tools = [...map.values()];
    const discovery: Discovery = {
      protocolVersion: this.transport?.protocolVersion ?? 'unknown',
      serverInfo: (client.getServerVersion() ?? {}) as unknown as Json,
      capabilities: (client.getServerCapabilities() ?? {}) as unknown as Json,
      tools,
    };
    this.seen = { client, tools: map, discovery };
    return discovery;
  }

  private seen: { client: Client; tools: Map<string, Tool>; discovery: Discovery } | undefined;

  /** A tool the server lists, or undefined (the list is read once, then again when a name is not in it). */
  async tool(name: string): Promise<Tool | undefined> {
    const found = (await this.toolMap()).get(name);
    if (found) return found;
    this.tools = undefined;
    return (await this.toolMap()).get(name);
  }

  /** Calls a tool; never throws for what the server or the network did (see {@link CallResult}). */
  async call(name: string, args: Json, meta: Json, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<CallResult> {
    let client: Client;
    try {
      client = await this.connected();
    } catch (err) {
      // Not even a session: nothing was asked of the tool.
      this.client = undefined;
      const failure = classifyFailure(err);
      return { kind: 'not_executed', reason: `no session with the server: ${failure.reason}` };
    }
    const timeout = opts.timeoutMs ?? this.config.callTimeoutMs;
    try {
      const result = await client.callTool({ name, arguments: args, _meta: meta }, undefined, { timeout, maxTotalTimeout: timeout, ...(opts.signal ? { signal: opts.signal } : {}) });
      return { kind: 'result', result: result as unknown as Json };
    } catch (err) {
      const failure = classifyFailure(err);
      // A session the server no longer knows is reopened on the next call.
      if (err instanceof StreamableHTTPError && err.code === 404) this.client = undefined;
      return failure;
    }
  }

  /**
   * Does the server run this tool as an MCP Task (the Tasks extension: the tool says `execution.taskSupport`
   * optional or required, and the server offers task-augmented tools/call)? Then Baton calls it as one: the
   * task id is recorded durably, so any node can follow the call to its end (RW-003 §10.2).
   */
  async runsAsTask(tool: Pick<Tool, 'execution'>): Promise<boolean> {
    const support = tool.execution?.taskSupport;
    if (support !== 'optional' && support !== 'required') return false;
    const caps = (await this.connected()).getServerCapabilities() as { tasks?: { requests?: { tools?: { call?: unknown } } } } | undefined;
    return caps?.tasks?.requests?.tools?.call !== undefined;
  }

  /** Starts a task-augmented call: the task the server created, or what the call came to. */
  async startTask(name: string, args: Json, meta: Json, opts: { signal?: AbortSignal; ttlMs: number }): Promise<{ kind: 'task'; taskId: string; pollMs: number } | Exclude<CallResult, { kind: 'result' }>> {
    let client: Client;
    try {
      client = await this.connected();
    } catch (err) {
      return { kind: 'not_executed', reason: `no session with the server: ${classifyFailure(err).reason}` };
    }
    try {
      const created = await client.request({ method: 'tools/call', params: { name, arguments: args, _meta: meta, task: { ttl: opts.ttlMs } } }, CreateTaskResultSchema, { timeout: 30_000, ...(opts.signal ? { signal: opts.signal } : {}) });
      return { kind: 'task', taskId: created.task.taskId, pollMs: created.task.pollInterval ?? 1000 };
    } catch (err) {
      return classifyFailure(err);
    }
  }

  /** A task's status now (`working`, `input_required`, `completed`, `failed`, `cancelled`), or what the read came to. */
  async taskStatus(taskId: string, signal?: AbortSignal): Promise<{ kind: 'status'; status: string; pollMs?: number } | Exclude<CallResult, { kind: 'result' }>> {
    try {
      const t = await (await this.connected()).experimental.tasks.getTask(taskId, { timeout: 30_000, ...(signal ? { signal } : {}) });
      return { kind: 'status', status: t.status, ...(t.pollInterval ? { pollMs: t.pollInterval } : {}) };
    } catch (err) {
      return { ...{}, ...classifyFailure(err), kind: 'lost' };
    }
  }

  /** A finished task's CallToolResult. */
  async taskResult(taskId: string): Promise<CallResult> {
    try {
      return { kind: 'result', result: (await (await this.connected()).experimental.tasks.getTaskResult(taskId, CallToolResultSchema, { timeout: 30_000 })) as unknown as Json };
    } catch (err) {
      return { ...{}, ...classifyFailure(err), kind: 'lost' };
    }
  }

  /** Asks the server to cancel a task (cooperative: proves nothing about what already ran). */
  async cancelTask(taskId: string): Promise<void> {
    await (await this.connected()).experimental.tasks.cancelTask(taskId, { timeout: 10_000 }).catch(() => undefined);
  }

  async close(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    this.tools = undefined;
    if (c) await c.then((x) => x.close()).catch(() => undefined);
  }

  private connected(): Promise<Client> {
    this.client ??= this.connect();
    const p = this.client;
    p.catch(() => {
      if (this.client === p) this.client = undefined;
    });
    return p;
  }

  private async connect(): Promise<Client> {
    const url = new URL(this.config.url);
    if (url.protocol !== 'https:' && !this.config.allowHttp) throw unsupported('MCP server URL is not https and http is not allowed for it', { server: this.config.id });
    const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: credentialHeaders(this.config), redirect: 'error' } });
    const client = new Client({ name: 'baton', version: VERSION });
    await client.connect(transport, { timeout: Math.min(this.config.callTimeoutMs, 30_000) });
    this.transport = transport;
    return client;
  }

  private toolMap(): Promise<Map<string, Tool>> {
    this.tools ??= this.listAll();
    const p = this.tools;
    p.catch(() => {
      if (this.tools === p) this.tools = undefined;
    });
    return p;
  }

  private async listAll(): Promise<Map<string, Tool>> {
    const client = await this.connected();
    const out = new Map<string, Tool>();
    let cursor: string | undefined;
    // Bounded: a server that pages forever is cut off after 20 pages.
    for (let page = 0; page < 20; page++) {
      const res = await client.listTools(cursor ? { cursor } : undefined, { timeout: 30_000 });
      for (const t of res.tools) out.set(t.name, t);
      cursor = res.nextCursor;
      if (!cursor) break;
    }
    return out;
  }
}

function credentialHeaders(config: McpServerConfig): Record<string, string> {
  if (!config.auth) return {};
  const header = credentialHeader(config.auth);
  if (!header) throw unsupported('MCP server credential is not set in the environment', { server: config.id, env: config.auth.env });
  return header;
}
