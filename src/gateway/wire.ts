/**
 * Small helpers for the A2A wire JSON the dispatcher handles: stream
 * envelopes, the presented chain, message text, the caller's error for a
 * transport failure. Task-view helpers live in src/attempts/task-view.ts.
 */
import { BatonError, invalidRequest } from '../errors.ts';
import { parseStrictJson, type JsonValue } from '../records/strict-json.ts';
import { RemoteFailure, RemoteRpcError } from './remote.ts';
import { MAX_EVENT_BYTES } from './sse.ts';

type Json = { [key: string]: JsonValue };

/**
 * One SSE event's JSON-RPC envelope, read by the strict parser like every
 * other byte a delegatee sends (DESIGN "Strict JSON at every edge"): a
 * duplicate key or a lone surrogate would let Baton and the caller read the
 * same event two ways (issue #25 item 7).
 */
export function parseEnvelope(data: string): Json {
  try {
    const v = parseStrictJson(data, { maxBytes: MAX_EVENT_BYTES });
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Json;
  } catch (cause) {
    throw new RemoteFailure(true, 'stream event is not strict JSON', { cause });
  }
  throw new RemoteFailure(true, 'stream event is not JSON-RPC');
}

/** The contracts an upstream presented, as untrusted values (each is parsed and verified by adopt). */
export function chainOf(presented: JsonValue): unknown[] {
  const chain = presented && typeof presented === 'object' && !Array.isArray(presented) ? presented.chain : undefined;
  if (!Array.isArray(chain)) throw invalidRequest('delegation contract extension carries no chain');
  return chain;
}

export function textOf(message: Json): string {
  const parts = Array.isArray(message.parts) ? message.parts : [];
  return parts.map((p) => (p && typeof p === 'object' && !Array.isArray(p) && typeof p.text === 'string' ? p.text : '')).join(' ').trim();
}

export function toCallerError(err: unknown): Error {
  if (err instanceof BatonError || err instanceof RemoteRpcError) return err;
  if (err instanceof RemoteFailure) return new BatonError('unavailable', `delegatee did not answer: ${err.reason}`, { transmitted: err.transmitted });
  return err instanceof Error ? err : new Error(String(err));
}

