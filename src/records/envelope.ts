/**
 * RW-003 §3 common immutable envelope. A record is sealed once: its
 * content_digest covers the canonical bytes of everything except the digest
 * and the signature, so unknown fields are covered too (RW-003 §3: "Unknown
 * fields MUST be retained when forwarding") while authority code reads only
 * the typed fields it knows and therefore cannot be widened by them.
 */
import { z } from 'zod';
import { invalidRequest } from '../errors.ts';
import { canonicalCopy, canonicalText, freezeCanonical, frozenCopy, isCanonicalFrozen } from './canonical.ts';
import { Digest, digestOf, sha256Digest } from './digest.ts';
import { Identifier, type IdSource } from './ids.ts';
import { ActorRef, RevisionRef } from './revision-ref.ts';
import { recordTypeOf, SchemaRef, schemaRefFor, type RecordType } from './schema-ref.ts';
import { DetachedSignature } from './signature.ts';
import { UtcTime, utc, type Clock } from './time.ts';

export const LifecycleAssertion = z.enum([
  'proposed',
  'active',
  'issued',
  'suspended',
  'revoked',
  'retired',
  'superseded',
  'expired',
  'recorded',
]);
export type LifecycleAssertion = z.infer<typeof LifecycleAssertion>;

const EnvelopeFields = z.strictObject({
  record_id: Identifier,
  revision_id: Identifier,
  schema_ref: SchemaRef,
  prior_revision_ref: RevisionRef.optional(),
  issued_by_actor_ref: ActorRef,
  issued_at: UtcTime,
  content_digest: Digest,
  signatures: z.array(DetachedSignature).max(8).optional(),
  lifecycle_assertion: LifecycleAssertion,
  body: z.record(z.string(), z.unknown()),
});

/** Envelope fields; `.loose()` keeps unknown members so they survive forwarding. */
export const Envelope = EnvelopeFields.loose();
export type Envelope = z.infer<typeof Envelope>;

/** An envelope whose body has been parsed to a known type. */
export type SealedRecord<B> = Omit<z.infer<typeof EnvelopeFields>, 'body'> & { body: B };

export interface SealInput<B> {
  type: RecordType;
  body: B;
  issuedBy: ActorRef;
  lifecycle: LifecycleAssertion;
  /** The revision this one replaces; absent only for a record's first revision. */
  prior?: RevisionRef;
  /** Reuse an existing record id for a new revision of the same object. */
  recordId?: string;
}

/** Creates a new immutable revision and computes its content digest. */
export function sealRecord<B extends Record<string, unknown>>(
  input: SealInput<B>,
  deps: { ids: IdSource; clock: Clock },
): SealedRecord<B> {
  if (input.recordId !== undefined && input.prior === undefined) {
    throw invalidRequest('a later revision must name its prior revision');
  }
  // Sealed means immutable (RW-003 §3): frozen, so its canonical bytes and
  // digest are computed once however often it is stored, signed or checked.
  // Copied (the caller's body stays its own), frozen and written in one pass
  // before the digest is taken, so the text written for the digest is the one
  // every later write of the record reuses (issue #15: it was written twice).
  const unsigned = canonicalCopy({
    record_id: input.recordId ?? deps.ids.next(prefixOf(input.type)),
    revision_id: deps.ids.next('rev'),
    schema_ref: schemaRefFor(input.type),
    ...(input.prior ? { prior_revision_ref: input.prior } : {}),
    issued_by_actor_ref: input.issuedBy,
    issued_at: utc(deps.clock.now()),
    lifecycle_assertion: input.lifecycle,
    body: input.body,
  });
  const content_digest = sha256Digest(canonicalText(unsigned));
  const sealed = freezeCanonical({ ...{}, ...unsigned, content_digest }); // a fresh object over deep-frozen members: frozen as it is
  contentDigests.set(sealed, content_digest);
  return sealed as SealedRecord<B>;
}

/**
 * `record` with `signatures` in place of any it had, deep-frozen. Signatures
 * are outside the content digest (RW-003 §3), so a known digest of `record`
 * is the signed copy's too and is not computed again.
 */
export function withSignatures<R extends object>(record: R, signatures: readonly DetachedSignature[]): R & { signatures: DetachedSignature[] } {
  const signed = frozenCopy({ ...{}, ...record, signatures: [...signatures] });
  const known = isCanonicalFrozen(record) ? contentDigests.get(record) : undefined;
  if (known !== undefined) contentDigests.set(signed, known);
  return signed;
}

/** Content digests of deep-frozen records, computed once each (issue #15). */
const contentDigests = new WeakMap<object, Digest>();

/** The digest a record must carry: canonical bytes without digest and signatures. */
export function computeContentDigest(record: Record<string, unknown>): Digest {
  const frozen = isCanonicalFrozen(record);
  if (frozen) {
    const known = contentDigests.get(record);
    if (known !== undefined) return known;
  }
  const { content_digest: _d, signatures: _s, ...rest } = record;
  const digest = digestOf(rest);
  if (frozen) contentDigests.set(record, digest);
  return digest;
}

/**
 * Parses an untrusted envelope: shape, known schema (else `unsupported`) and a
 * content digest that matches its bytes (else `invalid_request`).
 */
export function openEnvelope(value: unknown): Envelope {
  const parsed = Envelope.safeParse(value);
  if (!parsed.success) throw invalidRequest('record envelope is malformed', { issues: summariseIssues(parsed.error) });
  recordTypeOf(parsed.data.schema_ref);
  if (computeContentDigest(parsed.data) !== parsed.data.content_digest) {
    throw invalidRequest('record content digest does not match its bytes', { record_id: parsed.data.record_id });
  }
  return parsed.data;
}

/** The RevisionRef that names this exact record revision. */
export function refOf(record: Pick<Envelope, 'record_id' | 'revision_id' | 'content_digest'>): RevisionRef {
  return { object_id: record.record_id, revision_id: record.revision_id, content_digest: record.content_digest };
}

const PREFIXES: Record<RecordType, string> = {
  agent_card: 'card',
  delegation_contract: 'dlg',
  permission_decision: 'pd',
  execution_attempt: 'att',
  delegation_checkpoint: 'cp',
  delegation_attestation: 'dat',
  verification_receipt: 'vr',
  control_event: 'evt',
  grant: 'grant',
  escalation: 'esc',
  task_input: 'in',
  retention_purge: 'rp',
  approval_request: 'apr',
  authority_decision: 'ad',
};
function prefixOf(type: RecordType): string {
  return PREFIXES[type];
}

/** Path + message pairs, without the offending values (they may be secrets). */
export function summariseIssues(error: z.ZodError): Array<{ path: string; message: string }> {
  return error.issues.slice(0, 20).map((i) => ({ path: i.path.join('.'), message: i.message }));
}
