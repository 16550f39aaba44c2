/**
 * Verification of a remote Agent Card (A2A §8.4.3) over the RAW bytes that
 * were fetched: strict JSON (no duplicate keys), schema, no credentials, then
 * every signature against the trust store. Pure: keys come from an injected
 * lookup, time from an injected clock.
 *
 * Multiple-signature policy (A2A §8.4.3 "Multiple signatures MAY be present
 * to support key rotation"):
 * - a signature whose header breaks the alg allow-list fails the whole card;
 * - a signature whose kid is unknown, revoked, expired or only reachable via a
 *   non-allow-listed `jku` is skipped and recorded (rotation leaves such
 *   signatures behind);
 * - a signature that does NOT verify under a trusted, valid key fails the
 *   whole card: the bytes are not what that key's holder signed;
 * - at least one signature must verify.
 */
import { invalidRequest } from '../errors.ts';
import { freezeCanonical } from '../records/canonical.ts';
import { sha256Digest, type Digest } from '../records/digest.ts';
import { summariseIssues } from '../records/envelope.ts';
import { sameRevision, type ActorRef } from '../records/revision-ref.ts';
import { readProtectedHeader, verifyDetached, type DetachedSignature, type SigningAlg } from '../records/signature.ts';
import { parseStrictJson, type JsonValue } from '../records/strict-json.ts';
import { utc, type Clock, type UtcTime } from '../records/time.ts';
import { LooseAgentCard, type AgentCardJson } from './a2a-card.ts';
import { cardSigningBytes } from './canonical-card.ts';
import { isLegacyCard, v1ViewOf } from './legacy-card.ts';
import { assertActorContinuity, type CardHistory } from './continuity.ts';
import { readRw003Params, type Rw003CardParams } from './extension.ts';
import { assertNoSecrets } from './secrets.ts';
import type { KeySource, TrustStore } from './trust-store.ts';

/** Remote cards may be larger than a record, but not unboundedly. */
export const MAX_CARD_BYTES = 256 * 1024;

/** RW-003 §10.3: public and extended cards are separate observations. */
export type CardForm = 'public' | 'extended';

/** The verification record: which card form, exact digests, which keys. */
export interface CardVerification {
  form: CardForm;
  /** Where the bytes came from (URL after redirects, or a file path). */
  source: string;
  /** Origin whose trust applied. */
  origin: string;
  /** sha256 of the exact bytes received. */
  raw_digest: Digest;
  /** sha256 of the §8.4.1 canonical payload that the signatures cover. */
  payload_digest: Digest;
  verified_keys: Array<{ kid: string; alg: SigningAlg; thumbprint: string; key_source: KeySource; jku?: string }>;
  skipped_signatures: Array<{ index: number; kid: string; reason: string }>;
  verified_at: UtcTime;
  agent_card_id?: string;
  agent_actor_ref?: ActorRef;
  /** The parsed raw card (not a normalised copy). */
  card: AgentCardJson;
  rw003?: Rw003CardParams;
  /** False only for a card accepted unsigned because the operator allowed exactly that. */
  signed: boolean;
}

export interface VerifyCardInput {
  bytes: Uint8Array;
  origin: string;
  source: string;
  form?: CardForm;
  /** Accept a card without signatures (an operator's explicit, recorded choice); a present signature must still verify. */
  allowUnsigned?: boolean;
}

export interface VerifyCardDeps {
  trust: Pick<TrustStore, 'lookup'>;
  clock: Clock;
  history?: CardHistory;
  /** Remembers (payload digest, key, signature) triples already checked; skips repeat crypto. */
  verifiedSignatures?: { has(key: string): boolean; add(key: string): unknown };
  maxBytes?: number;
}

/** Verifies raw card bytes; throws invalid_request / limit_exceeded, never returns an unverified card. */
export async function verifyCardBytes(input: VerifyCardInput, deps: VerifyCardDeps): Promise<CardVerification> {
  const { parsed, payload, payloadDigest, rawDigest } = prepare(input.bytes, deps.maxBytes ?? MAX_CARD_BYTES);
  const signatures = parsed.data.signatures ?? [];
  if (signatures.length === 0) {
    if (!input.allowUnsigned) throw invalidRequest('Agent Card is unsigned');
    // Unsigned: nothing on it is evidence, so its RW-003 claims are not read as identity.
    return { ...{}, ...observation(input, rawDigest, payloadDigest, deps), verified_keys: [], skipped_signatures: [], card: parsed.data, signed: false };
  }
  const verified: CardVerification['verified_keys'] = [];
  const skipped: CardVerification['skipped_signatures'] = [];
  for (const [index, sig] of signatures.entries()) {
    const header = readProtectedHeader(sig);
    const found = await deps.trust.lookup(input.origin, header);
    if (!found.ok) {
      skipped.push({ index, kid: header.kid, reason: found.reason });
      continue;
    }
    await verifyOnce(payload, payloadDigest, sig, found.key, deps);
    verified.push({ kid: header.kid, alg: header.alg, thumbprint: found.key.thumbprint, key_source: found.source, ...(found.jku ? { jku: found.jku } : {}) });
  }
  if (verified.length === 0) {
    throw invalidRequest('no signature on the Agent Card verifies with a trusted key', { skipped: skipped.map((s) => s.reason) });
  }
  const rw003 = readRw003Params(parsed.data);
  if (rw003) await checkRw003(rw003, verified, input.origin, deps);
  return {
    ...{}, ...observation(input, rawDigest, payloadDigest, deps),
    verified_keys: verified,
    skipped_signatures: skipped,
    ...(rw003 ? { agent_card_id: rw003.agent_card_id, agent_actor_ref: rw003.agent_actor_ref, rw003 } : {}),
    card: parsed.data,
    signed: true,
  };
}

/** RW-003 §10.3: which form, from where, and the exact digests observed. */
function observation(input: VerifyCardInput, rawDigest: Digest, payloadDigest: Digest, deps: VerifyCardDeps) {
  return { form: input.form ?? 'public', source: input.source, origin: input.origin, raw_digest: rawDigest, payload_digest: payloadDigest, verified_at: utc(deps.clock.now()) };
}

interface Prepared {
  parsed: { data: AgentCardJson };
  payload: Uint8Array;
  payloadDigest: Digest;
  rawDigest: Digest;
  /** A private copy of the bytes prepared, to tell a buffer changed in place. */
  raw: Buffer;
}

/**
 * What depends on the bytes alone (parse, schema, secret scan, signing bytes,
 * digests), done once per byte buffer: the resolver re-verifies the same
 * cached buffer on every request while the card is fresh (issue #15). Keyed
 * by the buffer and checked against a copy of its contents, so a buffer
 * changed in place is prepared again. Trust lookups, signatures (memoised by
 * the caller), RW-003 claims and continuity still run on every call.
 */
const prepared = new WeakMap<Uint8Array, Prepared>();

function prepare(bytes: Uint8Array, maxBytes: number): Prepared {
  const hit = prepared.get(bytes);
  // The signing bytes are copied out: a Uint8Array cannot be frozen, and no caller may alter another's.
  // Compared byte for byte with a private copy (cheaper than hashing them again per request).
  if (hit && hit.raw.equals(bytes)) return { ...{}, ...hit, payload: hit.payload.slice() };
  const rawDigest = sha256Digest(bytes);
  const raw = parseStrictJson(bytes, { maxBytes });
  // A v0.3 card is validated (and read) in its v1.0 translation; its signatures cover the raw bytes.
  const parsed = LooseAgentCard.safeParse(isLegacyCard(raw) ? v1ViewOf(raw) : raw);
  if (!parsed.success) throw invalidRequest('Agent Card does not match the A2A v1.0 schema', { issues: summariseIssues(parsed.error) });
  assertNoSecrets(raw, 'Agent Card');
  const payload = cardSigningBytes(raw);
  const out: Prepared = { parsed: { data: freezeCanonical(parsed.data) }, payload, payloadDigest: sha256Digest(payload), rawDigest, raw: Buffer.from(bytes) };
  prepared.set(bytes, out);
  return out;
}

async function verifyOnce(
  payload: Uint8Array,
  payloadDigest: Digest,
  sig: DetachedSignature,
  key: { key: Parameters<typeof verifyDetached>[2]; thumbprint: string },
  deps: VerifyCardDeps,
): Promise<void> {
  const memo = `${payloadDigest}|${key.thumbprint}|${sig.protected}.${sig.signature}`;
  if (deps.verifiedSignatures?.has(memo)) return;
  await verifyDetached(payload, sig, key.key);
  deps.verifiedSignatures?.add(memo);
}

// RW-003 §4.1 signer: the keys that verified must be the ones the card declares,
// and §4.3: the actor identity must not change silently.
async function checkRw003(
  params: Rw003CardParams,
  verified: CardVerification['verified_keys'],
  origin: string,
  deps: VerifyCardDeps,
): Promise<void> {
  const now = deps.clock.now().getTime();
  for (const v of verified) {
    const declared = params.signer.keys.find((k) => k.key_id === v.kid && k.algorithm === v.alg);
    if (!declared) throw invalidRequest('signing key is not declared by the card signer (kid mismatch)', { kid: v.kid });
    // RW-003 §4.1 signer "validity window": the card itself says when its key may sign.
    if (Date.parse(declared.valid_from) > now || (declared.valid_until !== undefined && Date.parse(declared.valid_until) <= now)) {
      throw invalidRequest('card is signed by a key outside the validity window its signer declares', { kid: v.kid, reason: 'signer_key_not_valid' });
    }
  }
  const previous = await deps.history?.last(origin, params.agent_card_id);
  await assertActorContinuity(params, previous, { trust: deps.trust, origin });
  const kids = verified.map((v) => v.kid).sort();
  if (previous && sameRevision(previous.agent_actor_ref, params.agent_actor_ref) && sameKids(previous.kids, kids)) return;
  const changedActor = previous !== undefined && !sameRevision(previous.agent_actor_ref, params.agent_actor_ref);
  await deps.history?.remember(origin, params.agent_card_id, { agent_actor_ref: params.agent_actor_ref, kids, ...(changedActor && params.continuity ? { continuity: params.continuity } : {}) });
}

const sameKids = (a: readonly string[], b: readonly string[]) => a.length === b.length && [...a].sort().every((k, i) => k === b[i]);

/** Parses card JSON text or bytes strictly (duplicate keys refused) without verifying. */
export function parseCardJson(input: Uint8Array | string, maxBytes = MAX_CARD_BYTES): JsonValue {
  return parseStrictJson(input, { maxBytes });
}
