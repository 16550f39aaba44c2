/**
 * The ADR-0014 code a caller reads from an A2A error Baton sent: the
 * ErrorInfo detail (domain `baton`) names it, on JSON-RPC in `data`, on
 * HTTP+JSON in the error's metadata. Tests assert the code, not the text.
 */
import { expect } from 'vitest';

interface ErrorInfo {
  domain?: string;
  reason?: string;
  metadata?: Record<string, string>;
}

export function batonCodeOf(err: unknown): string | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const e = err as { data?: unknown; metadata?: Record<string, string> };
  if (e.metadata?.baton) return e.metadata.baton;
  const details = Array.isArray(e.data) ? (e.data as ErrorInfo[]) : [];
  const info = details.find((d) => d && d.domain === 'baton');
  return info?.metadata?.baton ?? info?.reason?.toLowerCase();
}

/** Awaits a rejection and asserts the ADR-0014 code it carries; returns the error. */
export async function expectBatonCode(pending: Promise<unknown>, code: string): Promise<Error> {
  const err = await pending.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `expected a rejection carrying ${code}`).toBeInstanceOf(Error);
  expect(batonCodeOf(err), (err as Error).message).toBe(code);
  return err as Error;
}

/**
 * Asserts a JSON-RPC error object (read from a raw response body) names the
 * ADR-0014 `code` in its ErrorInfo: reason CODE, domain `baton`, and the
 * metadata given (the refusal's detail, e.g. which fence or scope refused).
 */
export function expectRpcCode(error: unknown, code: string, metadata: Record<string, string> = {}): void {
  expect(error, `expected a JSON-RPC error carrying ${code}`).toBeDefined();
  const info = ((error as { data?: ErrorInfo[] }).data ?? []).find((d) => d?.domain === 'baton');
  expect(info, JSON.stringify(error)).toMatchObject({ reason: code.toUpperCase(), domain: 'baton', metadata: { baton: code, ...metadata } });
}

/**
 * `invalid_request` and `unsupported` travel as A2A's own errors (JSON-RPC
 * -32602 INVALID_PARAMS, -32004 UNSUPPORTED_OPERATION; src/gateway/a2a-error.ts),
 * which name no Baton code: the refusal's message says which check refused.
 */
export function expectRpcA2A(error: unknown, code: 'invalid_request' | 'unsupported', message: string | RegExp): void {
  const [rpc, reason] = code === 'invalid_request' ? [-32602, 'INVALID_PARAMS'] : [-32004, 'UNSUPPORTED_OPERATION'];
  expect(error, JSON.stringify(error)).toMatchObject({ code: rpc, message, data: [{ reason, domain: 'a2a-protocol.org' }] });
}

/** {@link expectRpcA2A} for `invalid_request`. */
export const expectRpcInvalid = (error: unknown, message: string | RegExp): void => expectRpcA2A(error, 'invalid_request', message);
