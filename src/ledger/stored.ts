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
import type { AdmissionReceipt } from './types.ts';

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
export const StoredReceipt = z.object({
  effect_id: z.string(),
  reservation_id: z.string(),
  chain: StoredChain,
  kind: StoredKind,
  amounts: StoredAmounts,
  status: StoredStatus,
  fence_set: z.array(Boundary),
  decision_ref: z.object(RevisionRef.shape),
  replayed: z.boolean(),
}) satisfies z.ZodType<AdmissionReceipt>;

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
