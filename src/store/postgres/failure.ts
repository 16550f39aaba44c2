/**
 * How a PostgreSQL failure is reported and whether the whole transaction may
 * run again. ADR-0014: an unavailable coordinator is `unavailable`, corrupt or
 * unwritable coordinated state is `storage_error`; neither is ever an admission.
 */
import { storageError, unavailable, type BatonError } from '../../errors.ts';

/** Conflicts PostgreSQL resolves by aborting: serialization 40001, deadlock 40P01, a racing insert of a new head 23505. */
export const CONFLICT_CODES: ReadonlySet<string> = new Set(['40001', '40P01', '23505']);

/**
 * The server went away or refused us: connection exceptions (08…), an
 * administrator or crash shutdown (57P01/57P02, e.g. pg_terminate_backend),
 * a server still starting (57P03), a missing database (3D000), and the
 * socket errors node reports when a connection is cut.
 */
const GONE_CODES = new Set(['57P01', '57P02', '57P03', '3D000', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

export function codeOf(err: unknown): string {
  return String((err as { code?: unknown } | undefined)?.code ?? '');
}

/** True when the failure means the connection or the server is gone (as opposed to a refusal by a live server). */
export function connectionLost(err: unknown): boolean {
  const code = codeOf(err);
  if (code.startsWith('08') || GONE_CODES.has(code)) return true;
  return /connection terminated|timeout exceeded when trying to connect|Connection terminated unexpectedly|Client has encountered a connection error|not queryable/i.test(String((err as Error | undefined)?.message ?? ''));
}

/**
 * A lost connection worth one more try on a fresh one: the server cut an
 * established session (terminate, restart, reset). A server that refuses or
 * never answers a new connection, or a missing database, will not be back
 * within a retry: fail fast with `unavailable`.
 */
export function worthReconnecting(err: unknown): boolean {
  const code = codeOf(err);
  if (!connectionLost(err) || code === 'ECONNREFUSED' || code === '3D000' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return false;
  return !/timeout exceeded when trying to connect/i.test(String((err as Error | undefined)?.message ?? ''));
}

/**
 * The server answered with an error saying it ended the session (57P01
 * terminate, 57P02 crash, 57P03 not yet accepting): the statement was not
 * applied, so even a single-statement write may run again.
 */
export function sessionEndedBeforeApplying(err: unknown): boolean {
  return ['57P01', '57P02', '57P03'].includes(codeOf(err));
}

/** Our errors pass through; a lost or refused connection is unavailable; anything else (disk full 53100 included) is storage_error. */
export function wrapPgError(err: unknown, extra: Record<string, unknown> = {}): BatonError | Error {
  if (err instanceof Error && err.name === 'BatonError') return err;
  const code = codeOf(err);
  if (connectionLost(err)) return unavailable(code === '3D000' ? 'database does not exist' : 'database is unreachable', { reason: code || 'connection', ...extra }, err);
  return storageError('database operation failed', { reason: code || 'unknown', ...extra }, err);
}

/**
 * A prepared statement whose result columns changed since it was prepared
 * (a newer node altered a table): the server refuses it, nothing ran, and the
 * same text sent unnamed succeeds (prepared.ts).
 */
export function stalePlan(err: unknown): boolean {
  return codeOf(err) === '0A000' && /cached plan must not change result type/i.test(String((err as Error | undefined)?.message ?? ''));
}

/**
 * A transaction missed its plan (postgres/transaction.ts): its batch's write
 * did not write what the plan expected (SQLSTATE BT001, raised by rows-sql.ts
 * PLANNED_FN: something raced it), its preset had no room left once locked
 * (BT001 too, capacity.ts PRESET_HOLD_FN_SQL), or its program asked for other
 * reads than were sent ahead. Nothing of it committed; the program runs again
 * the plain way.
 */
export function planMissed(err: unknown): boolean {
  return codeOf(err) === 'BT001' || err instanceof PlanMissed;
}

/** A program that asked for other reads than were sent ahead of it (postgres/transaction.ts): it runs again the plain way. */
export class PlanMissed extends Error {
  override readonly name = 'PlanMissed';
}
