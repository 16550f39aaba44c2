/**
 * The JSON text of a request Baton sends, with the records it embeds written
 * as the canonical text Baton already holds for them (issue #24). A forwarded
 * turn carries the contract chain, two signed contracts of about 10 KB whose
 * JCS texts were computed when they were sealed; JSON.stringify walked and
 * wrote them again on every call (about 70 µs of the main thread a call at
 * c=32, where splicing the known texts in takes a few).
 *
 * Any JSON text of the same value is an equally valid body: a record's JCS
 * text is one of them (the same members, in RFC 8785 order), and a receiver
 * checks a record's digest and signature over the JCS it computes itself. So
 * the result parses to exactly what JSON.stringify's would: members whose
 * value is undefined, a function or a symbol are left out (null in an
 * array), a value with toJSON and any other non-plain object are written by
 * JSON.stringify (a null-prototype object too), as is everything below
 * {@link WALK_DEPTH}.
 */
import { knownText } from './canonical.ts';

/**
 * How deep the walk looks for records whose text is known; below it, values
 * are written natively. A chain sits at depth 5 (params.metadata[uri].chain[i])
 * or 6 (in the message's metadata); what lies deeper is not walked.
 */
const WALK_DEPTH = 7;

/** JSON text of `value` (an object or array), records Baton sealed spliced in by their known canonical text. */
export function wireJson(value: object): string {
  return knownText(value) ?? container(value, 0);
}

/** The text of one member; undefined where JSON.stringify leaves it out. */
function write(value: unknown, depth: number): string | undefined {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  return knownText(value) ?? (depth < WALK_DEPTH ? container(value, depth) : JSON.stringify(value));
}

/** An array or object walked member by member; anything else that is not a plain object, or has toJSON, natively. */
function container(value: object, depth: number): string {
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) text += (i > 0 ? ',' : '') + (write(value[i], depth + 1) ?? 'null');
    return `${text}]`;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype || typeof (value as { toJSON?: unknown }).toJSON === 'function') return JSON.stringify(value);
  let text = '{';
  for (const k of Object.keys(value)) {
    const member = write((value as Record<string, unknown>)[k], depth + 1);
    if (member === undefined) continue;
    text += `${text.length > 1 ? ',' : ''}${JSON.stringify(k)}:${member}`;
  }
  return `${text}}`;
}
