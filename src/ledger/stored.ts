/**
 * The JSON a ledger row carries (a reservation's chain, amounts, charges and
 * admission receipt; a node's issued-event boundary), read back with schemas
 * (STYLE "zod at every edge, including records read back from the store"):
 * text edited or damaged outside Baton is storage_error, never a budget a
 * settlement charges or a receipt a replay returns. Objects are read leniently
 * (a member a later build adds is dropped, not refused: the rows outlive the
 * build that wrote them). The row's own columns are checked where it is read
 * (store/tx/rows.ts).
 */
import { z } from 'zod';
import { ControlBoundaryRef } from '../control/fence.ts';
import { storageError } from '../errors.ts';
import { RevisionRef } from '../records/revision-ref.ts';
import type { BalanceDelta } from './rules.ts';

/** A decimal integer as the ledger writes amounts and deltas (bigint.toString()). */
const Integer = z.string().regex(/^(0|-?[1-9]\d{0,18})$/);
/** ReservationStatus and ChargeKind (rules.ts), as stored; the row schemas read the same columns (store/tx/rows.ts). */
export const StoredStatus = z.enum(['held', 'unknown', 'settled', 'released', 'consumed']);
export const StoredKind = z.enum(['consume', 'reserve']);
const Boundary = z.object(ControlBoundaryRef.shape);

export const StoredChain = z.array(z.string()).min(1);
export const StoredAmounts = z.record(z.string(), Integer);
const StoredDelta = z.object({ node_id: z.string(), dimension: z.string(), consumed: Integer, reserved: Integer });
export const StoredCharges = z.array(StoredDelta);
/**
 * What a reservation row's `receipt` column holds: the one member of the
 * admission receipt that no other column holds and the request does not fix,
 * its decision ref (issue #24: the whole receipt repeated the chain, amounts
 * and fence set, about 1.4 KB of the costliest row a call writes and rewrites).
 * A replay rebuilds the receipt from the columns and its own request, whose
 * digest equals the stored one (ledger/programs.ts replayedReceipt). Rows
 * written before hold the whole receipt; read leniently, they read the same.
 */
export const StoredReceipt = z.object({ decision_ref: z.object(RevisionRef.shape) });

/** The value `text` holds in a ledger row's `column`, as `schema` reads it. */
export function storedJson<T>(schema: z.ZodType<T>, text: string, column: string): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw storageError('a ledger row holds malformed JSON', { column });
  }
  const r = schema.safeParse(value);
  if (!r.success) throw storageError('a ledger row holds JSON that does not match its schema', { column, path: r.error.issues[0]?.path.join('.') ?? '' });
  return r.data;
}

/** The issued-event boundary a node row records. */
export const storedBoundary = (text: string): ControlBoundaryRef => storedJson(Boundary, text, 'issued_event');

/** A reservation row's charges, as deltas. */
export const storedCharges = (text: string): BalanceDelta[] =>
  storedJson(StoredCharges, text, 'charged').map((j) => ({ node_id: j.node_id, dimension: j.dimension, consumed: BigInt(j.consumed), reserved: BigInt(j.reserved) }));
