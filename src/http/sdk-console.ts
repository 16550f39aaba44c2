/**
 * The A2A SDK's express adapters report a refused stream, a failed card
 * provider or a tenant mismatch with `console.error`/`console.warn` and the
 * whole error object: a multi-line stack trace between the JSON log lines,
 * which breaks every line-oriented log pipeline (issue #25 item 9). While
 * `baton serve` runs, those calls become one structured log line each: the
 * SDK's own text (first line, bounded) and the error's name and ADR-0014
 * code — never its stack or message, which may quote a remote's words.
 */
import { A2AError } from '@a2a-js/sdk/errors';
import { BatonError } from '../errors.ts';
import type { Logger } from '../log.ts';

const MAX_TEXT = 200;

/** Routes `console.error`/`console.warn` into `logger`; returns the function that restores them. */
export function routeConsole(logger: Logger): () => void {
  const { error, warn } = console;
  const line = (level: 'error' | 'warn') => (...args: unknown[]) => {
    const text = args.filter((a): a is string => typeof a === 'string').join(' ').split('\n')[0]!.slice(0, MAX_TEXT);
    const err = args.find((a): a is Error => a instanceof Error);
    const code = err instanceof BatonError ? err.code : (err as { metadata?: { baton?: unknown } } | undefined)?.metadata?.baton;
    const fields = { source: 'console', ...(err ? { err_name: err.name } : {}), ...(typeof code === 'string' ? { code } : {}) };
    // A refusal the SDK logs was already answered to the caller and counted in the access log: a warning, not an error.
    const refusal = err instanceof BatonError || err instanceof A2AError;
    logger[level === 'error' && !refusal ? 'error' : 'warn'](fields, text || 'console output');
  };
  console.error = line('error');
  console.warn = line('warn');
  return () => {
    console.error = error;
    console.warn = warn;
  };
}
