/**
 * RW-003 §5.1 Delegation Contract with the ADR-0014 logical authority record
 * fields. The contract travels in the RW-003 §3 envelope: `record_id` is the
 * delegation_id (repeated in the body and checked equal), `revision_id` the
 * exact contract revision, `prior_revision_ref` the amended revision.
 *
 * ADR-0014 → contract: taskId = delegation_id; taskAuthorityRef = the exact
 * RevisionRef; issuerBinding/issuanceEvidence = issuer_binding;
 * principalBinding = principal_binding; actorBinding = delegatee_agent_ref;
 * ownerNamespace/accessDomain/ownerConfigRevision = owner;
 * parent/root/delegationDepth = lineage; delegationAllowed/Limit =
 * subdelegation_policy; ledgerRef/budgetCeilings as named. taskEpoch is the
 * delegation control-stream head (RW-003 §1.2), owned by src/control/.
 */
import { z } from 'zod';
import { invalidRequest, limitExceeded } from '../errors.ts';
import { openEnvelope, summariseIssues, type LifecycleAssertion } from '../records/envelope.ts';
import type { Digest } from '../records/digest.ts';
import type { DetachedSignature } from '../records/signature.ts';
import type { UtcTime } from '../records/time.ts';
import { Identifier } from '../records/ids.ts';
import { RECORD_LIMITS } from '../records/limits.ts';
import { ActorRef, RevisionRef } from '../records/revision-ref.ts';
import { recordTypeOf } from '../records/schema-ref.ts';
import { canonicalBytes, canonicalText, freezeCanonical, isCanonicalFrozen } from '../records/canonical.ts';
import { AttestationLink } from './attestation-link.ts';
import { tierProblems } from './autonomy.ts';
import { checkTermsBounds, Terms } from './terms.ts';

/** ADR-0014 bounds on lineage: 4 hops and 32 descendants per root by default. */
export const DELEGATION_DEFAULTS = Object.freeze({ maxDepth: 4, maxDescendants: 32 });

/** Exact Agent Card and agent Actor revisions of the delegatee (RW-003 §5.1). */
export const DelegateeRef = z.strictObject({ card_ref: RevisionRef, actor_ref: ActorRef });
export type DelegateeRef = z.infer<typeof DelegateeRef>;

/** One verifiable outcome: bounded text for people plus a machine type. */
export const Objective = z.strictObject({ text: z.string().min(1), type: Identifier });

export const ISSUANCE_PATHS = ['owner_preset', 'human_grant', 'registered_issuer'] as const;
export const IssuerBinding = z.strictObject({
  path: z.enum(ISSUANCE_PATHS),
  issuer_id: Identifier,
  /** The preset revision or the exact grant record the authority came from. */
  evidence_ref: RevisionRef,
});
export type IssuerBinding = z.infer<typeof IssuerBinding>;

/** ADR-0014 principalBinding: whose rights constrain the work. */
export const PrincipalBinding = z.strictObject({
  subject_id: Identifier,
  kind: z.enum(['local', 'authenticated']),
  auth_context_ref: Identifier.optional(),
});
export type PrincipalBinding = z.infer<typeof PrincipalBinding>;

/** Owner namespace, policy domain, control-plane space and issuance config revision. */
export const OwnerBinding = z.strictObject({
  namespace: Identifier,
  access_domain: Identifier,
  space_id: Identifier,
  config_revision: Identifier,
});
export type OwnerBinding = z.infer<typeof OwnerBinding>;

const LineageBounds = { root_max_depth: z.number().int().min(0).max(16), root_max_descendants: z.number().int().min(0).max(100_000) };
/** Protected lineage with a tagged absent parent for a root (ADR-0014). */
export const Lineage = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('root'), depth: z.literal(0), ...LineageBounds }),
  z.strictObject({ kind: z.literal('child'), parent_ref: RevisionRef, root_ref: RevisionRef, depth: z.number().int().min(1).max(16), ...LineageBounds }),
]);
export type Lineage = z.infer<typeof Lineage>;

/**
 * The contract body. Loose at the top level so unknown members survive
 * forwarding (RW-003 §3); every authority decision reads only the typed
 * fields below, so an unknown member such as `scope_override` has no effect.
 */
export const ContractBody = z.looseObject({
  delegation_id: Identifier,
  delegator_actor_ref: ActorRef,
  delegatee_agent_ref: DelegateeRef,
  accountable_operator_ref: RevisionRef,
  objective: Objective,
  /** Display/audit text only; never evaluated as policy (ADR-0014 "purpose"). */
  purpose: z.string().optional(),
  input_revisions: z.array(RevisionRef).max(256),
  issuer_binding: IssuerBinding,
  principal_binding: PrincipalBinding,
  owner: OwnerBinding,
  lineage: Lineage,
  ledger_ref: Identifier,
  /** Attestation links of every ancestor, root first; empty for a root. */
  ancestry: z.array(AttestationLink).max(17),
  ...Terms.shape,
});
export type ContractBody = z.infer<typeof ContractBody>;

/**
 * A sealed contract revision. Spelled out rather than `SealedRecord<ContractBody>`
 * because `Omit` over the loose Envelope's index signature drops the named
 * envelope members from that type.
 */
export interface DelegationContract {
  [unknownMember: string]: unknown;
  record_id: string;
  revision_id: string;
  schema_ref: string;
  prior_revision_ref?: RevisionRef;
  issued_by_actor_ref: ActorRef;
  issued_at: UtcTime;
  content_digest: Digest;
  signatures?: DetachedSignature[];
  lifecycle_assertion: LifecycleAssertion;
  body: ContractBody;
}

/** The Terms view of a body (the dimensions attenuation compares). */
export function termsOf(body: ContractBody): Terms {
  const { scope, limits, budget_ceilings, autonomy, human_authorities, reviewers, consent_refs } = body;
  const { verification, monitoring, subdelegation_policy, retry_policy, revocation, control_scopes, constraints } = body;
  return {
    scope, limits, budget_ceilings, autonomy, human_authorities, reviewers, consent_refs,
    verification, monitoring, subdelegation_policy, retry_policy, revocation, control_scopes, constraints,
  };
}

/** Internal consistency every contract must have, whoever issued it. */
export function validateBody(body: ContractBody): void {
  checkTermsBounds(termsOf(body), body.purpose);
  if (Buffer.byteLength(body.objective.text, 'utf8') > RECORD_LIMITS.maxPurposeBytes) {
    throw limitExceeded(`objective text exceeds ${RECORD_LIMITS.maxPurposeBytes} bytes`, { bound: 'objective' });
  }
  const problems = tierProblems(body.autonomy, body.human_authorities);
  if (problems.length > 0) throw invalidRequest('autonomy tier lacks its required gates', { problems });
  const { depth, root_max_depth } = body.lineage;
  if (depth > root_max_depth || body.subdelegation_policy.max_remaining_depth > root_max_depth - depth) {
    throw limitExceeded('delegation depth exceeds the root maximum', { bound: 'depth', depth, root_max_depth });
  }
}

/**
 * Parses an untrusted sealed contract: envelope digest, schema, body shape,
 * body/envelope id agreement, record size and internal consistency.
 * Signatures are checked by the attestation chain, not here.
 */
export function parseContract(value: unknown): DelegationContract {
  // A deep-frozen input cannot change, so its parse is done once (issue #15).
  if (!isCanonicalFrozen(value)) return parseContractOnce(value);
  let contract = parsedContracts.get(value);
  if (contract === undefined) {
    contract = freezeCanonical(parseContractOnce(value));
    parsedContracts.set(value, contract);
    parsedContracts.set(contract, contract);
  }
  return contract;
}

/** Contracts parsed from deep-frozen values (sealed here or decoded from the store). */
const parsedContracts = new WeakMap<object, DelegationContract>();

/**
 * A contract this process has just issued or minted (src/contracts/issuance.ts,
 * mint.ts) counts as parsed: its envelope was built by `sealRecord`, its body
 * built in-process from parsed config and requests as a typed ContractBody
 * and checked by `validateBody` before it was signed. Issue #15: zod re-read
 * each one right after minting. The checks that are not about shape run here;
 * anything read from the store, the network or a caller is still parsed by
 * `parseContract`, and a contract sealed from any other body (e.g. a test
 * forging one) is never passed here.
 */
export function mintedContract(contract: DelegationContract): DelegationContract {
  if (!isCanonicalFrozen(contract)) throw new TypeError('a minted contract is sealed (deep-frozen)');
  if (contract.body.delegation_id !== contract.record_id) throw new TypeError('sealed record id does not match the delegation id');
  if (Buffer.byteLength(canonicalText(contract), 'utf8') > RECORD_LIMITS.maxRecordBytes) {
    throw limitExceeded('contract exceeds the 64 KiB record bound', { bound: 'record_bytes' });
  }
  parsedContracts.set(contract, contract);
  return contract;
}

function parseContractOnce(value: unknown): DelegationContract {
  const envelope = openEnvelope(value);
  if (recordTypeOf(envelope.schema_ref) !== 'delegation_contract') {
    throw invalidRequest('record is not a delegation contract', { record_id: envelope.record_id });
  }
  if (canonicalBytes(envelope).byteLength > RECORD_LIMITS.maxRecordBytes) {
    throw limitExceeded('contract exceeds the 64 KiB record bound', { bound: 'record_bytes' });
  }
  const parsed = ContractBody.safeParse(envelope.body);
  if (!parsed.success) throw invalidRequest('contract body is malformed', { issues: summariseIssues(parsed.error) });
  if (parsed.data.delegation_id !== envelope.record_id) {
    throw invalidRequest('contract delegation_id does not match its record id', { record_id: envelope.record_id });
  }
  validateBody(parsed.data);
  // Nested objects are strict, so the parsed body is canonically identical to
  // the digested one; signatures verify over either.
  return { ...{}, ...envelope, body: parsed.data } as DelegationContract;
}
