/**
 * Push notifications from the test delegatees. The SDK's DefaultRequestHandler stores
 * the configs (SendMessage `configuration.taskPushNotificationConfig` or
 * CreateTaskPushNotificationConfig) and calls our sender once per event, fire-and-forget;
 * this sender serialises exactly like the SDK's (V1PushNotificationSerializer:
 * `StreamResponse.toJSON`, `application/a2a+json`) and then misbehaves on purpose
 * according to `--push-mode`:
 *
 * - `token`  SDK default: `X-A2A-Notification-Token: <token>` (or `Authorization:
 *            <scheme> <credentials>` when the config carries `authentication`).
 * - `jwt`    token header as above plus `Authorization: Bearer <JWT>` signed with the
 *            card key (same `kid` as the agent's JWKS); see {@link PushJwtClaims}.
 * - `forge`  the configured token with its last character changed (unauthenticated).
 * - `replay` every notification twice, and the task's first notification once more
 *            after the terminal one, byte- and header-identical (same JWT, same jti).
 * - `drop`   configs are accepted, nothing is ever sent.
 *
 * Every POST is recorded in the TestLog (`pushes`), with the status the webhook answered.
 * Unlike the SDK sender there is no retry and a non-2xx answer is not an error.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { StreamResponse, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { V1PushNotificationSerializer, type PushNotificationSender, type PushNotificationStore, type ServerCallContext } from '@a2a-js/sdk/server';
import { SignJWT } from 'jose';
import type { AgentSigningKey } from './signed-card.ts';
import type { LoggedPush, TestLog } from './testlog.ts';

/** The selectable push behaviours (`--push-mode`). */
export const PUSH_MODES = ['token', 'jwt', 'forge', 'replay', 'drop'] as const;
/** One of {@link PUSH_MODES}. */
export type PushMode = (typeof PUSH_MODES)[number];

/** The SDK's legacy token header (DefaultPushNotificationSender's default name). */
export const TOKEN_HEADER = 'X-A2A-Notification-Token';
/** `typ` of the push JWT's protected header. */
export const PUSH_JWT_TYP = 'JWT';

/** Claims of the `Authorization: Bearer` JWT in `jwt` mode (or with `--push-jwt`). */
export interface PushJwtClaims {
  /** The agent's base URL, e.g. `http://127.0.0.1:43121`. */
  iss: string;
  /** The webhook URL the POST goes to, exactly as registered. */
  aud: string;
  iat: number;
  /** iat + {@link PUSH_JWT_TTL_S}. */
  exp: number;
  /** Random UUID, one per notification (a replay repeats it). */
  jti: string;
  /** The agent's task id. */
  task_id: string;
  /** base64url (unpadded) SHA-256 of the exact body bytes. */
  body_sha256: string;
}
export const PUSH_JWT_TTL_S = 60;

const TERMINAL = new Set(['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED']);
/** Only loopback webhooks are ever dialled: a test agent must not post anywhere real. */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
/** Bound on tasks whose first notification replay mode remembers. */
const MAX_REMEMBERED = 1_000;

export interface PushSenderOptions {
  mode: PushMode;
  /** Add the Bearer JWT whatever the mode (`jwt` implies it); lets forge/replay carry one too. */
  jwt: boolean;
  /** `iss` of the JWT: the agent's base URL. */
  issuer: string;
  key: AgentSigningKey;
  log: TestLog;
  /** Per-POST timeout (default 5 s, like the SDK). */
  timeoutMs?: number;
}

/** One ready-to-send POST: identical bytes and headers when sent again. */
interface Prepared {
  url: string;
  headers: Record<string, string>;
  body: string;
  meta: Omit<LoggedPush, 'at' | 'send' | 'status' | 'error'>;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The last character changed, so the token is wrong but plausibly shaped. */
export function forgeToken(token: string): string {
  if (token === '') return 'forged';
  return token.slice(0, -1) + (token.endsWith('x') ? 'y' : 'x');
}

function taskIdOf(sr: StreamResponse): string {
  const p = sr.payload;
  if (!p) return '';
  return p.$case === 'task' ? p.value.id : p.value.taskId;
}

/** Payload case and task state, read from the serialised JSON so states are spec names. */
function summarise(body: string): { kind: string; state: string | undefined } {
  const json: unknown = JSON.parse(body);
  const [kind, value] = isRecord(json) ? (Object.entries(json)[0] ?? ['none', undefined]) : ['none', undefined];
  const status = isRecord(value) ? value.status : undefined;
  const state = isRecord(status) && typeof status.state === 'string' ? status.state : undefined;
  return { kind, state };
}

function isLoopback(url: string): boolean {
  try {
    const u = new URL(url);
    return (u.protocol === 'http:' || u.protocol === 'https:') && LOOPBACK.has(u.hostname);
  } catch {
    return false;
  }
}

export class TestPushSender implements PushNotificationSender {
  private readonly serializer = new V1PushNotificationSerializer();
  /** Per-task promise chain: the SDK calls send() fire-and-forget, we keep order per task. */
  private readonly chains = new Map<string, Promise<void>>();
  /** replay mode: each task's first notification, re-sent after its terminal one. */
  private readonly firsts = new Map<string, Prepared[]>();

  constructor(
    private readonly store: PushNotificationStore,
    private readonly opts: PushSenderOptions,
  ) {}

  async send(streamResponse: StreamResponse, context: ServerCallContext): Promise<void> {
    const taskId = taskIdOf(streamResponse);
    if (!taskId) return;
    const configs = await this.store.load(taskId, context);
    if (configs.length === 0) return;
    if (this.opts.mode === 'drop') {
      for (const _c of configs) this.opts.log.dropPush();
      return;
    }
    // Serialise now: the SDK may mutate the task after this call returns.
    const { body } = this.serializer.serialize(streamResponse);
    const last = this.chains.get(taskId) ?? Promise.resolve();
    const next = last.catch(() => undefined).then(() => this.dispatch(taskId, body, configs));
    this.chains.set(taskId, next);
    return next.finally(() => {
      if (this.chains.get(taskId) === next) this.chains.delete(taskId);
    });
  }

  private async dispatch(taskId: string, body: string, configs: TaskPushNotificationConfig[]): Promise<void> {
    const { kind, state } = summarise(body);
    const prepared = await Promise.all(configs.map((c) => this.prepare(c, taskId, body, kind, state)));
    await Promise.all(
      prepared.map(async (p) => {
        await this.post(p, 'event');
        if (this.opts.mode === 'replay') await this.post(p, 'duplicate');
      }),
    );
    if (this.opts.mode !== 'replay') return;
    if (!this.firsts.has(taskId)) {
      if (this.firsts.size >= MAX_REMEMBERED) this.firsts.delete(this.firsts.keys().next().value ?? '');
      this.firsts.set(taskId, prepared);
    }
    if (state !== undefined && TERMINAL.has(state)) {
      const first = this.firsts.get(taskId) ?? [];
      this.firsts.delete(taskId);
      await Promise.all(first.map((p) => this.post(p, 'replay-first')));
    }
  }

  private async prepare(config: TaskPushNotificationConfig, taskId: string, body: string, kind: string, state: string | undefined): Promise<Prepared> {
    const { mode } = this.opts;
    const sign = this.opts.jwt || mode === 'jwt';
    const forge = mode === 'forge';
    const headers: Record<string, string> = { 'Content-Type': 'application/a2a+json' };
    const auth = config.authentication;
    let tokenSent = false;
    if (!sign && auth?.scheme && auth.credentials) {
      // SDK precedence: `authentication` replaces the legacy token header.
      headers.Authorization = `${auth.scheme} ${forge ? forgeToken(auth.credentials) : auth.credentials}`;
    } else if (config.token || forge) {
      headers[TOKEN_HEADER] = forge ? forgeToken(config.token) : config.token;
      tokenSent = true;
    }
    if (sign) headers.Authorization = `Bearer ${await this.jwt(config.url, taskId, body)}`;
    return { url: config.url, headers, body, meta: { mode, url: config.url, taskId, kind, state, tokenSent, forgedToken: forge, jwt: sign } };
  }

  private jwt(aud: string, taskId: string, body: string): Promise<string> {
    const { key, issuer } = this.opts;
    const iat = Math.floor(Date.now() / 1000);
    const bodySha256 = createHash('sha256').update(body, 'utf8').digest('base64url');
    return new SignJWT({ task_id: taskId, body_sha256: bodySha256 })
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: PUSH_JWT_TYP })
      .setIssuer(issuer)
      .setAudience(aud)
      .setIssuedAt(iat)
      .setExpirationTime(iat + PUSH_JWT_TTL_S)
      .setJti(randomUUID())
      .sign(key.privateKey);
  }

  private async post(p: Prepared, send: LoggedPush['send']): Promise<void> {
    const entry = (status: number | null, error?: string): LoggedPush => ({
      at: new Date().toISOString(),
      ...p.meta,
      send,
      status,
      ...(error === undefined ? {} : { error }),
    });
    if (!isLoopback(p.url)) {
      this.opts.log.push(entry(null, 'refused: test agents only push to loopback URLs'));
      return;
    }
    try {
      const res = await fetch(p.url, {
        method: 'POST',
        headers: p.headers,
        body: p.body,
        redirect: 'manual', // never follow a webhook somewhere else
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 5_000),
      });
      await res.arrayBuffer().catch(() => undefined); // drain so the socket is reusable
      this.opts.log.push(entry(res.status));
    } catch (err) {
      this.opts.log.push(entry(null, err instanceof Error ? `${err.name}: ${err.message}` : String(err)));
    }
  }
}
