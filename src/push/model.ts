/**
 * Push notification rules, free of I/O: what an integrator may register
 * (A2A v1.0 TaskPushNotificationConfig), what Baton shows back (never the
 * credentials), and how a failed delivery is retried.
 */
import { z } from 'zod';
import { redactedUrl } from './webhook-url.ts';
import { invalidRequest, type BatonError } from '../errors.ts';
import type { DeliveryRow, PushConfigRow } from '../store/port.ts';
import { isPurgedBody, PURGED_BODY_PREFIX } from '../store/push-sql.ts';

/** RFC 9110 token: the characters an auth-scheme may use. */
const TOKEN68 = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,32}$/;
/** Header values must not smuggle a line break or a control character into the request. */
const HEADER_SAFE = /^[\x20-\x7e]*$/;

export const ConfigId = z.string().regex(/^[A-Za-z0-9._-]{1,128}$/, 'config id: 1–128 of [A-Za-z0-9._-]');

/** What Create accepts, after the SDK's codec (absent strings arrive as ''). */
export const PushConfigInput = z.object({
  id: z.union([ConfigId, z.literal('')]).default(''),
  taskId: z.string().min(1).max(2048),
  url: z.string().min(1).max(2048),
  token: z.string().max(1024).regex(HEADER_SAFE, 'token must be printable ASCII').default(''),
  authentication: z
    .object({
      scheme: z.string().regex(TOKEN68, 'scheme must be an HTTP auth-scheme token'),
      credentials: z.string().min(1).max(4096).regex(HEADER_SAFE, 'credentials must be printable ASCII'),
    })
    .optional(),
});
export type PushConfigInput = z.infer<typeof PushConfigInput>;

/** What is kept sealed at rest. */
export const PushCredentials = z.strictObject({
  token: z.string().optional(),
  authentication: z.strictObject({ scheme: z.string(), credentials: z.string() }).optional(),
});
export type PushCredentials = z.infer<typeof PushCredentials>;

export function parseConfigInput(value: unknown): PushConfigInput {
  const parsed = PushConfigInput.safeParse(value);
  if (!parsed.success) throw invalidRequest('push notification config is malformed', { issues: parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.')}: ${i.message}`) });
  return parsed.data;
}

export function credentialsOf(input: PushConfigInput): PushCredentials | undefined {
  const creds: PushCredentials = {
    ...{}, ...(input.token ? { token: input.token } : {}),
    ...(input.authentication ? { authentication: input.authentication } : {}),
  };
  return creds.token || creds.authentication ? creds : undefined;
}

/** The AAD a row's sealed credentials are bound to: moving them to another row makes them unreadable. */
export const credentialContext = (taskId: string, configId: string) => `push-config\u0000${taskId}\u0000${configId}`;

/**
 * A config as Get/List return it (A2A v1.0 JSON): the token and credentials
 * are never returned, only whether they are set and which scheme is used;
 * the URL loses its query and userinfo, which may carry a token too.
 */
export function presentConfig(row: PushConfigRow, scheme: string | undefined): Record<string, unknown> {
  return {
    id: row.config_id,
    taskId: row.task_id,
    url: redactedUrl(row.url),
    token: '',
    ...(scheme ? { authentication: { scheme, credentials: '' } } : {}),
  };
}

export interface RetryPolicy {
  /** Tries before a delivery is dead-lettered. */
  maxAttempts: number;
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 8, baseMs: 1_000, maxMs: 300_000 };

/**
 * Delay before try `attempt + 1` after `attempt` failures: exponential with
 * "equal jitter" — at least half the exponential step, so retries really back
 * off, plus a random half so a fleet of failed deliveries does not retry in step.
 */
export function backoffMs(attempt: number, policy: Pick<RetryPolicy, 'baseMs' | 'maxMs'>, random: () => number = Math.random): number {
  const step = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, Math.min(attempt - 1, 30)));
  return Math.floor(step / 2 + random() * (step / 2));
}

export type DeliveryVerdict = { status: 'delivered' } | { status: 'pending'; delayMs: number; error: string } | { status: 'dead'; error: string };

/**
 * What one try's result means. 2xx delivers; 410 Gone and a refused
 * destination are final; anything else (5xx, 429, timeouts, redirects, which
 * are never followed) is retried until the policy's tries run out.
 */
export function judgeTry(result: { status: number } | { error: string; final: boolean }, attempt: number, policy: RetryPolicy, random?: () => number): DeliveryVerdict {
  if ('status' in result && result.status >= 200 && result.status < 300) return { status: 'delivered' };
  const error = 'status' in result ? `HTTP ${result.status}` : result.error;
  const final = 'status' in result ? result.status === 410 : result.final;
  if (final || attempt >= policy.maxAttempts) return { status: 'dead', error: final ? error : `${error} (gave up after ${attempt} tries)` };
  return { status: 'pending', delayMs: backoffMs(attempt, policy, random), error };
}

/** Why `requeue` left a delivery alone: not found, not dead, or its body purged by retention (never sent again). */
export function requeueRefused(id: string, d: DeliveryRow | undefined): BatonError {
  const delivery = id.slice(0, 128);
  if (!d) return invalidRequest('no such delivery', { delivery });
  if (isPurgedBody(d.body)) {
    return invalidRequest('delivery body was purged by retention; it cannot be sent again', { delivery, reason: 'purged', purge: d.body.slice(PURGED_BODY_PREFIX.length, PURGED_BODY_PREFIX.length + 128) });
  }
  return invalidRequest(`delivery is ${d.status}, not dead`, { delivery });
}
