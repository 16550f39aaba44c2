/**
 * One hop of a DelegationAttestationChain (RW-003 §8): the exact contract
 * revision, the delegatee card and actor revisions, the operator, and the
 * signer evidence of that contract. A child contract embeds the links of all
 * its ancestors (root first) so the chain it was minted under is signed with it.
 */
import { z } from 'zod';
import { sha256Digest, Digest } from '../records/digest.ts';
import { Identifier } from '../records/ids.ts';
import { ActorRef, RevisionRef } from '../records/revision-ref.ts';
import { readProtectedHeader, ALLOWED_ALGS } from '../records/signature.ts';
import { UtcTime } from '../records/time.ts';
import { refOf } from '../records/envelope.ts';
import type { DelegationContract } from './model.ts';

export const SignerEvidence = z.strictObject({
  kid: z.string().min(1).max(256),
  alg: z.enum(ALLOWED_ALGS),
  /** sha256 of the JWS signature value: pins which signature was checked. */
  signature_digest: Digest,
});
export type SignerEvidence = z.infer<typeof SignerEvidence>;

export const AttestationLink = z.strictObject({
  contract_ref: RevisionRef,
  delegation_id: Identifier,
  delegator_actor_ref: ActorRef,
  delegatee_card_ref: RevisionRef,
  delegatee_actor_ref: ActorRef,
  operator_ref: RevisionRef,
  issuer_actor_ref: ActorRef,
  issued_at: UtcTime,
  signers: z.array(SignerEvidence).min(1).max(8),
});
export type AttestationLink = z.infer<typeof AttestationLink>;

/** RW-003 §8 DelegationAttestationChain, ordered root → leaf. */
export interface DelegationAttestationChain {
  root_ref: RevisionRef;
  leaf_ref: RevisionRef;
  links: AttestationLink[];
}

/** The link describing one signed contract. */
export function linkOf(contract: DelegationContract): AttestationLink {
  const body = contract.body;
  return {
    contract_ref: refOf(contract),
    delegation_id: body.delegation_id,
    delegator_actor_ref: body.delegator_actor_ref,
    delegatee_card_ref: body.delegatee_agent_ref.card_ref,
    delegatee_actor_ref: body.delegatee_agent_ref.actor_ref,
    operator_ref: body.accountable_operator_ref,
    issuer_actor_ref: contract.issued_by_actor_ref,
    issued_at: contract.issued_at,
    signers: (contract.signatures ?? []).map((sig) => {
      const header = readProtectedHeader(sig);
      return { kid: header.kid, alg: header.alg, signature_digest: sha256Digest(sig.signature) };
    }),
  };
}
