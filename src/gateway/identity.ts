/**
 * Exact identities for delegation, derived from verified Agent Cards
 * (RW-003 §5.1: delegator/delegatee resolve to exact card and Actor
 * revisions; §8: bind the child agent Actor and its accountable operator).
 * These read a card's own RW-003 extension; a card without one is bound
 * through the operator's attested facts instead (delegatee-identity.ts).
 */
import type { Rw003CardParams } from '../cards/extension.ts';
import type { DelegateeOption } from '../contracts/presets.ts';
import { unsupported } from '../errors.ts';
import { digestOf, type Digest } from '../records/digest.ts';
import type { RevisionRef } from '../records/revision-ref.ts';

/** The exact card revision: its RW-003 ids plus the digest its signatures cover. */
export function cardRefOf(params: Rw003CardParams, payloadDigest: Digest): RevisionRef {
  return { object_id: params.agent_card_id, revision_id: params.revision_id, content_digest: payloadDigest };
}

/** The accountable operator as an exact reference to what the card asserted. */
export function operatorRefOf(params: Rw003CardParams): RevisionRef {
  const op = params.accountable_operator;
  return { object_id: op.operator_principal_ref, revision_id: `from_${op.effective_from.replace(/[^0-9]/g, '')}`, content_digest: digestOf(op) };
}

/** A delegatee option from a verified card, or `unsupported` when the card cannot bind an Actor. */
export function delegateeOf(params: Rw003CardParams | undefined, payloadDigest: Digest, source: string): DelegateeOption {
  if (!params) throw unsupported('delegatee card carries no RW-003 identity; cannot bind an accountable Actor', { source: source.slice(0, 512) });
  return { card_ref: cardRefOf(params, payloadDigest), actor_ref: params.agent_actor_ref, operator_ref: operatorRefOf(params) };
}

