import type { Request, RequestHandler } from 'express';

/** Which SDK transport a request came in on. */
export type Transport = 'jsonrpc' | 'rest';

/** One A2A request as the agent saw it, before any refusal or misbehaviour. */
export interface LoggedRequest {
  at: string;
  transport: Transport;
  /** JSON-RPC method name; REST paths are mapped onto the same names so counts are comparable. */
  method: string;
  path: string;
  /** Raw `A2A-Extensions` request header (what Baton attached), if any. */
  a2aExtensions: string | undefined;
  a2aVersion: string | undefined;
  /** `message.metadata` as sent on the wire (JSON), e.g. the child delegation contract. */
  messageMetadata: unknown;
  /** Request-level `metadata` (SendMessageRequest.metadata / CancelTask metadata). */
  requestMetadata: unknown;
}

/** Shape served at `GET /_test/log`. */
export interface TestLogJson {
  requests: LoggedRequest[];
  counts: Record<string, number>;
  /** Task ids that drop-after-accept executed before cutting the connection. */
  acceptedTaskIds: string[];
}

// Order matters: the more specific suffixes must be tried before `/tasks/:id`.
const REST_ROUTES: ReadonlyArray<[string, RegExp, string]> = [
  ['POST', /\/message:send$/, 'SendMessage'],
  ['POST', /\/message:stream$/, 'SendStreamingMessage'],
  ['POST', /\/tasks\/[^/]+:cancel$/, 'CancelTask'],
  ['*', /\/tasks\/[^/]+:subscribe$/, 'SubscribeToTask'],
  ['POST', /\/tasks\/[^/]+\/pushNotificationConfigs$/, 'CreateTaskPushNotificationConfig'],
  ['GET', /\/tasks\/[^/]+\/pushNotificationConfigs$/, 'ListTaskPushNotificationConfigs'],
  ['GET', /\/tasks\/[^/]+\/pushNotificationConfigs\/[^/]+$/, 'GetTaskPushNotificationConfig'],
  ['DELETE', /\/tasks\/[^/]+\/pushNotificationConfigs\/[^/]+$/, 'DeleteTaskPushNotificationConfig'],
  ['GET', /\/tasks\/[^/]+$/, 'GetTask'],
  ['GET', /\/tasks$/, 'ListTasks'],
  ['GET', /\/extendedAgentCard$/, 'GetExtendedAgentCard'],
];

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const header = (req: Request, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
};

/** The A2A method a request targets, or `'unknown'`. Needs `req.body` already parsed. */
export function methodOf(transport: Transport, req: Request): string {
  if (transport === 'jsonrpc') {
    const body: unknown = req.body;
    return isRecord(body) && typeof body.method === 'string' ? body.method : 'unknown';
  }
  const hit = REST_ROUTES.find(([verb, re]) => (verb === '*' || verb === req.method) && re.test(req.path));
  return hit ? hit[2] : 'unknown';
}

/** The JSON params object of an A2A request (JSON-RPC `params`, or the REST body). */
export function paramsOf(transport: Transport, req: Request): Record<string, unknown> {
  const body: unknown = req.body;
  const params = transport === 'jsonrpc' && isRecord(body) ? body.params : body;
  return isRecord(params) ? params : {};
}

/** In-memory request log; tests read it over HTTP since the agent lives in another process. */
export class TestLog {
  private readonly requests: LoggedRequest[] = [];
  private readonly counts: Record<string, number> = {};
  private readonly accepted: string[] = [];

  /** Middleware that records every request on an A2A mount (body must be parsed first). */
  recorder(transport: Transport): RequestHandler {
    return (req, _res, next) => {
      const method = methodOf(transport, req);
      const params = paramsOf(transport, req);
      const message = params.message;
      this.requests.push({
        at: new Date().toISOString(),
        transport,
        method,
        path: req.originalUrl,
        a2aExtensions: header(req, 'a2a-extensions'),
        a2aVersion: header(req, 'a2a-version'),
        messageMetadata: isRecord(message) ? message.metadata : undefined,
        requestMetadata: params.metadata,
      });
      this.counts[method] = (this.counts[method] ?? 0) + 1;
      next();
    };
  }

  /** Notes a task that was executed although the client never got an answer. */
  accept(taskId: string): void {
    this.accepted.push(taskId);
  }

  toJSON(): TestLogJson {
    return { requests: [...this.requests], counts: { ...this.counts }, acceptedTaskIds: [...this.accepted] };
  }
}
