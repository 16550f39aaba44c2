/**
 * The text pieces canonical.ts writes JCS from (RFC 8785 §3.2.2): member
 * names quoted once each, the test for strings that need no escaping, the
 * check each text kept for a record passes, and an object's text joined from
 * its members' texts in §3.2.3 order.
 */
import { invalidRequest } from '../errors.ts';
import { sortKeys } from './key-order.ts';

/**
 * A text about to be kept, as one flat string. Texts are built by
 * concatenation, which V8 keeps as a tree of the pieces (a rope) until
 * something reads the characters; a kept rope held hundreds of small strings
 * alive per record for as long as the record lived (issue #24, where GC was
 * ~11% of busy time: 4,096 kept contract copies took 137 MB and a 250 ms full
 * GC with rope texts, 82 MB and 55 ms flat). Scanning the text once makes V8
 * flatten it, and checks what RFC 8785 §3.2.2.2 guarantees: control
 * characters are escaped, so the text holds no raw U+0000.
 */
export function kept(text: string): string {
  if (text.indexOf('\u0000') !== -1) throw new TypeError('canonical text holds a raw U+0000');
  return text;
}

/**
 * A string JSON.stringify leaves as it is between quotes: no quote, backslash,
 * control character (RFC 8785 §3.2.2.2 escapes exactly those) or surrogate
 * (a pair is fine but goes the long way, a lone one is refused there).
 */
export const PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/**
 * `"key":` for a member name, checked and quoted once per distinct name: the
 * same few dozen names recur in every record (issue #24 profile: quoting them
 * was a third of writing a record). Bounded, as names come from parsed input too.
 */
const quotedKeys = new Map<string, string>();
const MAX_QUOTED_KEYS = 4096;
export function quotedKey(k: string): string {
  let q = quotedKeys.get(k);
  if (q === undefined) {
    if (!k.isWellFormed()) throw invalidRequest('key holds a lone surrogate');
    q = `${JSON.stringify(k)}:`;
    if (quotedKeys.size < MAX_QUOTED_KEYS) quotedKeys.set(k, q);
  }
  return q;
}

/**
 * `{"k":text,…}` in RFC 8785 §3.2.3 order for `keys` and their member texts
 * (same positions; both arrays are the caller's scratch and are reordered in
 * place), without a map or an index array per object (issue #24: copies of
 * sealed records are most of the objects a call allocates).
 */
export function sortedObjectText(keys: string[], members: string[]): string {
  sortKeys(keys, members);
  let text = '{';
  for (let i = 0; i < keys.length; i++) {
    if (i > 0) text += ',';
    text += quotedKey(keys[i]!) + members[i]!;
  }
  return `${text}}`;
}

/** JCS text of the object whose members' texts these are (as `canonicalText` of that object would give). */
export function composeObjectText(members: ReadonlyMap<string, string>): string {
  return sortedObjectText([...members.keys()], [...members.values()]);
}
