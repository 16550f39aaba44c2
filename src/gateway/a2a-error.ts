/**
 * The one error renderer of Baton's A2A front door. Everything a caller can
 * get wrong or Baton can refuse — authentication, strict JSON, size bounds,
 * card resolution, the dispatcher's ADR-0014 codes, a delegatee's relayed
 * A2A error — becomes an A2A v1.0 error rendered by the SDK's own
 * serialisers, so every error carries a `google.rpc.ErrorInfo` (A2A §9.5:
 * JSON-RPC `error.data` is an array of details; §11.6: HTTP+JSON is a
 * `google.rpc.Status` with `details[]`) and the REST Content-Type the SDK
 * uses for its own errors.
 */
import {
  A2AError,
  A2A_ERROR_CODE,
  ERROR_INFO_TYPE,
  fromJsonRpcErrorResponse,
  JsonRpcRequestMalformedError,
  JsonRpcUnsupportedOperationError,
  RequestMalformedError,
  restStatusFor,
  RestUnsupportedOperationError,
  TaskNotFoundError,
  toJsonRpcError,
  toRestErrorBody,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import type { Response } from 'express';
import { BatonError } from '../errors.ts';
import { httpStatusOf, toBatonError, WIRE_CODES } from '../http/error-map.ts';
import { TaskNotFound } from './dispatcher.ts';
import { RemoteRpcError } from './remote.ts';
import { batonCodeOf } from './path/classify.ts';

export type Binding = 'jsonrpc' | 'rest';

/** The Content-Type the SDK's HTTP+JSON adapter answers with, errors included (A2A §11). */
export const A2A_JSON = 'application/a2a+json';

/** JSON-RPC parse error (JSON-RPC 2.0 §5.1): the body is not (strict) JSON. */
export class ParseError extends Error {
  override readonly name = 'ParseError';
}

/**
 * ADR-0014 codes onto A2A errors. Malformed and unsupported have A2A
 * equivalents; every other code keeps Baton's wire mapping (src/http/error-map.ts)
 * — its JSON-RPC code and HTTP status — and names itself in a v1.0
 * ErrorInfo detail `{reason: CODE, domain: "baton", metadata: {baton: code}}`.
 */
export function toA2AError(err: unknown, transport: Binding): Error {
  if (err instanceof TaskNotFound) return new TaskNotFoundError('task not found');
  if (err instanceof ParseError) return new JsonRpcRequestMalformedError({ message: err.message, envelopeCode: -32700 } as never) as unknown as Error;
  if (err instanceof RemoteRpcError) return relayed(err, transport);
  if (err instanceof A2AError) return err;
  // Anything else is a fault whose text may say anything (a stack, a remote's words): opaque on the wire.
  if (!(err instanceof BatonError)) return toA2AError(toBatonError(err), transport);
  // A malformed request is A2A's own error; an unknown route (404) keeps Baton's carrier, which has the status.
  if (err.code === 'invalid_request' && httpStatusOf(err) === WIRE_CODES.invalid_request.http) return new RequestMalformedError(err.message);
  if (err.code === 'unsupported') return new UnsupportedOperationError(err.message);
  // ErrorInfo metadata is a string map: Baton's code, plus the details that are plain values.
  const metadata: Record<string, string> = { baton: err.code };
  // camelCase keys, as everything else in A2A's JSON (detail names are snake_case inside Baton).
  for (const [k, v] of Object.entries(err.details)) if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') metadata[camel(k)] = String(v).slice(0, 256);
  const info = { '@type': ERROR_INFO_TYPE, reason: err.code.toUpperCase(), domain: 'baton', metadata };
  const wire = WIRE_CODES[err.code];
  const e =
    transport === 'rest'
      ? new RestUnsupportedOperationError({ message: err.message, statusCode: httpStatusOf(err), metadata })
      : new JsonRpcUnsupportedOperationError({ message: err.message, envelopeCode: wire.jsonRpc, metadata });
  // The SDK serialises the detail through toErrorInfo(); ours names Baton's code, not an A2A reason it is not.
  Object.defineProperty(e, 'toErrorInfo', { value: () => info });
  return e;
}

const camel = (k: string) => k.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

/**
 * A delegatee's own A2A error, passed on with its meaning but never its
 * text: the remote's message may name its task ids or other downstream
 * identifiers (RW-003 §10.3). Its meaning is its code, and — when the
 * delegatee is another Baton — the ADR-0014 code its ErrorInfo names
 * (reason and domain only; metadata may carry downstream ids). A code that
 * is no A2A error is the delegatee failing: to the caller, `unavailable`.
 */
function relayed(err: RemoteRpcError, transport: Binding): Error {
  const batonCode = batonCodeOf(err.data);
  if (batonCode) {
    const why = relayedReasons(err.data);
    const said = Object.entries(why).map(([k, v]) => `${k} ${v}`).join('; ');
    return toA2AError(new BatonError(batonCode, `the delegatee refused the request (${batonCode.toUpperCase()})${said ? `: ${said}` : ''}`, why), transport);
  }
  const message = `the delegatee refused the request (A2A error ${err.code})`;
  if (!A2A_CODES.has(err.code)) return toA2AError(new BatonError('unavailable', message, { remote_code: err.code }), transport);
  return fromJsonRpcErrorResponse({ jsonrpc: '2.0', id: null, error: { code: err.code, message } } as never) as unknown as Error;
}

/**
 * The reasons a downstream Baton's ErrorInfo names that are vocabulary, not
 * identifiers: `reason` (e.g. revoked, stale) and `widerOn` (the dimensions
 * a child could not narrow, e.g. subdelegation). Relayed so the caller learns
 * why, hop after hop (issue 25); any other metadata may name downstream ids.
 */
function relayedReasons(data: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const info = (Array.isArray(data) ? (data as Array<{ domain?: unknown; metadata?: Record<string, unknown> }>) : []).find((d) => d?.domain === 'baton');
  for (const [key, detail] of [['reason', 'reason'], ['widerOn', 'wider_on']] as const) {
    const v = info?.metadata?.[key];
    if (typeof v === 'string' && /^[a-z_]{1,64}(,[a-z_]{1,64}){0,15}$/.test(v)) out[detail] = v;
  }
  return out;
}

/** The A2A and JSON-RPC error codes a delegatee may answer with meaningfully (an internal error is not one). */
const A2A_CODES = new Set<number>(Object.values(A2A_ERROR_CODE).filter((c) => c !== A2A_ERROR_CODE.INTERNAL_ERROR));

/** Status, Content-Type and body of an error on a binding — exactly what the SDK's adapters send. */
export function renderA2AError(err: unknown, transport: Binding, id: string | number | null = null): { status: number; contentType: string; body: unknown } {
  const a2a = toA2AError(err, transport);
  if (transport === 'rest') {
    const status = restStatusFor(a2a);
    return { status, contentType: A2A_JSON, body: withStatusName(toRestErrorBody(a2a, status)) };
  }
  // JSON-RPC errors travel in a 200 response, except a refused credential (RFC 9110 §15.5.2).
  const status = err instanceof BatonError && err.code === 'authentication_required' ? 401 : 200;
  return { status, contentType: 'application/json', body: { jsonrpc: '2.0', id, error: toJsonRpcError(a2a) } };
}

/** google.rpc.Code names by HTTP status (google/rpc/code.proto's HTTP mapping). */
const STATUS_NAME: Readonly<Record<number, string>> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 409: 'ABORTED', 413: 'RESOURCE_EXHAUSTED', 422: 'FAILED_PRECONDITION', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE' };

/**
 * The SDK names a `google.rpc.Status` after the A2A error class; Baton's own
 * codes travel in one carrier class, so their status name follows their
 * HTTP status instead (401 is UNAUTHENTICATED, not FAILED_PRECONDITION).
 * Applied to every REST error body, the SDK's included (see {@link restStatusNames}).
 */
export function withStatusName<T>(body: T): T {
  const error = (body as { error?: { code?: unknown; status?: unknown; details?: Array<{ domain?: unknown }> } } | undefined)?.error;
  if (!error || typeof error.code !== 'number' || !error.details?.some((d) => d.domain === 'baton')) return body;
  const name = STATUS_NAME[error.code];
  if (name) error.status = name;
  return body;
}

/** Express middleware for the HTTP+JSON binding: every JSON error body passes {@link withStatusName}. */
export function restStatusNames(_req: unknown, res: Response, next: () => void): void {
  const json = res.json.bind(res);
  res.json = (body: unknown) => json(res.statusCode >= 400 ? withStatusName(body) : body);
  next();
}

/** Sends {@link renderA2AError}'s rendering; never cacheable. */
export function sendA2AError(res: Response, err: unknown, transport: Binding, id: string | number | null = null): void {
  const r = renderA2AError(err, transport, id);
  if (r.status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="baton", ApiKey header="X-API-Key"');
  res.setHeader('Cache-Control', 'no-store');
  res.status(r.status).type(r.contentType).send(JSON.stringify(r.body));
}
