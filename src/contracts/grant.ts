/**
 * Grant records: the exact human grant (ADR-0014 "a trusted interaction with
 * a person authorized to grant the requested scope") or an assertion from a
 * registered external issuer. Either way it is a sealed, signed `grant`
 * record naming the actions, resources, lifetime and limits being approved,
 * whose rights apply (subject) and who may use it (grantee). Confirming an
 * ordinary dialog is not a grant; the record is.
 */
import { z } from 'zod';
import { contextInvalidated, invalidRequest } from '../errors.ts';
import { openEnvelope, refOf, summariseIssues, type Envelope } from '../records/envelope.ts';
import { Identifier } from '../records/ids.ts';
import { ActorRef, sameRevision, type RevisionRef } from '../records/revision-ref.ts';
import { recordTypeOf } from '../records/schema-ref.ts';
import { UtcTime, type Clock } from '../records/time.ts';
import { OwnerBinding, PrincipalBinding } from './model.ts';
import { CeilingTerms, DelegateeOption } from './presets.ts';
import { verifyRecordSignatures, type ResolveSignerKey } from './signing.ts';

export const Grantor = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('human'), principal_id: Identifier, actor_ref: ActorRef }),
  z.strictObject({ kind: z.literal('registered_issuer'), issuer_id: Identifier }),
]);

export const GrantBody = z.strictObject({
  grantor: Grantor,
  subject: PrincipalBinding,
  /** The only actor that may issue a contract from this grant. */
  grantee_actor_ref: ActorRef,
  owner: OwnerBinding,
  eligible_delegatees: z.array(DelegateeOption).min(1).max(64),
  objective_types: z.array(Identifier).min(1).max(64),
  /** The grant's own horizon; the contract's not_after is never later. */
  not_after: UtcTime,
  terms: CeilingTerms,
});
export type GrantBody = z.infer<typeof GrantBody>;

export interface GrantRecord {
  envelope: Envelope;
  body: GrantBody;
  ref: RevisionRef;
}

/** A registered external authority (ADR-0014 "explicitly registered external authority"). */
export interface RegisteredIssuer {
  issuer_id: string;
  actor_ref: RevisionRef;
}

/** Trusted state needed to accept a grant. */
export interface GrantDeps {
  clock: Clock;
  resolveSignerKey: ResolveSignerKey;
  issuers: ReadonlyMap<string, RegisteredIssuer>;
  /** Actors whose signature records a human grant interaction (the core's recorder). */
  humanGrantRecorders: readonly RevisionRef[];
}

/**
 * Opens and checks a grant: exact reference, digest, schema, signature by the
 * right party, and not expired. Unknown issuer or a signature by the wrong
 * party is invalid_request; an expired grant is context_invalidated.
 */
export async function acceptGrant(raw: unknown, wanted: RevisionRef, deps: GrantDeps): Promise<GrantRecord> {
  const envelope = openEnvelope(raw);
  if (recordTypeOf(envelope.schema_ref) !== 'grant') throw invalidRequest('referenced record is not a grant');
  const ref = refOf(envelope);
  if (!sameRevision(ref, wanted)) throw invalidRequest('grant does not match the referenced revision');
  const parsed = GrantBody.safeParse(envelope.body);
  if (!parsed.success) throw invalidRequest('grant body is malformed', { issues: summariseIssues(parsed.error) });
  checkGrantor(parsed.data, envelope.issued_by_actor_ref, deps);
  await verifyRecordSignatures(envelope, deps.resolveSignerKey);
  if (Date.parse(parsed.data.not_after) <= deps.clock.now().getTime()) {
    throw contextInvalidated('grant has expired', { reason: 'expired', grant_id: envelope.record_id });
  }
  return { envelope, body: parsed.data, ref };
}

function checkGrantor(body: GrantBody, signer: RevisionRef, deps: GrantDeps): void {
  if (body.grantor.kind === 'registered_issuer') {
    const issuer = deps.issuers.get(body.grantor.issuer_id);
    if (!issuer) throw invalidRequest('grant names an unknown issuer', { issuer_id: body.grantor.issuer_id.slice(0, 256) });
    if (!sameRevision(issuer.actor_ref, signer)) throw invalidRequest('grant is not issued by its registered issuer');
    return;
  }
  if (!deps.humanGrantRecorders.some((r) => sameRevision(r, signer))) {
    throw invalidRequest('human grant was not recorded by a trusted grant interaction');
  }
}
