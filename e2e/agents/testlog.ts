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
  /** `message.parts` as sent (what the delegatee was asked to do). */
  messageParts: unknown;
  /** `message.role` as sent: `ROLE_USER` from a v1.0 sender, `user` in v0.3's shape. */
  messageRole: unknown;
  /** `message.messageId` as sent: which turn the agent saw (gateways forward the caller's id unchanged). */
  messageId?: string | undefined;
  /** Request-level `metadata` (SendMessageRequest.metadata / CancelTask metadata). */
  requestMetadata: unknown;
  /** W3C `traceparent` header, when the sender propagated a trace. */
  traceparent?: string | undefined;
}

const CONTRACT_EXTENSION_KEY = 'urn:rw-agent-delegation:0.1.1:delegation-contract';

/**
 * The contract chain a gateway attached to `r`: in the request's metadata,
 * where Baton puts it for an agent that does not declare the extension
 * (src/gateway/chain-placement.ts); undefined when `r` carries none there.
 */
export function sentChain<T = Record<string, unknown>>(r: Pick<LoggedRequest, 'requestMetadata'>): T[] | undefined {
  const meta = r.requestMetadata as Record<string, { chain?: T[] } | undefined> | undefined;
  return meta?.[CONTRACT_EXTENSION_KEY]?.chain;
}

/** One push notification POST the agent made (or tried to make) to a registered webhook. */
export interface LoggedPush {
  at: string;
  /** The `--push-mode` the agent runs in. */
  mode: string;
  /** The registered webhook URL it went to. */
  url: string;
  /** The agent's own task id. */
  taskId: string;
  /** StreamResponse payload case: `task`, `statusUpdate`, `artifactUpdate` or `message`. */
  kind: string;
  /** Task state carried by a `task`/`statusUpdate` payload, e.g. `TASK_STATE_COMPLETED`. */
  state: string | undefined;
  /**
   * Why this POST happened: `event` (first send of an event), `duplicate` (replay mode's
   * immediate second send) or `replay-first` (replay mode's re-send of the task's first
   * notification after the terminal one).
   */
  send: 'event' | 'duplicate' | 'replay-first';
  /** HTTP status the webhook answered; `null` when the request failed (error set). */
  status: number | null;
  error?: string;
  /** Whether a `X-A2A-Notification-Token` header was sent, and whether it was deliberately wrong. */
  tokenSent: boolean;
  forgedToken: boolean;
  /** Whether an `Authorization: Bearer <JWT>` header was sent. */
  jwt: boolean;
}

/** Shape served at `GET /_test/log`. */
export interface TestLogJson {
  requests: LoggedRequest[];
  counts: Record<string, number>;
  /** Task ids that drop-after-accept executed before cutting the connection. */
  acceptedTaskIds: string[];
  /** Push POSTs in the order they completed (at most {@link MAX_PUSHES}, oldest dropped). */
  pushes: LoggedPush[];
  /** Notifications `--push-mode drop` swallowed (one per event and registered config). */
  droppedPushes: number;
}

/** Bound on remembered pushes, so a long run cannot grow the log without limit. */
export const MAX_PUSHES = 10_000;

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
  private readonly pushes: LoggedPush[] = [];
  private dropped = 0;

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
        messageParts: isRecord(message) ? message.parts : undefined,
        messageRole: isRecord(message) ? message.role : undefined,
        messageId: isRecord(message) && typeof message.messageId === 'string' ? message.messageId : undefined,
        requestMetadata: params.metadata,
        traceparent: header(req, 'traceparent'),
      });
      this.counts[method] = (this.counts[method] ?? 0) + 1;
      next();
    };
  }

  /** Notes a task that was executed although the client never got an answer. */
  accept(taskId: string): void {
    this.accepted.push(taskId);
  }

  /** Notes one push POST the agent made. */
  push(entry: LoggedPush): void {
    this.pushes.push(entry);
    if (this.pushes.length > MAX_PUSHES) this.pushes.shift();
  }

  /** Notes a notification that `--push-mode drop` did not send. */
  dropPush(): void {
    this.dropped += 1;
  }

  toJSON(): TestLogJson {
    return {
      requests: [...this.requests],
      counts: { ...this.counts },
      acceptedTaskIds: [...this.accepted],
      pushes: [...this.pushes],
      droppedPushes: this.dropped,
    };
  }
}
