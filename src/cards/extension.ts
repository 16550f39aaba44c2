/**
 * The RW-003 §4 Agent Card fields, carried as a declared A2A extension
 * (`capabilities.extensions[].params`, A2A §4.4.4 AgentExtension) so stock A2A
 * clients still read the card and ignore what they do not understand.
 *
 * Field names stay snake_case as RW-003 spells them; the surrounding A2A card
 * is camelCase ProtoJSON. Optional arrays, when present, must be non-empty:
 * an empty array means nothing, and the SDK's canonicaliser strips empties
 * inside `params`, which would break signature interop (see canonical-card.ts).
 */
import { z } from 'zod';
import { invalidRequest } from '../errors.ts';
import { freezeCanonical, isCanonicalFrozen } from '../records/canonical.ts';
import { summariseIssues } from '../records/envelope.ts';
import { Identifier } from '../records/ids.ts';
import { ActorRef, RevisionRef } from '../records/revision-ref.ts';
import { schemaRefFor } from '../records/schema-ref.ts';
import { DetachedSignature, ALLOWED_ALGS } from '../records/signature.ts';
import { UtcTime } from '../records/time.ts';
import type { AgentCardJson, AgentExtensionJson } from './a2a-card.ts';

/** Versioned extension URI; a new RW-003 schema version gets a new URI. */
export const RW003_CARD_EXTENSION_URI = 'urn:rw-agent-delegation:0.1.1:agent-card';
export const RW003_CARD_SCHEMA_REF = schemaRefFor('agent_card');

const text = (max = 2048) => z.string().min(1).max(max);
const list = <T extends z.ZodType>(item: T, max = 64) => z.array(item).min(1).max(max).optional();

/** RW-003 §2 Duration: bounded, explicit unit. */
export const Duration = z.strictObject({ value: z.number().int().positive().max(1e9), unit: z.enum(['ms', 's', 'min', 'h', 'd']) });
/** RW-003 §2 MoneyLimit: amount as a decimal string (no float rounding) plus ISO 4217 currency. */
export const MoneyLimit = z.strictObject({ amount: z.string().regex(/^\d{1,15}(\.\d{1,6})?$/), currency: z.string().regex(/^[A-Z]{3}$/) });

/** RW-003 §2 PrincipalRef: an accountable principal, never an email address or secret. */
const PrincipalRef = text().refine((s) => !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(s), 'a principal ref is not an email address');

export const EVIDENCE_KINDS = ['self_asserted', 'operator_attested', 'third_party_attested', 'observed_result'] as const;
export const CARD_LIFECYCLE_STATES = ['proposed', 'active', 'suspended', 'revoked', 'retired', 'superseded'] as const;
export type CardLifecycleState = (typeof CARD_LIFECYCLE_STATES)[number];

const CapabilityClaim = z
  .strictObject({
    claim_id: Identifier,
    capability: text(256),
    scope: z.array(text(512)).min(1).max(64),
    limitations: list(text(1024)),
    evidence_kind: z.enum(EVIDENCE_KINDS),
    evidence_refs: list(text()),
    issuer: text(),
    assessed_at: UtcTime,
    expires_at: UtcTime.optional(),
  })
  // RW-003 §4.1: "Claims without evidence remain self-asserted."
  .refine((c) => c.evidence_kind === 'self_asserted' || c.evidence_refs !== undefined, {
    message: 'a claim that is not self_asserted must reference its evidence',
    path: ['evidence_refs'],
  });

const SupportedAdapter = z.strictObject({
  protocol: text(64),
  version: text(32),
  binding: text(64).optional(),
  endpoint_ref: text(),
  // Method names only (RW-003 §4.1 "No credential values"); secrets.ts checks values.
  authentication_methods: z.array(text(128)).min(1).max(16),
  feature_flags: list(text(128)),
});

const SignerKey = z.strictObject({
  algorithm: z.enum(ALLOWED_ALGS),
  key_id: text(256),
  valid_from: UtcTime,
  valid_until: UtcTime.optional(),
});

const Lifecycle = z
  .strictObject({ state: z.enum(CARD_LIFECYCLE_STATES), reason: text(1024).optional(), effective_at: UtcTime.optional() })
  // RW-003 §4.1: "plus reason and effective time where non-active".
  .refine((l) => l.state === 'active' || (l.reason !== undefined && l.effective_at !== undefined), {
    message: 'a non-active lifecycle needs reason and effective_at',
  });

/** RW-003 §4.3 continuity attestation for an agent_actor_ref change. */
export const ContinuityAttestation = z.strictObject({
  prior_agent_actor_ref: ActorRef,
  attested_at: UtcTime,
  attestation: DetachedSignature,
});
export type ContinuityAttestation = z.infer<typeof ContinuityAttestation>;

/** RW-003 §4.1 required and §4.2 optional fields, plus the §2 signature coverage fields. */
export const Rw003CardParams = z.strictObject({
  schema_ref: z.literal(RW003_CARD_SCHEMA_REF),
  agent_card_id: Identifier,
  revision_id: Identifier,
  prior_revision_ref: RevisionRef.optional(),
  issued_at: UtcTime,
  agent_actor_ref: ActorRef,
  display_name: text(256),
  accountable_operator: z.strictObject({
    operator_principal_ref: PrincipalRef,
    resolution: z.enum(['verified', 'declared', 'unresolved', 'not_applicable_by_policy']),
    evidence_ref: text(),
    effective_from: UtcTime,
  }),
  capability_claims: z.array(CapabilityClaim).min(1).max(256),
  supported_adapters: z.array(SupportedAdapter).min(1).max(32),
  availability: z.strictObject({
    status: z.enum(['available', 'degraded', 'unavailable', 'maintenance']),
    service_window: text(256).optional(),
    wake_mode: z.enum(['always_on', 'on_demand', 'scheduled']).optional(),
    expected_response: Duration.optional(),
    observed_at: UtcTime,
  }),
  resource_limits: z.strictObject({
    max_context_tokens: z.number().int().positive().optional(),
    max_concurrency: z.number().int().positive().max(1_000_000),
    max_runtime: Duration,
    compute_class: text(64).optional(),
    rate: z.strictObject({ count: z.number().int().positive(), per: Duration }).optional(),
    max_spend: MoneyLimit.optional(),
  }),
  trust_context: z.strictObject({
    issuers: list(text()),
    attestations: list(text()),
    review_history_refs: list(text()),
    deployment_boundary: text(),
    known_limitations: list(text(1024)),
    policy_domains: list(text(256)),
  }),
  signer: z.strictObject({
    signing_identity_ref: text(),
    verification_method_ref: text(),
    keys: z.array(SignerKey).min(1).max(8),
  }),
  lifecycle: Lifecycle,
  continuity: ContinuityAttestation.optional(),
  languages: list(text(35)),
  modalities: list(text(128)),
  locality: text(256).optional(),
  data_residency_claims: list(text(256)),
  pricing_or_cost_model: text(1024).optional(),
  health_endpoint_ref: text().optional(),
  status_endpoint_ref: text().optional(),
  policy_profiles: list(text(256)),
  sample_tasks: list(text(2048)),
  contact_route: text().optional(),
});
export type Rw003CardParams = z.infer<typeof Rw003CardParams>;

/** The extension entries declaring RW-003; more than one is ambiguous and refused. */
export function rw003ExtensionOf(card: AgentCardJson): AgentExtensionJson | undefined {
  const found = (card.capabilities.extensions ?? []).filter((e) => e.uri === RW003_CARD_EXTENSION_URI);
  if (found.length > 1) throw invalidRequest('card declares the RW-003 extension more than once');
  return found[0];
}

/** Parses the RW-003 params of a card, or `undefined` when the card does not declare the extension. */
export function readRw003Params(card: AgentCardJson): Rw003CardParams | undefined {
  // A deep-frozen card (a verified card's bytes are parsed once, src/cards/verify.ts) cannot change: read once (issue #15).
  const frozen = isCanonicalFrozen(card);
  if (frozen && paramsRead.has(card)) return paramsRead.get(card)!.params;
  const ext = rw003ExtensionOf(card);
  let params: Rw003CardParams | undefined;
  if (ext !== undefined) {
    const parsed = Rw003CardParams.safeParse(ext.params ?? {});
    if (!parsed.success) throw invalidRequest('RW-003 card extension is malformed', { issues: summariseIssues(parsed.error) });
    params = parsed.data;
  }
  // Shared from then on, so frozen as well: no reader can change another's.
  if (frozen) paramsRead.set(card, { params: params && freezeCanonical(params) });
  return params;
}

/** RW-003 params of deep-frozen cards (boxed: a card without the extension has none, and that is remembered too). */
const paramsRead = new WeakMap<object, { params: Rw003CardParams | undefined }>();
