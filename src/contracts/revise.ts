/**
 * A new revision of an existing delegation (RW-003 §1 "amendment …
 * reassignment … append new records"; §11.4). Only the delegator may revise;
 * the revision keeps delegation_id, lineage, issuer, subject, domain and
 * ledger, names the replaced revision as prior, and must be the same or
 * narrower on every dimension. A reassignment also swaps the delegatee.
 * Once stored, the old revision is no longer the head, so any effect or child
 * still bound to it fails admission with context_invalidated.
 */
import { z } from 'zod';
import { invalidRequest } from '../errors.ts';
import { refOf, summariseIssues } from '../records/envelope.ts';
import type { IdSource } from '../records/ids.ts';
import { ActorRef, RevisionRef, sameRevision } from '../records/revision-ref.ts';
import type { Clock } from '../records/time.ts';
import type { EvaluatedChain } from './admission.ts';
import { attenuate, attenuationDenied } from './attenuation.ts';
import { buildChain } from './attestation-chain.ts';
import { ownScopes } from './control-scopes.ts';
import type { IssuedContract } from './issuance.ts';
import { compareHop } from './lineage.ts';
import { termsOf, validateBody, type ContractBody } from './model.ts';
import { checkRegistered, type ScopeRegistry } from './scope.ts';
import { sealContract, type ContractSigner } from './signing.ts';
import { TermsRequest } from './terms.ts';

export const ReviseRequest = z.strictObject({
  /** Present for a reassignment (RW-003 §11.4); absent for an amendment. */
  delegatee: z.strictObject({ card_ref: RevisionRef, actor_ref: ActorRef, operator_ref: RevisionRef }).optional(),
  terms: TermsRequest.optional(),
});
export type ReviseRequest = z.infer<typeof ReviseRequest>;

export interface ReviseDeps {
  clock: Clock;
  ids: IdSource;
  signer: ContractSigner;
  registry: ScopeRegistry;
}

/** Appends a same-or-narrower revision of `current.leaf`. */
export async function reviseContract(current: EvaluatedChain, raw: unknown, actor: ActorRef, deps: ReviseDeps): Promise<IssuedContract> {
  const parsed = ReviseRequest.safeParse(raw);
  if (!parsed.success) throw invalidRequest('revision request is malformed', { issues: summariseIssues(parsed.error) });
  const old = current.leaf;
  if (!sameRevision(actor, old.body.delegator_actor_ref)) throw invalidRequest('only the delegator may revise a delegation');
  const result = attenuate(termsOf(old.body), parsed.data.terms ?? {}, 'same');
  if (!result.ok) throw attenuationDenied(result.failures);
  const d = parsed.data.delegatee;
  const body: ContractBody = {
    ...old.body,
    ...result.terms,
    ...(d ? { delegatee_agent_ref: { card_ref: d.card_ref, actor_ref: d.actor_ref }, accountable_operator_ref: d.operator_ref } : {}),
  };
  body.control_scopes = ownScopes(body.owner.space_id, body.delegation_id, body.delegatee_agent_ref.card_ref.object_id, body.control_scopes);
  const parent = current.contracts[current.contracts.length - 2];
  if (parent) {
    // A reassigned child must still be a valid hop under its (unchanged) parent.
    const failures = compareHop({ body: parent.body, ref: refOf(parent) }, body);
    if (failures.length > 0) throw attenuationDenied(failures);
  }
  checkRegistered(body.scope, deps.registry);
  validateBody(body);
  const contract = await sealContract({ body, prior: refOf(old) }, deps);
  return { contract, chain: buildChain([...current.contracts.slice(0, -1), contract]) };
}
