/**
 * A2A v0.3 Agent Cards (`url` + `preferredTransport`, card-level
 * `protocolVersion`, `security`), read through the SDK's compatibility
 * layer into the v1.0 shape the rest of Baton works on. Only the typed view
 * is translated: signatures are always checked over the raw bytes as
 * received (canonical-card.ts keeps the v0.3-only members verbatim, so they
 * are covered too).
 */
import { AgentCard } from '@a2a-js/sdk';
import { isLegacyAgentCard, parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import { invalidRequest } from '../errors.ts';
import type { JsonValue } from '../records/strict-json.ts';

/** True for a card in the v0.3 shape (the SDK's own test). */
export function isLegacyCard(raw: JsonValue): boolean {
  return isLegacyAgentCard(raw);
}

/** The v1.0 view of a v0.3 card, for schema validation and reading; never for signature checks. */
export function v1ViewOf(raw: JsonValue): JsonValue {
  try {
    return AgentCard.toJSON(parseLegacyAgentCard(raw)) as JsonValue;
  } catch (cause) {
    throw invalidRequest('A2A v0.3 Agent Card cannot be read', { reason: cause instanceof Error ? cause.message.slice(0, 256) : 'malformed' });
  }
}
