/**
 * The exact effect preview an approver decides on (RW-003 §6: "the exact
 * target/payload/effect/expiry"; RW-002 AuthorityDecision "exact subject/
 * effect preview"). Its digest is what an approval binds: the same preview
 * rebuilt at admission must have the same digest, or nothing is forwarded.
 */
import { canonicalText } from '../records/canonical.ts';
import { digestOf, type Digest } from '../records/digest.ts';
import type { JsonValue } from '../records/strict-json.ts';
import type { GatedTier } from './policy.ts';

export interface EffectPreview {
  [key: string]: unknown;
  tier: GatedTier;
  operation: string;
  caller_id: string;
  delegatee: { id: string; card_object_id: string; card_digest: string };
  /** sha256 of the canonical message as it will be forwarded (without Baton's contract chain). */
  message_digest: Digest;
  /** Every part and every other field of the message, in full, escaped (renderParts). */
  rendering: string;
  /** The child contract's scope and budget ceilings the effect runs under. */
  scope: JsonValue;
  budget: JsonValue;
  /** The request's deadline: no approval is valid after it. */
  expires_at: string;
}

export function previewDigest(p: EffectPreview): Digest {
  return digestOf(p);
}

/**
 * Everything forwarded, nothing cut (issue 25 item 18): each part on its
 * own line — its content in full, then its other fields — and a last line
 * with every other field of the message (metadata, extensions, ids). Every
 * value is canonical JSON with invisible characters escaped (visibleJson),
 * so a part cannot be written to look like two, and bidi overrides or
 * zero-width characters cannot hide or reorder what is shown.
 */
export function renderParts(message: { [key: string]: JsonValue }): string {
  const input = withoutChain(message); // Baton attaches its own chain when it forwards
  const { parts, ...rest } = input;
  const list = Array.isArray(parts) ? parts : [];
  const lines = list.map((p, i) => `[${i}] ${renderPart(p)}`);
  const fields = Array.isArray(parts) ? rest : input;
  if (Object.keys(fields).length > 0) lines.push(`message: ${visibleJson(fields)}`);
  return lines.join('\n');
}

function renderPart(part: unknown): string {
  if (part === null || typeof part !== 'object' || Array.isArray(part)) return `part: ${visibleJson(part)}`;
  const p = part as Record<string, unknown>;
  const kind = (['text', 'raw', 'url', 'data'] as const).find((k) => p[k] !== undefined);
  if (!kind) return `part: ${visibleJson(p)}`;
  const { [kind]: value, ...fields } = p;
  const more = Object.keys(fields).length > 0 ? ` ${visibleJson(fields)}` : '';
  if (kind === 'raw') return `file: ${renderBytes(value)}${more}`;
  return `${kind}: ${visibleJson(value)}${more}`;
}

/** A file's bytes in full: as UTF-8 text when they are that, else their base64 as forwarded. */
function renderBytes(raw: unknown): string {
  if (typeof raw !== 'string') return visibleJson(raw);
  const bytes = Buffer.from(raw, 'base64');
  try {
    return `${bytes.length} bytes, utf-8 ${visibleJson(new TextDecoder('utf-8', { fatal: true }).decode(bytes))}`;
  } catch {
    return `${bytes.length} bytes, base64 ${visibleJson(raw)}`;
  }
}

/** Baton's contract-chain metadata key (gateway/present.ts CONTRACT_EXTENSION; the core cannot import the edge, a test keeps them equal). */
export const CHAIN_KEY = 'urn:rw-agent-delegation:0.1.1:delegation-contract';

/** The message as forwarded minus the chain a previous hop attached (as gateway/task-input.ts inputMessage). */
function withoutChain(message: { [key: string]: JsonValue }): { [key: string]: JsonValue } {
  const meta = message.metadata;
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta) || !(CHAIN_KEY in meta)) return message;
  const { [CHAIN_KEY]: _chain, ...metadata } = meta;
  const { metadata: _m, ...rest } = message;
  return Object.keys(metadata).length > 0 ? { ...{}, ...rest, metadata } : rest;
}

/**
 * Characters a reader cannot see, or that reorder what they see: controls,
 * format characters (bidi embeddings, overrides and isolates, zero-width
 * characters, BOM), line and paragraph separators, private-use and
 * unassigned code points, lone surrogates.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Cs}]/gu;

/** `\uXXXX` per UTF-16 unit: inside a JSON string it denotes the very character forwarded. */
const escapeUnits = (c: string): string => Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');

/**
 * A value as canonical JSON (RFC 8785) with every invisible character
 * escaped: a string stays one quoted token (a newline is `\n`), and the
 * rendering still says exactly what is forwarded.
 */
export function visibleJson(value: unknown): string {
  return canonicalText(value).replace(INVISIBLE, escapeUnits);
}
