/**
 * The ADR-0014 diagnostic vocabulary. Every failure the core reports carries
 * exactly one of these codes; the transport edges (src/http/error-map.ts) turn
 * a code into an HTTP status and a JSON-RPC error, nothing else does.
 */
export const ERROR_CODES = [
  'invalid_request',
  'unavailable',
  'storage_error',
  'interaction_required',
  'authentication_required',
  'context_invalidated',
  'limit_exceeded',
  'unsupported',
  'deny',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Structured, secret-free detail. Values must be safe to log. */
export type ErrorDetails = Readonly<Record<string, unknown>>;

/**
 * The one error class of the core. `message` is for humans and never holds
 * tokens, keys or payloads; machines read `code` and `details`.
 */
export class BatonError extends Error {
  override readonly name = 'BatonError';
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.details = details;
  }

  toJSON(): { code: ErrorCode; message: string; details: ErrorDetails } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

export function isBatonError(err: unknown, code?: ErrorCode): err is BatonError {
  return err instanceof BatonError && (code === undefined || err.code === code);
}

/**
 * A racing writer got there first; the store names which race in `details.conflict`: `head_moved` (a record's
 * head is no longer the prior revision named, records/put.ts), `not_held` and `fences_moved` (a verdict's
 * reservation or fences changed before it committed, ledger/settle.ts). Callers retry or re-judge on these.
 */
export type Conflict = 'head_moved' | 'not_held' | 'fences_moved';

/** Whether `err` is the store's refusal for `conflict` (with nothing of the refused request written). */
export function isConflict(err: unknown, conflict: Conflict): err is BatonError {
  return err instanceof BatonError && err.details.conflict === conflict;
}

export const invalidRequest = (message: string, details?: ErrorDetails, cause?: unknown): BatonError =>
  new BatonError('invalid_request', message, details, { cause });
export const limitExceeded = (message: string, details?: ErrorDetails): BatonError =>
  new BatonError('limit_exceeded', message, details);
export const storageError = (message: string, details?: ErrorDetails, cause?: unknown): BatonError =>
  new BatonError('storage_error', message, details, { cause });
export const unsupported = (message: string, details?: ErrorDetails): BatonError =>
  new BatonError('unsupported', message, details);
export const deny = (message: string, details?: ErrorDetails): BatonError =>
  new BatonError('deny', message, details);
export const contextInvalidated = (message: string, details?: ErrorDetails): BatonError =>
  new BatonError('context_invalidated', message, details);
export const unavailable = (message: string, details?: ErrorDetails, cause?: unknown): BatonError =>
  new BatonError('unavailable', message, details, { cause });
