import { expect } from 'vitest';
import { BatonError, type ErrorCode } from '../../src/errors.ts';

/** Asserts `fn` throws a BatonError with `code`, and returns it for further checks. */
export function expectCode(fn: () => unknown, code: ErrorCode): BatonError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(BatonError);
    expect((err as BatonError).code).toBe(code);
    return err as BatonError;
  }
  throw new Error(`expected a BatonError ${code}, nothing was thrown`);
}

/** Async form of {@link expectCode}. */
export async function expectCodeAsync(promise: Promise<unknown> | (() => Promise<unknown>), code: ErrorCode): Promise<BatonError> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (err) {
    expect(err).toBeInstanceOf(BatonError);
    expect((err as BatonError).code).toBe(code);
    return err as BatonError;
  }
  throw new Error(`expected a BatonError ${code}, nothing was thrown`);
}
