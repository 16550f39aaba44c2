/**
 * The A2A §8.4.1 signing payload of an Agent Card: the card minus
 * `signatures`, with proto3 implicit-presence fields dropped when they hold
 * their default value, REQUIRED and `optional` fields kept exactly as given,
 * then RFC 8785 (JCS).
 *
 * The field table below mirrors specification/a2a.proto field by field. It is
 * deliberately not the SDK's approach (round-trip through generated types
 * and strip every empty value): that drops REQUIRED empty fields such as
 * `description: ""` and `skills: []`, rewrites extension `params`, and
 * silently removes fields it does not know — so its payload disagrees with the
 * spec's own worked example. Unknown members are kept here, hence covered by
 * the signature (RW-003 §3: unknown fields are retained, never widened).
 */
import { canonicalText } from '../records/canonical.ts';
import { invalidRequest } from '../errors.ts';
import type { JsonValue } from '../records/strict-json.ts';

/**
 * How a field behaves under §8.4.1:
 * - `keep`: REQUIRED, `optional`, or message-typed (presence tracked): always kept;
 * - `implicit`: proto3 scalar/repeated/map without presence: dropped at default;
 * - `struct`: google.protobuf.Struct, kept verbatim (its values have no defaults);
 * - a nested descriptor (or `[descriptor]` for repeated messages, `{map}` for maps).
 */
type Rule = 'keep' | 'implicit' | 'struct' | Descriptor | { each: Descriptor; implicit: boolean } | { map: Descriptor; implicit: boolean };
interface Descriptor {
  readonly [field: string]: Rule;
}

const StringList: Descriptor = { list: 'implicit' };
const SecurityRequirement: Descriptor = { schemes: { map: StringList, implicit: true } };
const flow = (required: string[], implicit: string[]): Descriptor =>
  Object.fromEntries([...required.map((f) => [f, 'keep']), ...implicit.map((f) => [f, 'implicit'])]);
const OAuthFlows: Descriptor = {
  authorizationCode: flow(['authorizationUrl', 'tokenUrl', 'scopes'], ['refreshUrl', 'pkceRequired']),
  clientCredentials: flow(['tokenUrl', 'scopes'], ['refreshUrl']),
  deviceCode: flow(['deviceAuthorizationUrl', 'tokenUrl', 'scopes'], ['refreshUrl']),
  implicit: flow([], ['authorizationUrl', 'refreshUrl', 'scopes']),
  password: flow([], ['tokenUrl', 'refreshUrl', 'scopes']),
};
const SecurityScheme: Descriptor = {
  apiKeySecurityScheme: flow(['location', 'name'], ['description']),
  httpAuthSecurityScheme: flow(['scheme'], ['description', 'bearerFormat']),
  oauth2SecurityScheme: { description: 'implicit', flows: OAuthFlows, oauth2MetadataUrl: 'implicit' },
  openIdConnectSecurityScheme: flow(['openIdConnectUrl'], ['description']),
  mtlsSecurityScheme: flow([], ['description']),
};
const AgentExtension: Descriptor = { uri: 'implicit', description: 'implicit', required: 'implicit', params: 'struct' };
const AgentSkill: Descriptor = {
  ...{}, ...flow(['id', 'name', 'description', 'tags'], ['examples', 'inputModes', 'outputModes']),
  securityRequirements: { each: SecurityRequirement, implicit: true },
};
const AgentInterface: Descriptor = flow(['url', 'protocolBinding', 'protocolVersion'], ['tenant']);

/** specification/a2a.proto `message AgentCard`, `signatures` handled separately. */
export const AGENT_CARD_FIELDS: Descriptor = {
  name: 'keep',
  description: 'keep',
  supportedInterfaces: { each: AgentInterface, implicit: false },
  provider: flow(['url', 'organization'], []),
  version: 'keep',
  documentationUrl: 'keep',
  capabilities: {
    streaming: 'keep',
    pushNotifications: 'keep',
    extensions: { each: AgentExtension, implicit: true },
    extendedAgentCard: 'keep',
  },
  securitySchemes: { map: SecurityScheme, implicit: true },
  securityRequirements: { each: SecurityRequirement, implicit: true },
  defaultInputModes: 'keep',
  defaultOutputModes: 'keep',
  skills: { each: AgentSkill, implicit: false },
  iconUrl: 'keep',
};

/** The card object that is signed: §8.4.1 rules applied, `signatures` removed. */
export function signingView(card: JsonValue): { [key: string]: JsonValue } {
  if (!isObject(card)) throw invalidRequest('an Agent Card must be a JSON object');
  const { signatures: _s, ...rest } = card;
  return applyMessage(rest, AGENT_CARD_FIELDS);
}

/** JCS text of the §8.4.1 signing payload. */
export function cardSigningText(card: JsonValue): string {
  return canonicalText(signingView(card));
}

/** UTF-8 bytes of the §8.4.1 signing payload: exactly what a JWS signs. */
export function cardSigningBytes(card: JsonValue): Uint8Array {
  return new TextEncoder().encode(cardSigningText(card));
}

function applyMessage(value: { [key: string]: JsonValue }, fields: Descriptor): { [key: string]: JsonValue } {
  const out: { [key: string]: JsonValue } = {};
  for (const [key, v] of Object.entries(value)) {
    const rule = Object.hasOwn(fields, key) ? fields[key] : undefined;
    const kept = rule === undefined ? v : applyRule(v, rule);
    if (kept !== undefined) Object.defineProperty(out, key, { value: kept, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function applyRule(v: JsonValue, rule: Rule): JsonValue | undefined {
  if (rule === 'keep' || rule === 'struct') return v;
  if (rule === 'implicit') return isDefault(v) ? undefined : v;
  if ('each' in rule && typeof rule.each === 'object') {
    if (!Array.isArray(v)) return v; // shape errors are the schema's business
    if (rule.implicit && v.length === 0) return undefined;
    return v.map((item) => (isObject(item) ? applyMessage(item, rule.each as Descriptor) : item));
  }
  if ('map' in rule && typeof rule.map === 'object') {
    if (!isObject(v)) return v;
    if (rule.implicit && Object.keys(v).length === 0) return undefined;
    // Map entries are always present in ProtoJSON; only their message values are processed.
    const out: { [key: string]: JsonValue } = {};
    for (const [k, item] of Object.entries(v)) {
      const processed = isObject(item) ? applyMessage(item, rule.map as Descriptor) : item;
      Object.defineProperty(out, k, { value: processed, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  // A nested message: presence is tracked, so it stays even when empty.
  return isObject(v) ? applyMessage(v, rule as Descriptor) : v;
}

function isDefault(v: JsonValue): boolean {
  if (v === '' || v === false || v === 0 || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  return isObject(v) && Object.keys(v).length === 0;
}

function isObject(v: JsonValue | undefined): v is { [key: string]: JsonValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
