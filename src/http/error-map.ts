/**
 * The one table from ADR-0014 codes to wire codes. JSON-RPC codes reuse the
 * A2A/JSON-RPC ones where they mean the same thing; the rest sit in the
 * implementation-defined range (-32050…) clear of A2A's -32001…-32009.
 */
import type { Response } from 'express';
import { BatonError, invalidRequest, limitExceeded, type ErrorCode } from '../errors.ts';

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

/**
 * A request body over its size bound. Still limit_exceeded, but HTTP 413
 * (RFC 9110 §15.5.14): a 429 would tell the sender to retry the same bytes.
 */
export function bodyTooLarge(maxBytes?: number): BatonError {
  return limitExceeded('request body exceeds the size bound', { bound: 'request_body', ...(maxBytes !== undefined ? { max_bytes: maxBytes } : {}) });
}

/** A path no route serves: invalid_request, but HTTP 404 (RFC 9110 §15.5.5). */
export function noSuchRoute(message = 'no such route'): BatonError {
  return invalidRequest(message, { route: 'none' });
}

/** The HTTP status of an error on every binding and route: the table, except an oversize body (413) and an unknown route (404). */
export function httpStatusOf(err: BatonError): number {
  if (err.code === 'limit_exceeded' && err.details.bound === 'request_body') return 413;
  if (err.code === 'invalid_request' && err.details.route === 'none') return 404;
  return WIRE_CODES[err.code].http;
}

/**
 * Any error in the vocabulary: body-parser failures carry an HTTP status (413
 * oversize, 4xx unreadable); anything else not a BatonError is opaque.
 */
export function fromHttpError(err: unknown): BatonError {
  const status = (err as { status?: unknown } | undefined)?.status;
  if (err instanceof BatonError || typeof status !== 'number') return toBatonError(err);
  if (status === 413) return bodyTooLarge();
  if (status >= 400 && status < 500) return invalidRequest('request body is malformed');
  return toBatonError(err);
}

/**
 * The one JSON renderer for Baton's own HTTP routes (operator API, health,
 * webhooks; the A2A bindings use src/gateway/a2a-error.ts): status from
 * {@link httpStatusOf}, body from {@link errorBody}; never cacheable.
 */
export function sendHttpError(res: Response, err: unknown): BatonError {
  const e = fromHttpError(err);
  res.setHeader('Cache-Control', 'no-store');
  res.status(httpStatusOf(e)).json(errorBody(e));
  return e;
}

/**
 * A JSON-RPC error object for the MCP binding (src/mcp/front.ts): the code's
 * JSON-RPC number from the one table, the ADR-0014 code and safe details in
 * `data`; never the cause.
 */
export function jsonRpcErrorOf(err: unknown): { code: number; message: string; data: { code: ErrorCode; details: Record<string, unknown> } } {
  const e = toBatonError(err);
  return { code: WIRE_CODES[e.code].jsonRpc, message: e.message, data: { code: e.code, details: { ...e.details } } };
}
