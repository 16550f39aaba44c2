/**
 * Test delegatees publish what a real partner organisation would: an A2A
 * card carrying the RW-003 identity extension, signed (JWS over JCS) with a
 * key generated at start-up, and that key's JWKS. Baton's e2e config pins
 * the JWKS for the agent's origin, as an operator would.
 */
import { exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { RW003_CARD_EXTENSION_URI, RW003_CARD_SCHEMA_REF } from '../../src/cards/extension.ts';
import { signCard } from '../../src/cards/signer.ts';
import { digestOf } from '../../src/records/digest.ts';
import type { JsonValue } from '../../src/records/strict-json.ts';

type Json = { [key: string]: JsonValue };

/** The private half of the card key, so the agent can sign other things (push JWTs) under the same JWKS. */
export interface AgentSigningKey {
  kid: string;
  alg: 'ES256';
  privateKey: CryptoKey;
}

export interface SignedCard {
  card: Json;
  jwks: { keys: JWK[] };
  /** The key that signed `card`; its public half is `jwks.keys[0]` (same `kid`). */
  signingKey: AgentSigningKey;
}

/**
 * What the card carries: the RW-003 extension signed (`rw003`), no extension
 * but signed (`plain`: a stock A2A agent), or no extension and no signature
 * (`unsigned`).
 */
export type CardKind = 'rw003' | 'plain' | 'unsigned';

/** Adds the RW-003 extension for agent `name` (unless `kind` says otherwise) and signs the card with a fresh ES256 key. */
export async function signAgentCard(card: Json, name: string, baseUrl: string, kind: CardKind = 'rw003'): Promise<SignedCard> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const kid = `${name}-es256`;
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const params: Json = {
    schema_ref: RW003_CARD_SCHEMA_REF,
    agent_card_id: `card_${name}`,
    revision_id: 'rev_1',
    issued_at: now,
    agent_actor_ref: { object_id: `actor_${name}`, revision_id: 'rev_1', content_digest: digestOf({ actor: name }) },
    display_name: name,
    accountable_operator: { operator_principal_ref: `principal_${name}_ops`, resolution: 'verified', evidence_ref: 'e2e', effective_from: now },
    capability_claims: [
      { claim_id: 'claim_reverse', capability: 'text.reverse', scope: ['text'], evidence_kind: 'self_asserted', evidence_refs: ['e2e_self_assertion'], issuer: `principal_${name}_ops`, assessed_at: now },
    ],
    supported_adapters: [{ protocol: 'a2a', version: '1.0', binding: 'JSONRPC', endpoint_ref: `${baseUrl}/a2a/jsonrpc`, authentication_methods: ['none'] }],
    availability: { status: 'available', observed_at: now },
    resource_limits: { max_concurrency: 8, max_runtime: { value: 60, unit: 's' } },
    trust_context: { deployment_boundary: 'loopback e2e' },
    signer: { signing_identity_ref: `principal_${name}_ops`, verification_method_ref: `${baseUrl}/.well-known/jwks.json`, keys: [{ algorithm: 'ES256', key_id: kid, valid_from: now }] },
    lifecycle: { state: 'active' },
  };
  const caps = (card.capabilities ?? {}) as Json;
  const extensions = [...((caps.extensions as JsonValue[] | undefined) ?? []), { uri: RW003_CARD_EXTENSION_URI, description: 'RW-003 card fields', params }];
  const withExt: Json = kind === 'rw003' ? { ...card, capabilities: { ...caps, extensions } } : card;
  const signingKey: AgentSigningKey = { kid, alg: 'ES256', privateKey };
  if (kind === 'unsigned') return { card: withExt, jwks: { keys: [jwk] }, signingKey };
  const signed = await signCard(withExt, [{ kid, alg: 'ES256', privateKey }]);
  return { card: signed, jwks: { keys: [jwk] }, signingKey };
}
