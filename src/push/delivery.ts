/**
 * One push notification as the integrator receives it: a v1.0
 * StreamResponse (`{task}`) with Baton's ids and projected outcome. The
 * outbox stores the body's exact bytes under a stable idempotency id, so
 * every retry and duplicate carries the same id and the same body bytes;
 * the detached JWS over those bytes (RFC 7515 Appendix F) is made fresh at
 * each try, with the current key, the current time and the webhook's
 * current URL, so a retry after a long outage or a key rotation still
 * verifies within a receiver's clock window.
 */
import { createHash } from 'node:crypto';
import type { SealedRecord } from '../records/envelope.ts';
import { signDetached } from '../records/signature.ts';
import type { JsonValue } from '../records/strict-json.ts';
import type { Keyring } from '../keys/keyring.ts';
import type { AttemptBody } from '../attempts/record.ts';
import { presentTask, withClosingRevision } from '../gateway/present.ts';
import { presentAttempt } from '../gateway/path/present-attempt.ts';
import type { DeliveryRow, PushConfigRow } from '../store/port.ts';

type Json = { [key: string]: JsonValue };

/** Request headers of a delivery; documented for integrators in the README. */
export const DELIVERY_HEADERS = {
  id: 'baton-delivery-id',
  signature: 'baton-signature',
} as const;

/** Protected-header members binding a signature to one delivery and one webhook (no replay elsewhere). */
export const CLAIM_DELIVERY = 'baton_delivery';
export const CLAIM_AUDIENCE = 'baton_aud';

/** What names a config's registration: the same (task, config id) registered again is a new generation. */
export type ConfigGeneration = Pick<PushConfigRow, 'task_id' | 'config_id' | 'created_at'>;

/**
 * The same notification always gets the same id, whichever path enqueued
 * it. A registration's generation (its `created_at`, which every upsert
 * refreshes) is part of it, so a config re-registered with a new URL, or
 * deleted and created again under the same id, gets its own delivery
 * instead of colliding with the earlier registration's.
 */
export function deliveryIdOf(config: ConfigGeneration, revisionId: string): string {
  const material = [config.task_id, config.config_id, config.created_at, revisionId].join('\u0000');
  return `dlv_${createHash('sha256').update(material).digest('base64url').slice(0, 32)}`;
}

/** True when `d` was enqueued for `config`'s current registration (not an earlier one of the same id). */
export function isForGeneration(d: Pick<DeliveryRow, 'delivery_id' | 'revision_id'>, config: ConfigGeneration): boolean {
  return deliveryIdOf(config, d.revision_id) === d.delivery_id;
}

/**
 * The notification body for an attempt's closing revision. `verifiedTask`
 * is the read-back the verdict was based on, when this process has it; a
 * recovered notification carries the recorded projection without artifacts.
 * The outcome metadata also names the closing revision (`revisionId`) and
 * when it was recorded (`closedAt`), so an integrator that receives a
 * later, reconciled outcome for the same task (under another delivery id)
 * can tell which one supersedes which (revision ids are opaque, not ordered).
 */
export function notificationBody(closed: SealedRecord<AttemptBody>, verifiedTask?: JsonValue): Json {
  const body = closed.body;
  const task = verifiedTask && typeof verifiedTask === 'object' && !Array.isArray(verifiedTask) ? presentTask(verifiedTask, body, body.outcome) : presentAttempt(body);
  return { task: withClosingRevision(task, closed) };
}

export function buildDelivery(closed: SealedRecord<AttemptBody>, config: ConfigGeneration, at: Date, gateway: string, verifiedTask?: JsonValue): DeliveryRow {
  return outboxDelivery(config, closed.revision_id, notificationBody(closed, verifiedTask), at, gateway);
}

/**
 * Any outbox delivery: the body's exact bytes under a stable id for this
 * registration, owned by the enqueuing `gateway` (only its outbox sends it).
 * Signed when sent, not here.
 */
export function outboxDelivery(config: ConfigGeneration, revisionId: string, payload: Json, at: Date, gateway: string): DeliveryRow {
  const now = at.toISOString();
  return {
    delivery_id: deliveryIdOf(config, revisionId),
    task_id: config.task_id,
    config_id: config.config_id,
    revision_id: revisionId,
    body: JSON.stringify(payload),
    status: 'pending',
    attempts: 0,
    next_at: now,
    lease_until: null,
    lease_owner: null,
    last_error: null,
    created_at: now,
    delivered_at: null,
    gateway_id: gateway,
  };
}

/**
 * The `Baton-Signature` of one try: a detached JWS (`protected..signature`)
 * over the stored body bytes, with the keyring's current key at `at`, `iat`
 * = `at`, and `baton_aud` = the URL this try is sent to.
 */
export async function signDelivery(d: Pick<DeliveryRow, 'delivery_id' | 'body'>, url: string, keyring: Keyring, at: Date): Promise<string> {
  const key = keyring.current('ES256', at);
  const sig = await signDetached(new TextEncoder().encode(d.body), key.privateKey, { alg: key.alg, kid: key.kid }, {
    [CLAIM_DELIVERY]: d.delivery_id,
    [CLAIM_AUDIENCE]: url,
    iat: Math.floor(at.getTime() / 1000),
  });
  return `${sig.protected}..${sig.signature}`;
}
