/**
 * RW-003 §4.3: "A card revision MUST NOT silently change agent_actor_ref;
 * identity rotation creates a new card or an explicit continuity attestation."
 *
 * The attestation is a detached JWS over the JCS bytes of a small statement
 * naming both actor refs. Policy: it must verify with one of the keys that
 * verified the previously accepted card of the same agent_card_id, and that
 * key must still be trusted now — whoever controlled the old identity vouches
 * for the new one.
 */
import { invalidRequest } from '../errors.ts';
import { canonicalBytes } from '../records/canonical.ts';
import { sameRevision, type ActorRef } from '../records/revision-ref.ts';
import { readProtectedHeader, signDetached, verifyDetached, type SigningAlg, type SigningKey } from '../records/signature.ts';
import type { ContinuityAttestation, Rw003CardParams } from './extension.ts';
import type { TrustStore } from './trust-store.ts';

/** What Baton remembers about the last card it accepted for one agent_card_id at one origin. */
export interface AcceptedCardMemory {
  agent_actor_ref: ActorRef;
  /** kids that verified that card. */
  kids: readonly string[];
  /** The attestation that allowed this actor to replace the previous one (recorded with the change). */
  continuity?: ContinuityAttestation;
}

/**
 * Injected memory of accepted cards. Production keeps it in the store
 * (card-history.ts): DESIGN "process memory is never authority", and a
 * restart must not forget which actor a card belonged to.
 */
export interface CardHistory {
  last(origin: string, agentCardId: string): AcceptedCardMemory | undefined | Promise<AcceptedCardMemory | undefined>;
  remember(origin: string, agentCardId: string, memory: AcceptedCardMemory): void | Promise<void>;
}

/** A process-local {@link CardHistory} (tests, and CLI verification of a single card). */
export function inMemoryCardHistory(): CardHistory {
  const map = new Map<string, AcceptedCardMemory>();
  const key = (o: string, id: string) => `${o}\u0000${id}`;
  return { last: (o, id) => map.get(key(o, id)), remember: (o, id, m) => void map.set(key(o, id), m) };
}

/** The exact bytes a continuity attestation signs. */
export function continuityStatementBytes(agentCardId: string, prior: ActorRef, next: ActorRef, attestedAt: string): Uint8Array {
  return canonicalBytes({
    type: 'rw003.agent_card.continuity',
    agent_card_id: agentCardId,
    prior_agent_actor_ref: prior,
    agent_actor_ref: next,
    attested_at: attestedAt,
  });
}

/** Signs a continuity attestation (used by the publisher when a source declares one). */
export async function signContinuity(
  input: { agentCardId: string; prior: ActorRef; next: ActorRef; attestedAt: string },
  key: { privateKey: SigningKey; alg: SigningAlg; kid: string },
): Promise<ContinuityAttestation> {
  const payload = continuityStatementBytes(input.agentCardId, input.prior, input.next, input.attestedAt);
  const attestation = await signDetached(payload, key.privateKey, { alg: key.alg, kid: key.kid });
  return { prior_agent_actor_ref: input.prior, attested_at: input.attestedAt, attestation };
}

/** Throws invalid_request unless `params` keeps the remembered actor ref or proves continuity. */
export async function assertActorContinuity(
  params: Rw003CardParams,
  previous: AcceptedCardMemory | undefined,
  deps: { trust: Pick<TrustStore, 'lookup'>; origin: string },
): Promise<void> {
  if (previous === undefined || sameRevision(previous.agent_actor_ref, params.agent_actor_ref)) return;
  const c = params.continuity;
  const details = { agent_card_id: params.agent_card_id };
  if (c === undefined) throw invalidRequest('agent_actor_ref changed without a continuity attestation', details);
  if (!sameRevision(c.prior_agent_actor_ref, previous.agent_actor_ref)) {
    throw invalidRequest('continuity attestation names a different prior actor', details);
  }
  const header = readProtectedHeader(c.attestation);
  if (!previous.kids.includes(header.kid)) throw invalidRequest('continuity attestation is not signed by a key of the prior card', details);
  const found = await deps.trust.lookup(deps.origin, header);
  if (!found.ok) throw invalidRequest('continuity attestation key is not trusted', { ...{}, ...details, reason: found.reason });
  const payload = continuityStatementBytes(params.agent_card_id, c.prior_agent_actor_ref, params.agent_actor_ref, c.attested_at);
  await verifyDetached(payload, c.attestation, found.key.key);
}
