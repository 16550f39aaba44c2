/**
 * The one table from ADR-0014 codes to wire codes. JSON-RPC codes reuse the
 * A2A/JSON-RPC ones where they mean the same thing; the rest sit in the
 * implementation-defined range (-32050…) clear of A2A's -32001…-32009.
 */
import { BatonError, type ErrorCode } from '../errors.ts';

interface WireCode {
  http: number;
  jsonRpc: number;
}

export const WIRE_CODES: Readonly<Record<ErrorCode, WireCode>> = Object.freeze({
  invalid_request: { http: 400, jsonRpc: -32602 },
  authentication_required: { http: 401, jsonRpc: -32052 },
  interaction_required: { http: 403, jsonRpc: -32051 },
  deny: { http: 403, jsonRpc: -32054 },
  context_invalidated: { http: 409, jsonRpc: -32053 },
  unsupported: { http: 422, jsonRpc: -32004 },
  limit_exceeded: { http: 429, jsonRpc: -32055 },
  storage_error: { http: 500, jsonRpc: -32603 },
  unavailable: { http: 503, jsonRpc: -32050 },
});

/** Wire body for an error: code, message and safe details only; never the cause. */
export function errorBody(err: BatonError): { error: { code: ErrorCode; message: string; details: Record<string, unknown> } } {
  return { error: { code: err.code, message: err.message, details: { ...err.details } } };
}

/** Anything not a BatonError becomes an opaque storage/internal error on the wire. */
export function toBatonError(err: unknown): BatonError {
  if (err instanceof BatonError) return err;
  return new BatonError('storage_error', 'internal error', {}, { cause: err });
}
