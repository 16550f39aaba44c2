/**
 * From a card source to the unsigned public and extended cards: placeholder
 * substitution, the publisher-owned RW-003 fields (schema_ref, revision_id,
 * issued_at, signer keys, continuity), then strict validation of both forms.
 * A card Baton would publish but could not verify itself never leaves here.
 */
import { invalidRequest } from '../errors.ts';
import { canonicalText } from '../records/canonical.ts';
import { sha256Digest } from '../records/digest.ts';
import { summariseIssues } from '../records/envelope.ts';
import type { JsonValue } from '../records/strict-json.ts';
import { utc } from '../records/time.ts';
import { StrictAgentCard, type AgentCardJson } from './a2a-card.ts';
import { signContinuity } from './continuity.ts';
import { RW003_CARD_EXTENSION_URI, RW003_CARD_SCHEMA_REF, readRw003Params, type Rw003CardParams } from './extension.ts';
import { assertNoSecrets } from './secrets.ts';
import type { CardSigningKey } from './signer.ts';
import type { CardSource } from './source.ts';

type JsonObject = { [key: string]: JsonValue };

export interface BuildContext {
  publicUrl?: string;
  jwksUrl?: string;
  /** Keys that will sign; listed in RW-003 `signer.keys`. */
  signingKeys: ReadonlyArray<CardSigningKey & { createdAt: string; notAfter?: string }>;
}

export interface BuiltCards {
  publicCard: JsonObject;
  extendedCard?: JsonObject;
  params: Rw003CardParams;
}

/** Builds and validates the unsigned card forms of one source. */
export async function buildCards(source: CardSource, ctx: BuildContext): Promise<BuiltCards> {
  const card = substitute(structuredClone(source.card), ctx.publicUrl, source.file) as JsonObject;
  const capabilities = asObject(card.capabilities, 'capabilities');
  if (capabilities.extendedAgentCard === true && source.extended === undefined) {
    throw invalidRequest('card declares extendedAgentCard but its source has no extended section', { slug: source.slug });
  }
  if (source.extended) capabilities.extendedAgentCard = true;
  const ext = findExtension(capabilities, source.slug);
  const params = asObject(ext.params ?? {}, 'RW-003 params');
  ext.params = await completeParams(params, source, ctx);
  const publicCard = validate(card, source.slug, 'public');
  const extendedCard = source.extended ? validate(extend(card, source, ctx), source.slug, 'extended') : undefined;
  return { publicCard, extendedCard, params: readRw003Params(publicCard as AgentCardJson)! };
}

async function completeParams(params: JsonObject, source: CardSource, ctx: BuildContext): Promise<JsonObject> {
  const signerIn = asObject(params.signer ?? {}, 'signer');
  const keys = ctx.signingKeys.map((k) => ({
    algorithm: k.alg,
    key_id: k.kid,
    valid_from: k.createdAt,
    ...(k.notAfter ? { valid_until: k.notAfter } : {}),
  }));
  const out: JsonObject = {
    ...{}, ...params,
    schema_ref: params.schema_ref ?? RW003_CARD_SCHEMA_REF,
    issued_at: params.issued_at ?? defaultIssuedAt(source, ctx),
    lifecycle: params.lifecycle ?? { state: 'active' },
    signer: { ...{}, ...signerIn, ...(ctx.jwksUrl && signerIn.verification_method_ref === undefined ? { verification_method_ref: ctx.jwksUrl } : {}), keys },
  };
  // Stable across restarts, new whenever content or the signer set changes.
  out.revision_id ??= `rev_${sha256Digest(canonicalText({ card: source.card, keys })).slice(7, 33)}`;
  if (source.continuity) {
    const key = ctx.signingKeys[0];
    if (!key) throw new TypeError('no signing key available for a continuity attestation');
    const next = out.agent_actor_ref as unknown as Rw003CardParams['agent_actor_ref'];
    const attestation = await signContinuity(
      { agentCardId: String(out.agent_card_id), prior: source.continuity.prior_agent_actor_ref, next, attestedAt: String(out.issued_at) },
      key,
    );
    out.continuity = attestation as unknown as JsonValue;
  }
  return out;
}

// Without an explicit issued_at: the later of the source edit and the newest signing key.
function defaultIssuedAt(source: CardSource, ctx: BuildContext): string {
  const times = [source.modifiedAt.getTime(), ...ctx.signingKeys.map((k) => Date.parse(k.createdAt)).filter((t) => !Number.isNaN(t))];
  return utc(new Date(Math.floor(Math.max(...times) / 1000) * 1000));
}

function extend(card: JsonObject, source: CardSource, ctx: BuildContext): JsonObject {
  const extended = structuredClone(card);
  const more = substitute(structuredClone(source.extended ?? {}), ctx.publicUrl, source.file) as NonNullable<CardSource['extended']>;
  if (more.description) extended.description = more.description;
  if (more.skills) extended.skills = [...(extended.skills as JsonValue[]), ...(more.skills as JsonValue[])];
  if (more.extension_params) {
    const ext = findExtension(asObject(extended.capabilities, 'capabilities'), source.slug);
    ext.params = { ...{}, ...asObject(ext.params ?? {}, 'RW-003 params'), ...(more.extension_params as JsonObject) };
  }
  return extended;
}

function validate(card: JsonObject, slug: string, form: string): JsonObject {
  assertNoSecrets(card, `${form} card ${slug}`);
  const parsed = StrictAgentCard.safeParse(card);
  if (!parsed.success) throw invalidRequest(`${form} card is not a valid A2A v1.0 Agent Card`, { slug, issues: summariseIssues(parsed.error) });
  readRw003Params(parsed.data);
  return card;
}

function findExtension(capabilities: JsonObject, slug: string): JsonObject {
  const list = Array.isArray(capabilities.extensions) ? capabilities.extensions : [];
  const found = list.filter((e): e is JsonObject => typeof e === 'object' && e !== null && !Array.isArray(e) && e.uri === RW003_CARD_EXTENSION_URI);
  if (found.length !== 1) throw invalidRequest('a Baton card declares the RW-003 extension exactly once', { slug, uri: RW003_CARD_EXTENSION_URI });
  return found[0]!;
}

function asObject(v: unknown, what: string): JsonObject {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalidRequest(`${what} must be an object`);
  return v as JsonObject;
}

// `{publicUrl}` in any string becomes the configured public base URL (no trailing slash).
function substitute(value: unknown, publicUrl: string | undefined, file: string): unknown {
  if (typeof value === 'string') {
    if (!value.includes('{publicUrl}')) return value;
    if (publicUrl === undefined) throw new TypeError(`${file} uses {publicUrl} but publicUrl is not configured`);
    return value.replaceAll('{publicUrl}', publicUrl.replace(/\/+$/, ''));
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, publicUrl, file));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, publicUrl, file)]));
  }
  return value;
}
