/**
 * Baton's MCP surface (issue #26): each configured server is served at
 * /mcp/<id> over Streamable HTTP (the official SDK's server transport, with
 * session ids). Every request authenticates as A2A requests do (API key or
 * bearer JWT; RW-003 §10: an MCP connection or token proves no authority by
 * itself), a session belongs to the caller that opened it, `tools/list`
 * shows only the tools the caller's preset scope names, and every
 * `tools/call` is an effect under a contract (./call.ts).
 */
import { randomUUID } from 'node:crypto';
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { BatonError } from '../errors.ts';
import type { CallerAuthenticator, Caller } from '../gateway/callers.ts';
import type { AuthThrottle } from '../http/auth-throttle.ts';
import { bodyTooLarge, httpStatusOf, jsonRpcErrorOf } from '../http/error-map.ts';
import type { Logger } from '../log.ts';
import { parseStrictJson } from '../records/strict-json.ts';
import { serveDocument } from '../http/well-known.ts';
import { requestSpan } from '../telemetry/tracing.ts';
import { authenticateRequest } from '../gateway/authenticate.ts';
import { VERSION } from '../version.ts';
import { callTool, coveredTools, resumeApprovedCall, type McpCallDeps, type McpServerHandle } from './call.ts';
import type { Attempt } from '../gateway/attempts.ts';
import type { Turn } from '../gateway/path/turn.ts';
import { followCall } from './run.ts';

export interface McpFrontDeps extends McpCallDeps {
  servers: ReadonlyMap<string, McpServerHandle>;
  auth: CallerAuthenticator;
  throttle?: AuthThrottle;
  logger: Logger;
  maxBodyBytes?: number;
  /** Open sessions at most, over all servers; the oldest idle one is closed first. */
  maxSessions?: number;
  /** A session unused this long is closed. */
  idleMs?: number;
  /**
   * Where bearer tokens come from, when callers use them (config `jwt`): served
   * as OAuth protected-resource metadata (RFC 9728, the MCP authorization spec).
   * The token's audience is the gateway's configured one.
   */
  oauth?: { issuer: string; publicUrl: () => string };
}

interface Session {
  transport: StreamableHTTPServerTransport;
  callerId: string;
  server: string;
  lastUsed: number;
}

export function mcpRouter(deps: McpFrontDeps): { router: Router; close: () => Promise<void>; resumeApproved: (taskId: string) => Promise<Attempt>; follow: (turn: Turn, row: { deadline: string }) => Promise<void> } {
  const router = Router();
  const sessions = new Map<string, Session>();
  const limit = deps.maxBodyBytes ?? 1024 * 1024;
  const idleMs = deps.idleMs ?? 10 * 60_000;
  const sweep = setInterval(() => {
    const cutoff = Date.now() - idleMs;
    for (const [id, s] of sessions) if (s.lastUsed < cutoff) void closeSession(id);
  }, Math.min(idleMs, 60_000));
  sweep.unref();

  async function closeSession(id: string): Promise<void> {
    const s = sessions.get(id);
    sessions.delete(id);
    await s?.transport.close().catch(() => undefined);
  }

  const metadataUrl = (id: string) => `${deps.oauth!.publicUrl()}/.well-known/oauth-protected-resource/mcp/${id}`;
  if (deps.oauth) {
    const oauth = deps.oauth;
    router.get('/.well-known/oauth-protected-resource/mcp/:server', (req: Request, res: Response, next: NextFunction) => {
      const id = String(req.params.server);
      if (!deps.servers.has(id)) return next();
      res.setHeader('cache-control', 'public, max-age=300');
      res.json({ resource: `${oauth.publicUrl()}/mcp/${id}`, authorization_servers: [oauth.issuer], bearer_methods_supported: ['header'], resource_name: `Baton MCP gateway: ${id}` });
    });
  }

  // Baton's signed card for this MCP endpoint (./card.ts): public, like every agent card it serves.
  router.get('/mcp/:server/.well-known/agent-card.json', async (req: Request, res: Response, next: NextFunction) => {
    if (!deps.servers.has(String(req.params.server))) return next();
    try {
      serveDocument(req, res, (await deps.cards.get(String(req.params.server))).doc, 'public, max-age=60');
    } catch (err) {
      sendBatonError(res, err instanceof BatonError ? err : new BatonError('unavailable', 'the card could not be built'));
    }
  });

  router.all('/mcp/:server', (req: Request, res: Response, next: NextFunction) => {
    const id = String(req.params.server);
    if (!deps.servers.has(id)) return next();
    // One `baton.request` span per MCP request, continuing the caller's W3C trace (as for A2A).
    requestSpan('mcp', id)(req, res, () => void serve(req, res, deps.servers.get(id)!));
  });

  async function serve(req: Request, res: Response, handle: McpServerHandle): Promise<void> {
    const caller = await authenticated(deps, req, res, deps.oauth ? `Bearer resource_metadata="${metadataUrl(handle.config.id)}"` : 'Bearer');
    if (!caller) return;
    const body = await strictBody(req, res, limit);
    if (body === FAILED) return;
    const sessionId = req.header('mcp-session-id');
    let session = sessionId ? sessions.get(sessionId) : undefined;
    // A session is its opener's: another caller learns nothing of it (404, as for an unknown session).
    if (sessionId && (!session || session.callerId !== caller.id || session.server !== handle.config.id)) return rpcError(res, 404, -32001, 'session not found');
    if (!session) {
      if (req.method !== 'POST' || !isInitialize(body)) return rpcError(res, 400, -32000, 'no session: send initialize first');
      if (sessions.size >= (deps.maxSessions ?? 1024)) await closeSession(oldest(sessions));
      session = openSession(deps, handle, caller, (id, s) => sessions.set(id, s), (id) => sessions.delete(id));
    }
    session.lastUsed = Date.now();
    try {
      await session.transport.handleRequest(req, res, body);
    } catch (err) {
      deps.logger.warn({ err, server: handle.config.id }, 'MCP request failed');
      if (!res.headersSent) rpcError(res, 500, -32603, 'internal error');
    }
  }
  return {
    router,
    resumeApproved: (taskId) => resumeApprovedCall(deps, deps.servers, taskId),
    follow: (turn, row) => followCall(deps, turn, row),
    close: async () => {
      clearInterval(sweep);
      await Promise.all([...sessions.keys()].map(closeSession));
    },
  };
}

function openSession(deps: McpFrontDeps, handle: McpServerHandle, caller: Caller, opened: (id: string, s: Session) => void, closed: (id: string) => void): Session {
  const server = new Server({ name: `baton/${handle.config.id}`, version: VERSION }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await listFor(deps, handle, caller) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    try {
      // The caller's notifications/cancelled aborts the call upstream too (an upstream Baton stopping its effect).
      return await callTool(deps, handle, caller, request.params.name, request.params.arguments, request.params._meta, extra.signal);
    } catch (err) {
      if (!(err instanceof BatonError)) deps.logger.warn({ err, server: handle.config.id, tool: request.params.name }, 'MCP tool call failed');
      const e = jsonRpcErrorOf(err);
      throw new McpError(e.code, e.message, e.data);
    }
  });
  const session: Session = {
    transport: new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => opened(id, session),
      onsessionclosed: (id) => closed(id),
    }),
    callerId: caller.id,
    server: handle.config.id,
    lastUsed: Date.now(),
  };
  void server.connect(session.transport);
  return session;
}

/** The server's own definitions of the tools this caller may call (never its output schema: a held result carries none). */
async function listFor(deps: McpFrontDeps, handle: McpServerHandle, caller: Caller): Promise<Tool[]> {
  const out: Tool[] = [];
  // An upstream Baton's authority is the chain it presents with each call, not a preset here: it sees every configured tool.
  for (const policy of caller.upstream ? handle.config.tools : coveredTools(deps, handle.config, caller)) {
    const tool = await handle.upstream.tool(policy.name).catch(() => undefined);
    if (!tool) continue;
    const { outputSchema: _o, _meta: _m, ...shown } = tool;
    out.push(shown);
  }
  return out;
}

/** The caller, or the refusal already sent as a JSON-RPC error (the A2A router's own step: src/gateway/authenticate.ts). */
async function authenticated(deps: McpFrontDeps, req: Request, res: Response, challenge: string): Promise<Caller | undefined> {
  const r = await authenticateRequest(req, deps, 'mcp');
  if ('caller' in r) return r.caller;
  if (r.retryAfter) res.setHeader('Retry-After', r.retryAfter);
  if (r.refusal.code === 'authentication_required') res.setHeader('WWW-Authenticate', challenge);
  sendBatonError(res, r.refusal);
  return undefined;
}

const FAILED = Symbol('failed');

/** Strict JSON at the edge (DESIGN "Strict JSON at every edge"): duplicate keys and oversize bodies are refused. */
function strictBody(req: Request, res: Response, limit: number): Promise<unknown> {
  if (req.method !== 'POST') return Promise.resolve(undefined);
  return new Promise((resolve) => {
    express.raw({ limit, type: () => true })(req, res, (err?: unknown) => {
      if (err) {
        sendBatonError(res, (err as { status?: number }).status === 413 ? bodyTooLarge(limit) : new BatonError('invalid_request', 'request body is unreadable'));
        return resolve(FAILED);
      }
      try {
        resolve(Buffer.isBuffer(req.body) && req.body.length > 0 ? parseStrictJson(req.body, { maxBytes: limit }) : undefined);
      } catch {
        rpcError(res, 400, -32700, 'request body is not strict JSON');
        resolve(FAILED);
      }
    });
  });
}

function isInitialize(body: unknown): boolean {
  const one = Array.isArray(body) ? body : [body];
  return one.some((m) => typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize');
}

function oldest(sessions: Map<string, Session>): string {
  let id = '';
  let at = Infinity;
  for (const [k, s] of sessions) if (s.lastUsed < at) [id, at] = [k, s.lastUsed];
  return id;
}

function rpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/** A refusal before the MCP transport: a JSON-RPC error with the ADR-0014 code (one table: src/http/error-map.ts). */
function sendBatonError(res: Response, err: BatonError): void {
  const e = jsonRpcErrorOf(err);
  res.status(httpStatusOf(err)).json({ jsonrpc: '2.0', error: e, id: null });
}
