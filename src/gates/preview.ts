/**
 * The exact effect preview an approver decides on (RW-003 §6: "the exact
 * target/payload/effect/expiry"; RW-002 AuthorityDecision "exact subject/
 * effect preview"). Its digest is what an approval binds: the same preview
 * rebuilt at admission must have the same digest, or nothing is forwarded.
 */
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
  /** A human-readable rendering of every part (text verbatim, others by kind and size). */
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

const MAX_RENDERING = 8_000;

/** Each part on its own line; non-text parts are named, never inlined (they may be large or binary). */
export function renderParts(message: { parts?: unknown }): string {
  const parts = Array.isArray(message.parts) ? (message.parts as Array<Record<string, unknown>>) : [];
  const lines = parts.map((p, i) => {
    const kind = p.mediaType ? ` (${String(p.mediaType)})` : '';
    if (typeof p.text === 'string') return `[${i}] text${kind}: ${p.text}`;
    if (typeof p.raw === 'string') return `[${i}] file${kind}${p.filename ? ` ${String(p.filename)}` : ''}: ${Math.floor((p.raw.length * 3) / 4)} bytes`;
    if (typeof p.url === 'string') return `[${i}] url${kind}: ${p.url}`;
    return `[${i}] data${kind}: ${JSON.stringify(p.data) ?? 'null'}`;
  });
  const text = lines.join('\n');
  return text.length > MAX_RENDERING ? `${text.slice(0, MAX_RENDERING)}\n… (${text.length - MAX_RENDERING} more characters; the digest covers all of it)` : text;
}
