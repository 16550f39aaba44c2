/**
 * The caller's connection as an AbortSignal, carried through the async work
 * of one front-door request. A stream Baton opened upstream only to relay to
 * this caller (SubscribeToTask) is closed when the caller leaves, instead of
 * staying open until the stream's idle timeout.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';

const scope = new AsyncLocalStorage<AbortSignal>();

/** The signal of the front-door request this code runs for, if any. */
export function callerSignal(): AbortSignal | undefined {
  return scope.getStore();
}

/** Middleware: runs the rest of the request inside a scope whose signal aborts when the caller's connection closes early. */
export function bindCallerSignal(_req: IncomingMessage, res: ServerResponse, next: () => void): void {
  const ac = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) ac.abort(new Error('caller left'));
  });
  scope.run(ac.signal, next);
}
