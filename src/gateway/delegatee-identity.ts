/**
 * Who a delegatee is, for delegation (RW-003 §4, §5.1 delegatee_agent_ref,
 * accountable_operator_ref): read from its verified card where the card says
 * it, declared by Baton's operator where it does not.
 *
 * RW-003 does not require the agent to carry the RW-003 extension: a card is
 * an observation, and claims without evidence are self-asserted (§4.1). Most
 * A2A agents carry no extension, so the operator declares, per delegatee,
 * the facts Baton cannot read from the card — actor ref, accountable operator
 * (with its resolution and evidence), lifecycle — as operator-attested facts
 * under the operator's own principal. The rule:
 * - a signed card's own extension wins wherever it is present;
 * - otherwise the operator's facts apply, recorded as `operator_attested`
 *   with `attested_by`;
 * - an unsigned card's claims are never evidence: it needs the operator's
 *   facts, and is usable only where the operator allowed unsigned cards.
 * The observation (form, digests, signed or not, identity source) is recorded
 * with every announcement and attempt (RW-003 §10.3).
 */
import { z } from 'zod';
import { Rw003CardParams } from '../cards/extension.ts';
import type { CardVerification } from '../cards/verify.ts';
import type { CardObservation } from '../attempts/record.ts';
import type { DelegateeOption } from '../contracts/presets.ts';
import { unsupported } from '../errors.ts';
import { digestOf } from '../records/digest.ts';
import { Identifier } from '../records/ids.ts';
import { cardRefOf, operatorRefOf } from './identity.ts';

const fields = Rw003CardParams.shape;

/** The RW-003 facts an operator declares for a delegatee whose card lacks them (field names as RW-003 spells them). */
export const OperatorFacts = z.strictObject({
  /** The operator principal attesting these facts (RW-003 §2 PrincipalRef; never an email or secret). */
  attested_by: fields.accountable_operator.shape.operator_principal_ref,
  /** Stable card identity; defaults to `card_<delegatee id>`. */
  agent_card_id: Identifier.optional(),
  agent_actor_ref: fields.agent_actor_ref,
  accountable_operator: fields.accountable_operator,
  lifecycle: fields.lifecycle.default({ state: 'active' }),
});
export type OperatorFacts = z.infer<typeof OperatorFacts>;

export type { CardObservation };

export interface DelegateeIdentity {
  option: DelegateeOption;
  lifecycle: { agent_card_id: string; state: string };
  observation: CardObservation;
}

/** The identity delegation binds for one verified (or explicitly allowed unsigned) card. */
export function identityOf(delegateeId: string, v: CardVerification, facts: OperatorFacts | undefined): DelegateeIdentity {
  const seen = { form: v.form, source: v.source.slice(0, 2048), raw_digest: v.raw_digest, payload_digest: v.payload_digest, signed: v.signed };
  if (v.signed && v.rw003) {
    const p = v.rw003;
    return {
      option: { card_ref: cardRefOf(p, v.payload_digest), actor_ref: p.agent_actor_ref, operator_ref: operatorRefOf(p) },
      lifecycle: { agent_card_id: p.agent_card_id, state: p.lifecycle.state },
      observation: { ...{}, ...seen, identity: 'card_extension' },
    };
  }
  if (!facts) {
    throw unsupported(
      v.signed
        ? 'delegatee card carries no RW-003 identity: declare its facts in delegatees[].rw003'
        : 'an unsigned card is no evidence of identity: declare its facts in delegatees[].rw003',
      // `reason` lets `baton config check` point at delegatees[].rw003.
      { delegatee: delegateeId, reason: 'no_identity' },
    );
  }
  const cardId = facts.agent_card_id ?? `card_${delegateeId.replace(/-/g, '_')}`;
  const factsDigest = digestOf(facts);
  // A changed card or changed facts is a new card revision: its id names both.
  const revision = `rev_${digestOf({ card: v.payload_digest, facts: factsDigest }).slice(7, 31)}`;
  const operator = operatorRefOf({ accountable_operator: facts.accountable_operator } as Rw003CardParams);
  return {
    option: {
      card_ref: { object_id: cardId, revision_id: revision, content_digest: v.payload_digest },
      actor_ref: facts.agent_actor_ref,
      // The operator reference names the attestation too: the same operator attested by someone else is another fact.
      operator_ref: { ...{}, ...operator, content_digest: digestOf({ accountable_operator: facts.accountable_operator, attested_by: facts.attested_by }) },
    },
    lifecycle: { agent_card_id: cardId, state: facts.lifecycle.state },
    observation: { ...{}, ...seen, identity: 'operator_attested', attested_by: facts.attested_by, facts_digest: factsDigest },
  };
}
