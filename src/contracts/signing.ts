/**
 * Sealing and signing contracts. The signature is a detached JWS over the
 * JCS bytes of the whole envelope minus `signatures`, so it covers the
 * content digest, schema ref, record and revision ids, issuer, issued time
 * and prior revision ref (RW-003 §2, last paragraph).
 */
import { canonicalText, isCanonicalFrozen } from '../records/canonical.ts';
import { sealRecord, withSignatures } from '../records/envelope.ts';
import type { IdSource } from '../records/ids.ts';
import type { ActorRef, RevisionRef } from '../records/revision-ref.ts';
import { provenOn, readProtectedHeader, rememberProvenOn, signDetachedForRecord, verifyDetached, type DetachedSignature, type SigningAlg, type SigningKey, type VerifyKey } from '../records/signature.ts';
import type { Clock } from '../records/time.ts';
import { invalidRequest } from '../errors.ts';
import type { ContractBody, DelegationContract } from './model.ts';

/** The gateway's signing identity: key plus the issuer Actor it speaks for. */
export interface ContractSigner {
  actorRef: ActorRef;
  kid: string;
  alg: SigningAlg;
  key: SigningKey;
}

/** Finds the public key for `kid` of `issuer`; undefined when that issuer has no such key. */
export type ResolveSignerKey = (kid: string, issuer: ActorRef) => Promise<VerifyKey | undefined>;

/** The exact bytes a record signature covers. */
export function signingBytes(record: object): Uint8Array {
  const frozen = isCanonicalFrozen(record);
  let text = frozen ? signedTexts.get(record) : undefined;
  if (text === undefined) {
    const { signatures: _s, ...rest } = record as Record<string, unknown>;
    text = canonicalText(rest);
    if (frozen) signedTexts.set(record, text);
  }
  // Cached as text (immutable) and encoded per call, so no caller can alter another's bytes.
  return encoder.encode(text);
}

const encoder = new TextEncoder();
/** Signing text of deep-frozen records (sealed here or decoded), computed once each (issue #15). */
const signedTexts = new WeakMap<object, string>();

/**
 * An id source that hands out a pre-chosen delegation id, so the body can
 * repeat its own delegation_id and name its own control scope.
 */
function withRecordId(ids: IdSource, recordId: string): IdSource {
  return { next: (prefix) => (prefix === 'dlg' ? recordId : ids.next(prefix)) };
}

export interface SealContractInput {
  body: ContractBody;
  /** For a later revision of the same delegation (amendment, reassignment). */
  prior?: RevisionRef;
}

/** Seals and signs one contract revision. */
export async function sealContract(
  input: SealContractInput,
  deps: { ids: IdSource; clock: Clock; signer: ContractSigner },
): Promise<DelegationContract> {
  const common = { type: 'delegation_contract' as const, body: input.body, issuedBy: deps.signer.actorRef, lifecycle: 'issued' as const };
  const sealed = (
    input.prior
      ? sealRecord({ ...{}, ...common, prior: input.prior, recordId: input.body.delegation_id }, deps)
      : sealRecord(common, { clock: deps.clock, ids: withRecordId(deps.ids, input.body.delegation_id) })
  ) as unknown as DelegationContract;
  if (sealed.record_id !== input.body.delegation_id) throw new TypeError('sealed record id does not match the delegation id');
  // Not yet signed, so the sealed record's own text is the signing text (written once, issue #15).
  const text = canonicalText(sealed);
  const signature = signDetachedForRecord(encoder.encode(text), deps.signer.key, { alg: deps.signer.alg, kid: deps.signer.kid });
  const signed = withSignatures(sealed, [signature]);
  // Made with this key over these bytes: it verifies (the chain checks it on every call, issue #24). So the
  // signing text is not kept for it: that was a third copy of the contract's text per contract a call holds.
  rememberProvenOn(signed, 0, deps.signer.key);
  return signed;
}

/**
 * Verifies every signature on `record` against keys of its issuer. At least
 * one signature is required; any signature that fails rejects the record.
 */
export async function verifyRecordSignatures(
  record: { issued_by_actor_ref: ActorRef; signatures?: DetachedSignature[]; record_id: string },
  resolveSignerKey: ResolveSignerKey,
): Promise<void> {
  const signatures = record.signatures ?? [];
  if (signatures.length === 0) throw invalidRequest('record is not signed', { record_id: record.record_id });
  let bytes: Uint8Array | undefined;
  for (const [i, sig] of signatures.entries()) {
    // Header first: the alg allow-list is enforced before any key lookup.
    const { kid } = readProtectedHeader(sig);
    // The issuer must hold the key now, every time; only the proof over unchanged bytes is remembered.
    const key = await resolveSignerKey(kid, record.issued_by_actor_ref);
    if (!key) throw invalidRequest('record is signed by a key its issuer does not hold', { record_id: record.record_id, kid });
    if (provenOn(record, i, key)) continue;
    await verifyDetached((bytes ??= signingBytes(record)), sig, key);
    rememberProvenOn(record, i, key);
  }
}
