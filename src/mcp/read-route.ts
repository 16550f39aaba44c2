/**
 * The read route of an MCP tool call, as pure functions (RW-003 §9
 * post-effect verification; DESIGN "Read-back before outcome"): the read's
 * arguments taken from the call, and whether the read shows what the call
 * claimed. A read that cannot be formed, or fails, or shows anything else,
 * never lets a call project `succeeded`.
 */
import { canonicalText } from '../records/canonical.ts';
import type { JsonValue } from '../records/strict-json.ts';
import type { ReadRoute } from './config.ts';

/** What a call was asked and answered: the context `$.` references resolve in. */
export interface CallFacts {
  arguments: { [k: string]: JsonValue };
  result: { [k: string]: JsonValue };
}

export type ReadCheck = { agreed: true } | { agreed: false; reasons: string[] };

const MISSING = Symbol('missing');

/** The value at a dotted path (`a.b.0.c`), or MISSING. */
export function at(value: JsonValue | undefined, path: string): JsonValue | typeof MISSING {
  let here: JsonValue | undefined = value;
  for (const key of path.split('.')) {
    if (here === null || typeof here !== 'object') return MISSING;
    if (Array.isArray(here)) {
      if (!/^(0|[1-9][0-9]*)$/.test(key)) return MISSING;
      here = here[Number(key)];
    } else {
      if (!Object.hasOwn(here, key)) return MISSING;
      here = here[key];
    }
    if (here === undefined) return MISSING;
  }
  return here as JsonValue;
}

/** A template value: a `$.arguments.…` / `$.result.…` string is taken from the call, anything else is itself. */
function resolve(template: JsonValue, call: CallFacts): JsonValue | typeof MISSING {
  if (typeof template !== 'string' || !template.startsWith('$.')) return template;
  return at(call as unknown as JsonValue, template.slice(2));
}

/** The read's arguments, or the first reference the call cannot fill. */
export function readArguments(route: ReadRoute, call: CallFacts): { arguments: { [k: string]: JsonValue } } | { missing: string } {
  const out: { [k: string]: JsonValue } = {};
  for (const [name, template] of Object.entries(route.arguments)) {
    const value = resolve(template as JsonValue, call);
    if (value === MISSING) return { missing: String(template) };
    out[name] = value;
  }
  return { arguments: out };
}

/** Does the read's result show what the call changed? Every expectation is compared by canonical JSON. */
export function checkRead(route: ReadRoute, call: CallFacts, read: { [k: string]: JsonValue }): ReadCheck {
  if (read.isError === true) return { agreed: false, reasons: [`read route ${route.tool} reported an error`] };
  const reasons: string[] = [];
  for (const [path, template] of Object.entries(route.expect)) {
    const want = resolve(template as JsonValue, call);
    const got = at(read, path);
    if (want === MISSING) reasons.push(`expected value ${String(template)} is missing from the call`);
    else if (got === MISSING) reasons.push(`read route shows no ${path}`);
    else if (canonicalText(got) !== canonicalText(want)) reasons.push(`read route shows another ${path}`);
  }
  return reasons.length === 0 ? { agreed: true } : { agreed: false, reasons };
}
