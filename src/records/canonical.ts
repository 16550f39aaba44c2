/**
 * RFC 8785 JSON Canonicalization Scheme. Signatures and digests are computed
 * over these bytes and nothing else; callers keep the bytes they signed rather
 * than re-serialising later.
 *
 * Issue #15: canonicalisation was a quarter of the gateway's busy time, mostly
 * re-serialising the same sealed records. Two changes, same bytes:
 * - one pass that both checks and writes (it was a check pass plus the
 *   `canonicalize` package, which still serves as the reference in tests);
 * - `freezeCanonical` deep-freezes a value; from then on the JCS text of each
 *   of its objects is computed once and remembered (on the object's mark, so
 *   it lives exactly as long as the record does). Only objects this module
 *   froze itself are trusted, so a cached text can never go stale.
 */
import { invalidRequest } from '../errors.ts';
import { kept, PLAIN, quotedKey, sortedObjectText } from './json-text.ts';
import { sortKeys } from './key-order.ts';

const encoder = new TextEncoder();
const MAX_DEPTH = 128;

/**
 * What this module knows of an object it froze with everything beneath it:
 * its JCS text and nesting height once written (`text` undefined before).
 * `owner` is the object itself, so a mark that reached another object (a
 * prototype's, or one copied with its property descriptors) is not trusted.
 */
interface Mark {
  readonly owner: object;
  text: string | undefined;
  height: number;
}

/**
 * The mark, as a member under a symbol only this module holds, defined
 * (non-enumerable, read-only) just before the object is frozen. Spread,
 * Object.assign and Object.keys see only enumerable members, and JSON,
 * structuredClone and zod no symbols, so no copy or encoding carries it.
 * Issue #24: it was a WeakSet of the objects and a WeakMap of their texts;
 * each of the ~70 entries a delegated call made went through V8's ephemeron
 * write barrier and was revisited by every scavenge: V8's ephemeron tables
 * took 1.9 % of the request thread at c=32 (perf), 0.8 % with marks.
 */
const MARK = Symbol('baton.canonical');
/** Marks of objects that were already non-extensible when frozen here (frozen by someone else first: no member can be added). */
const sealedMarks = new WeakMap<object, Mark>();

function markOf(value: object): Mark | undefined {
  // A marked object is frozen: an extensible one (most of what is written) is answered without looking up a member it lacks.
  if (Object.isExtensible(value)) return undefined;
  const m = (value as { [MARK]?: Mark })[MARK];
  if (m !== undefined) return m.owner === value ? m : undefined;
  return sealedMarks.get(value);
}

/** Marks `value` (holding `text` where it is already written) and freezes it; everything beneath it is frozen and marked already. */
function markFrozen(value: object, text?: string, height = 0): void {
  const m: Mark = { owner: value, text, height };
  if (Object.isExtensible(value)) Object.defineProperty(value, MARK, { value: m });
  else sealedMarks.set(value, m);
  Object.freeze(value);
}

/**
 * Texts are kept for a value written at the top (a record, a body, an event)
 * and for its direct members (a record's body; an event's members), never for
 * objects deeper down: a text built by concatenation is a rope that keeps every
 * piece alive, so caching every nested object kept ~100 small strings per
 * object — a gateway held 2.5 million of them (123 MB) after 1,500 requests
 * (issue #15 soak). Deeper objects reached again are simply rewritten.
 */
const CACHED_DEPTH = 1;

/** JCS text of `value`. Rejects values JSON cannot represent faithfully. */
export function canonicalText(value: unknown): string {
  return write(value, 0);
}

/** JCS UTF-8 bytes of `value`. */
export function canonicalBytes(value: unknown): Uint8Array {
  return encoder.encode(canonicalText(value));
}

/**
 * The JCS text of each member of a plain object, for {@link composeObjectText}:
 * objects that share most members (an event's input, its draft and the event
 * itself) are then written without writing the shared members again.
 */
export function memberTexts(value: object): Map<string, string> {
  const proto = Object.getPrototypeOf(value);
  if (Array.isArray(value) || (proto !== Object.prototype && proto !== null)) throw invalidRequest('only plain objects can be canonicalised');
  const out = new Map<string, string>();
  for (const k of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[k];
    if (v === undefined) throw invalidRequest('undefined member cannot be canonicalised', { key: k });
    out.set(k, write(v, 1));
  }
  return out;
}

/**
 * Deep-freezes `value` (plain objects and arrays) in place and returns it, so
 * its canonical text can be cached. A value holding anything else is left as
 * it is (canonicalising it throws anyway).
 */
export function freezeCanonical<T>(value: T): T {
  freeze(value);
  return value;
}

/**
 * A deep-frozen copy of `value`: subtrees this module already froze are shared,
 * everything else is copied first. Sealing uses it so that freezing a record
 * never freezes objects its caller still owns (a config binding, a request
 * being built) — found when a reload edited an owner binding a sealed record
 * had embedded.
 */
export const frozenCopy = <T>(value: T): T => freezeCanonical(copyUnfrozen(value) as T);

/**
 * Like `frozenCopy`, but the JCS text of the copy, and of every object copied,
 * is written in the same pass and cached (issue #15: sealing copied, froze and
 * wrote a record's body in three walks). Throws where `canonicalText` would,
 * so it is for values about to be canonicalised anyway (a record being sealed).
 */
export const canonicalCopy = <T>(value: T): T => copyWrite(value, 0) as T;

/** The text `copyWrite` wrote for the value it last returned. */
let copiedText = '';

function copyWrite(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null || markOf(value) !== undefined) {
    copiedText = write(value, depth);
    return value;
  }
  if (depth === CACHED_DEPTH) {
    // The last level whose text is kept (a record's body): copied in order with all beneath it, written natively.
    ordered = true;
    const out = sortedCopy(value, depth) as object;
    const h = height;
    copiedText = ordered ? JSON.stringify(out) : write(out, depth);
    const m = markOf(out)!;
    m.text = copiedText;
    m.height = h;
    height = h;
    return out;
  }
  // Above CACHED_DEPTH (a record's own level): well inside MAX_DEPTH, copied and written member by member.
  let text: string;
  let h = 0;
  let out: unknown[] | Record<string, unknown>;
  if (Array.isArray(value)) {
    const list = new Array<unknown>(value.length);
    text = '[';
    for (let i = 0; i < value.length; i++) {
      list[i] = copyWrite(value[i], depth + 1);
      if (i > 0) text += ',';
      text += copiedText;
      if (height >= h) h = height + 1;
    }
    text += ']';
    out = list;
  } else {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) throw invalidRequest('only plain objects can be canonicalised');
    const keys = Object.keys(value);
    const copy: Record<string, unknown> = {};
    const members = new Array<string>(keys.length);
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      const v = (value as Record<string, unknown>)[k];
      if (v === undefined) throw invalidRequest('undefined member cannot be canonicalised', { key: k });
      const c = copyWrite(v, depth + 1);
      // defineProperty for "__proto__", so it stays a data member (as in frozenCopy).
      if (k === '__proto__') Object.defineProperty(copy, k, { value: c, enumerable: true, writable: true, configurable: true });
      else copy[k] = c;
      members[i] = copiedText;
      if (height >= h) h = height + 1;
    }
    text = sortedObjectText(keys, members);
    out = copy;
  }
  if (depth <= CACHED_DEPTH) markFrozen(out, kept(text), h);
  else markFrozen(out);
  height = h;
  copiedText = depth === 0 ? '' : text; // a top-level text is on its mark: not also held here past its object
  return out;
}

/** Cleared by {@link sortedCopy} when an object it copied has a key that may be an array index (see there). */
let ordered = true;

/**
 * Below the top level of a record being sealed (its body, and all beneath),
 * a deep-frozen copy whose objects hold their keys in RFC 8785 §3.2.3 order.
 * JSON.stringify of such a copy is its JCS text — ECMAScript's serialisation
 * is what §3.2.2 specifies for strings and numbers — written natively in one
 * pass instead of joined from a string per member (issue #24: sealing copied
 * and wrote ~7 records per delegated call this way, and the copies' strings
 * were a quarter of what a call allocated). The exception is a key that may
 * be an array index: objects list those first whatever order they were set
 * in, so such a copy clears {@link ordered} and is written the long way.
 * What JSON.stringify would let through and JCS refuses (a lone surrogate, a
 * non-finite number, an undefined member, a non-plain object) is refused here
 * with the same errors as {@link write}. Frozen subtrees are copied too (their
 * key order is not known), and only the body is remembered as deep-frozen:
 * one mark per nested object tripled the entries a call made (as weak-set entries).
 */
function sortedCopy(value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) throw invalidRequest('value nests too deeply to canonicalise');
  switch (typeof value) {
    case 'string':
      if (!value.isWellFormed()) throw invalidRequest('string holds a lone surrogate'); // a tenth of PLAIN.test's cost (issue #24)
      height = 0;
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw invalidRequest('non-finite number cannot be canonicalised');
      height = 0;
      return value;
    case 'boolean':
      height = 0;
      return value;
    case 'object':
      break;
    default:
      throw invalidRequest(`a ${typeof value} cannot be canonicalised`);
  }
  if (value === null) {
    height = 0;
    return value;
  }
  let h = 0;
  let out: unknown[] | Record<string, unknown>;
  if (Array.isArray(value)) {
    const list = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      list[i] = sortedCopy(value[i], depth + 1);
      if (height >= h) h = height + 1;
    }
    out = list;
  } else {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) throw invalidRequest('only plain objects can be canonicalised');
    const keys = Object.keys(value);
    sortKeys(keys);
    const copy: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      if (!k.isWellFormed()) throw invalidRequest('key holds a lone surrogate'); // as write refuses it (quotedKey)
      const code = k.charCodeAt(0);
      if (code >= 48 && code <= 57) ordered = false; // may be an array index
      const v = (value as Record<string, unknown>)[k];
      if (v === undefined) throw invalidRequest('undefined member cannot be canonicalised', { key: k });
      const c = sortedCopy(v, depth + 1);
      if (k === '__proto__') Object.defineProperty(copy, k, { value: c, enumerable: true, writable: true, configurable: true });
      else copy[k] = c;
      if (height >= h) h = height + 1;
    }
    out = copy;
  }
  if (depth <= CACHED_DEPTH) markFrozen(out);
  else Object.freeze(out);
  height = h;
  return out;
}

function copyUnfrozen(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || markOf(value) !== undefined) return value;
  if (Array.isArray(value)) return value.map(copyUnfrozen);
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value; // not JSON: left as freezeCanonical leaves it
  // fromEntries defines own properties, so a "__proto__" key stays data.
  return Object.fromEntries(Object.keys(value).map((k) => [k, copyUnfrozen((value as Record<string, unknown>)[k])]));
}

/** Whether `value` was deep-frozen by `freezeCanonical` (so anything derived from it may be cached by identity). */
export function isCanonicalFrozen(value: unknown): value is object {
  return typeof value === 'object' && value !== null && markOf(value) !== undefined;
}

function freeze(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (markOf(value) !== undefined) return true;
  let ok = true;
  if (Array.isArray(value)) {
    for (const item of value) ok = freeze(item) && ok;
  } else {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return false;
    for (const k of Object.keys(value)) ok = freeze((value as Record<string, unknown>)[k]) && ok;
  }
  if (!ok) return false;
  markFrozen(value);
  return true;
}

/** Levels of nesting beneath the value `write` last returned (0 for a scalar); a variable, not a field, so no object is allocated per value. */
let height = 0;

// JSON.stringify of a finite number is ECMAScript Number::toString, which is
// what RFC 8785 §3.2.2.3 prescribes; of a well-formed string, the §3.2.2.2
// escaping. NaN, undefined members and lone surrogates would make the signed
// bytes disagree with what the signer meant, so they are refused.
function write(value: unknown, depth: number): string {
  if (depth > MAX_DEPTH) throw invalidRequest('value nests too deeply to canonicalise');
  switch (typeof value) {
    case 'string':
      height = 0;
      // Most strings (ids, digests, times) need no escape: quoted as they are (issue #24).
      if (PLAIN.test(value)) return `"${value}"`;
      if (!value.isWellFormed()) throw invalidRequest('string holds a lone surrogate');
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw invalidRequest('non-finite number cannot be canonicalised');
      height = 0;
      return JSON.stringify(value);
    case 'boolean':
      height = 0;
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) {
        height = 0;
        return 'null';
      }
      const m = markOf(value);
      if (m !== undefined && m.text !== undefined) {
        if (depth + m.height > MAX_DEPTH) throw invalidRequest('value nests too deeply to canonicalise');
        height = m.height;
        return m.text;
      }
      const from = lent.length;
      try {
        const text = Array.isArray(value) ? writeArray(value, depth) : writeObject(value, depth);
        if (m !== undefined && depth <= CACHED_DEPTH) {
          m.text = kept(text);
          m.height = height;
          for (let i = from; i < lent.length; i += 3) lendText(lent[i] as object, lent[i + 1] as string, text, lent[i + 2] as number);
        }
        return text;
      } finally {
        lent.length = from;
      }
    }
    default:
      throw invalidRequest(`a ${typeof value} cannot be canonicalised`);
  }
}

function writeArray(value: readonly unknown[], depth: number): string {
  let text = '[';
  let h = 0;
  for (let i = 0; i < value.length; i++) {
    text += (i > 0 ? ',' : '') + write(value[i], depth + 1);
    if (height >= h) h = height + 1;
  }
  height = h;
  return `${text}]`;
}

function writeObject(value: object, depth: number): string {
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw invalidRequest('only plain objects can be canonicalised');
  const keys = Object.keys(value);
  sortKeys(keys);
  let text = '{';
  let h = 0;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const quoted = quotedKey(k);
    const v = (value as Record<string, unknown>)[k];
    if (v === undefined) throw invalidRequest('undefined member cannot be canonicalised', { key: k });
    text += (i > 0 ? ',' : '') + quoted;
    const member = write(v, depth + 1);
    if (depth === 0 && member.length >= LENT_MIN && typeof v === 'object') lent.push(v, member, text.length);
    text += member;
    if (height >= h) h = height + 1;
  }
  height = h;
  return `${text}}`;
}

/**
 * Issue #24: a record's text holds its body's whole, and the body kept its
 * own copy beside it (a contract kept its body's, its sealed and its signed
 * text: 15 KB of strings, most of what a call promoted). Once the record's
 * text is kept, flat, a member's kept text is re-pointed at its place in it:
 * a V8 slice, sharing the record's characters. Only for the member's own kept
 * text (never other content) and long ones; a body in two records (sealed,
 * then signed) takes the later one's.
 */
function lendText(value: object, member: string, text: string, at: number): void {
  const m = markOf(value);
  if (m !== undefined && m.text === member) m.text = text.slice(at, at + member.length);
}
/** Members (of the top-level object being written) that may lend their texts, flat: member, its text, where it starts. */
const lent: unknown[] = [];
const LENT_MIN = 512;

/** The JCS text of `value` where it is already known (a sealed record once written, its body), without writing anything. */
export const knownText = (value: object): string | undefined => markOf(value)?.text;
