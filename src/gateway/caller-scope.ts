/**
 * The caller's connection as an AbortSignal. A stream Baton opened upstream
 * only to relay to this caller (SubscribeToTask) is closed when the caller
 * leaves, instead of staying open until the stream's idle timeout. Made on
 * demand for the one request that relays such a stream, and handed down as
 * a parameter: no AsyncLocalStorage (on Node 20 one instance puts a hook on
 * every promise the process creates — ~1.5 % of the gateway's CPU and 4 % of
 * what a delegated call allocates, issue #24).
 */
import type { ServerResponse } from 'node:http';

/** Aborts when `res` closes before its answer was written (at once if it already has). */
export function callerLeft(res: ServerResponse): AbortSignal {
  const ac = new AbortController();
  const left = () => {
    if (!res.writableFinished) ac.abort(new Error('caller left'));
  };
  if (res.closed) left();
  else res.once('close', left);
  return ac.signal;
}
