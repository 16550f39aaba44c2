/**
 * One push notification as the integrator receives it: a v1.0
 * StreamResponse (`{task}`) with Baton's ids and projected outcome, whose
 * exact bytes are signed by Baton (detached JWS, RFC 7515 Appendix F) and
 * stored in the outbox, so every retry and duplicate is byte-identical
 * under the same idempotency id.
 */
import { createHash } from 'node:crypto';
import type { SealedRecord } from '../records/envelope.ts';
import { signDetached } from '../records/signature.ts';
import type { JsonValue } from '../records/strict-json.ts';
import type { Keyring } from '../keys/keyring.ts';
import type { AttemptBody } from '../gateway/attempt-record.ts';
import { presentTask } from '../gateway/present.ts';
import { placeholderTask } from '../gateway/wire.ts';
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

/** The same notification always gets the same id, whichever path enqueued it. */
export function deliveryIdOf(taskId: string, configId: string, revisionId: string): string {
  return `dlv_${createHash('sha256').update(`${taskId}\u0000${configId}\u0000${revisionId}`).digest('base64url').slice(0, 32)}`;
}

/**
 * The notification body for an attempt's closing revision. `verifiedTask`
 * is the read-back the verdict was based on, when this process has it; a
 * recovered notification carries the recorded projection without artifacts.
 */
export function notificationBody(closed: SealedRecord<AttemptBody>, verifiedTask?: JsonValue): Json {
  const body = closed.body;
  const task = verifiedTask && typeof verifiedTask === 'object' && !Array.isArray(verifiedTask) ? presentTask(verifiedTask, body, body.outcome) : placeholderTask(body);
  return { task };
}

export async function buildDelivery(
  closed: SealedRecord<AttemptBody>,
  config: PushConfigRow,
  keyring: Keyring,
  at: Date,
  verifiedTask?: JsonValue,
): Promise<DeliveryRow> {
  const deliveryId = deliveryIdOf(config.task_id, config.config_id, closed.revision_id);
  const body = JSON.stringify(notificationBody(closed, verifiedTask));
  const key = keyring.current('ES256', at);
  const sig = await signDetached(new TextEncoder().encode(body), key.privateKey, { alg: key.alg, kid: key.kid }, {
    [CLAIM_DELIVERY]: deliveryId,
    [CLAIM_AUDIENCE]: config.url,
    iat: Math.floor(at.getTime() / 1000),
  });
  const now = at.toISOString();
  return {
    delivery_id: deliveryId,
    task_id: config.task_id,
    config_id: config.config_id,
    revision_id: closed.revision_id,
    body,
    signature: `${sig.protected}..${sig.signature}`,
    status: 'pending',
    attempts: 0,
    next_at: now,
    lease_until: null,
    lease_owner: null,
    last_error: null,
    created_at: now,
    delivered_at: null,
  };
}
