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
