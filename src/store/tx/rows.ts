/**
 * The rows a transaction program reads back, checked at the store's edge
 * (STYLE "zod at every edge, including records read back from the store"):
 * a row edited or damaged outside Baton is storage_error where it is read,
 * never a budget, fence or reservation a decision rests on. Integers come
 * back as each driver gives them (better-sqlite3 BigInt, pg number or BigInt)
 * and leave as ops.ts declares them: counts and positions as numbers,
 * amounts as BigInt. JSON columns stay text here; the ledger parses them with
 * its own schemas (ledger/stored.ts).
 */
import { z } from 'zod';
import { storageError } from '../../errors.ts';
import { StoredKind, StoredStatus } from '../../ledger/stored.ts';
import { Digest } from '../../records/digest.ts';
import type { Call, OpName } from './ops.ts';

const text = z.string();
const nullableText = z.string().nullable();
/** A non-negative integer as any driver returns it, as a number (positions, depths: far below 2^53). */
const count = z.union([z.number().int().nonnegative(), z.bigint().nonnegative().transform(Number)]);
/** A signed 64-bit amount: BigInt from both drivers (database.ts safeIntegers, postgres/store.ts int8 parser). */
const amount = z.bigint();

export const RecordRowSchema = z.object({
  record_id: text,
  revision_id: text,
  content_digest: Digest,
  schema_ref: text,
  prior_revision: nullableText,
  document: text,
  stored_at: text,
});

export const HeadRowSchema = z.object({
  project_id: text,
  branch_id: text,
  scope_kind: text,
  position: count,
  event_id: text,
  event_digest: Digest,
  state: text,
});

export const EventRowSchema = z.object({
  project_id: text,
  branch_id: text,
  position: count,
  event_id: text,
  event_type: text,
  idempotency_key: nullableText,
  input_digest: Digest,
  event_digest: Digest,
  document: text,
});

export const NodeRowSchema = z.object({
  node_id: text,
  parent_id: nullableText,
  preset_id: nullableText,
  root_id: text,
  depth: count,
  space_id: text,
  owner_namespace: text,
  not_after: text,
  request_digest: Digest,
  issued_event: text,
  created_at: text,
});

export const BalanceRowSchema = z.object({
  node_id: text,
  dimension: text,
  unit: text,
  ceiling: amount,
  consumed: amount,
  reserved: amount,
});

export const ReservationRowSchema = z.object({
  reservation_id: text,
  effect_id: text,
  root_id: text,
  owner_namespace: text,
  chain: text,
  kind: StoredKind,
  amounts: text,
  charged: text,
  status: StoredStatus,
  request_digest: Digest,
  receipt: text,
  settlement: nullableText,
  created_at: text,
  settled_at: nullableText,
});

/** A record's head as SQLite's batch write reads it (sqlite/ops.ts), with its revision's content digest. */
export const RecordHeadRowSchema = z.object({ record_id: text, revision_id: text, content_digest: Digest });

/** What a batch write reports (ops.ts BatchWritten): the store's answer about rows it wrote, checked like any row. */
export const BatchWrittenSchema = z.object({ revisions: z.array(text), heads: count });

type Rows = z.ZodType;
const one = (schema: Rows) => ({ schema, many: false });
const many = (schema: Rows) => ({ schema, many: true });

/** What each reading primitive returns, by op; the others return nothing or counts the adapter computed. */
const READS: Partial<Record<OpName, { schema: Rows; many: boolean }>> = {
  recordByRevision: one(RecordRowSchema),
  streamHead: one(HeadRowSchema),
  streamHeads: many(HeadRowSchema),
  eventByIdempotency: one(EventRowSchema),
  node: one(NodeRowSchema),
  nodes: many(NodeRowSchema),
  lineage: many(NodeRowSchema),
  balances: many(BalanceRowSchema),
  reservationByEffect: one(ReservationRowSchema),
  reservationsClaiming: many(ReservationRowSchema),
  reservation: one(ReservationRowSchema),
  resolveHeld: one(ReservationRowSchema),
  writeBatch: one(BatchWrittenSchema),
};

/** A row as its schema reads it; storage_error naming the table's op and the failing column, never a value. */
export function checkedRow<T>(schema: z.ZodType<T>, row: unknown, read: string): T {
  const r = schema.safeParse(row);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  throw storageError('a row read from the store does not match its schema', { read, column: issue?.path.join('.') ?? '', problem: issue?.code ?? 'invalid' });
}

/** The result of `call` as its schema reads it (rows checked and normalised); anything else unchanged. */
export function checkedResult(call: Call, result: unknown): unknown {
  const read = READS[call.op];
  if (read === undefined || result === undefined) return result;
  if (!read.many) return checkedRow(read.schema, result, call.op);
  return (result as unknown[]).map((row) => checkedRow(read.schema, row, call.op));
}
