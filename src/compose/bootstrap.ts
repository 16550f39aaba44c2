/**
 * What a gateway claims in its store before it serves: its identity (one per
 * gateway in a shared store) and the streams every fence is taken on.
 */
import type { delegateeOf } from '../gateway/identity.ts';
import { decideIdentity, GatewayIdentity } from '../keys/gateway-identity.ts';
import type { Store } from '../store/port.ts';

/** One identity per gateway in a shared store (src/keys/gateway-identity.ts); a node presenting another one refuses to start. */
export async function claimIdentity(store: Store, mine: GatewayIdentity): Promise<void> {
  const decide = (stored: string | undefined) => JSON.stringify(decideIdentity(stored === undefined ? undefined : GatewayIdentity.parse(JSON.parse(stored)), mine));
  await store.meta.claimIdentity(mine.gateway_id, decide, new Date().toISOString());
}

/** The space policy stream and Baton's own agent stream must be active before any fence can hold. */
export async function bootstrapStreams(store: Store, spaceId: string, gateway: ReturnType<typeof delegateeOf>, cardDigest: string): Promise<void> {
  await store.control.appendControl({
    event_type: 'baton.scope.lifecycle_changed',
    control_scope_ref: { space_id: spaceId, scope_kind: 'space', scope_id: spaceId },
    actor_ref: gateway.actor_ref,
    idempotency_key: `bootstrap:${gateway.actor_ref.object_id}`,
    payload: { lifecycle: 'active' },
  });
  await store.control.appendControl({
    event_type: 'rw003.agent_card.published',
    control_scope_ref: { space_id: spaceId, scope_kind: 'agent', scope_id: gateway.card_ref.object_id },
    actor_ref: gateway.actor_ref,
    idempotency_key: `verified:${cardDigest}`,
    payload: { card_ref: gateway.card_ref, form: 'public' },
  });
}
