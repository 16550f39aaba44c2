/**
 * The form in which Baton serves the cards it signs, so that every A2A
 * §8.4.1 implementation computes the same signing payload from them.
 *
 * §8.4.1 omits fields at their default value unless REQUIRED or `optional`.
 * Implementations differ at the edges: the reference SDKs round-trip the card
 * through their v1.0 types (dropping members outside the schema) and then
 * strip every empty value recursively — REQUIRED ones, empty map values such
 * as the scope list in `{"schemes":{"apiKey":{"list":[]}}}` and empties inside
 * extension `params` included — while a literal reading keeps them. A card
 * that holds no default value anywhere and no member outside the schema is
 * its own canonical form under every reading: the SDK, Baton's canonicaliser
 * (canonical-card.ts) and a plain JCS over the card minus `signatures` all
 * agree. Baton brings what it signs into that form and refuses what cannot be.
 */
import { unsupported } from '../errors.ts';
import type { JsonValue } from '../records/strict-json.ts';
import { AGENT_CARD_FIELDS, signingView } from './canonical-card.ts';

type Json = { [key: string]: JsonValue };
type Descriptor = typeof AGENT_CARD_FIELDS;

/** The card without members outside the v1.0 schema and without fields at their default value. */
export function servableForm(card: Json): Json {
  return signingView(prune(card, AGENT_CARD_FIELDS));
}

/** Throws `unsupported` naming the first value canonicalisers could read two ways. */
export function assertServable(card: Json): void {
  const found = ambiguities(card);
  if (found.length > 0) throw unsupported('card holds a value A2A §8.4.1 canonicalisers disagree on', { path: found[0]!, count: found.length });
}

/** Paths of every empty value ("" [] {} null) and every member outside the v1.0 schema. */
export function ambiguities(card: Json): string[] {
  const { signatures: _s, ...rest } = card;
  const out: string[] = [];
  walk(rest, AGENT_CARD_FIELDS, '$', out);
  return out;
}

function walk(value: JsonValue, rule: unknown, path: string, out: string[]): void {
  if (isEmpty(value)) {
    out.push(path);
    return;
  }
  if (Array.isArray(value)) {
    const each = isObject(rule as JsonValue) && 'each' in (rule as object) ? (rule as { each: unknown }).each : rule;
    value.forEach((v, i) => walk(v, each, `${path}[${i}]`, out));
    return;
  }
  if (!isObject(value)) return;
  for (const [k, v] of Object.entries(value)) walk(v, childRule(rule, k, path, out), `${path}.${k}`, out);
}

/** The rule for member `k` under `rule`; records members the schema does not know. */
function childRule(rule: unknown, k: string, path: string, out: string[]): unknown {
  if (rule === 'struct') return 'struct';
  if (rule === undefined || typeof rule === 'string') return undefined;
  const r = rule as { map?: unknown; each?: unknown } & Record<string, unknown>;
  if (r.map !== undefined && !('each' in r)) return r.map;
  if (!Object.hasOwn(r, k)) {
    out.push(`${path}.${k}`);
    return undefined;
  }
  return r[k];
}

function prune(value: Json, fields: Descriptor): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === 'signatures' || !Object.hasOwn(fields, k)) continue;
    out[k] = pruneValue(v, fields[k]);
  }
  return out;
}

function pruneValue(v: JsonValue, rule: unknown): JsonValue {
  if (rule === undefined || typeof rule === 'string') return v;
  const r = rule as { each?: unknown; map?: unknown };
  if (r.each !== undefined && Array.isArray(v)) return v.map((item) => (isObject(item) ? prune(item, r.each as Descriptor) : item));
  if (r.map !== undefined && isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, item]) => [k, isObject(item) ? prune(item, r.map as Descriptor) : item]));
  return isObject(v) && r.each === undefined && r.map === undefined ? prune(v, rule as Descriptor) : v;
}

function isEmpty(v: JsonValue): boolean {
  return v === '' || v === null || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);
}

function isObject(v: JsonValue | undefined): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
