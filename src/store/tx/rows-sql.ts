/**
 * Multi-row statements shared by both adapters (issue #24: one statement per
 * table, not per row). A dialect supplies only its placeholder.
 */
import type { BalanceChange, BalanceRow, BatchRecord, BatchWrites, NodeRow, ReservationRow, WorkRow } from './ops.ts';
import type { EntryRow, EventRow, HeadRow, RecordRow } from './ops.ts';

/** `p(n)` renders the n-th (1-based) placeholder. */
export type Ph = (n: number) => string;

/** `(p1, p2), (p3, p4)` for `rows` rows of `cols` columns. */
export function valuesSql(rows: number, cols: number, p: Ph): string {
  const out: string[] = [];
  for (let r = 0; r < rows; r++) out.push(`(${Array.from({ length: cols }, (_, c) => p(r * cols + c + 1)).join(', ')})`);
  return out.join(', ');
}

/** A table's columns and how one row becomes parameters, in that order. */
export interface RowShape<T> {
  table: string;
  cols: readonly string[];
  params(row: T): unknown[];
  /** Appended after VALUES (an ON CONFLICT clause). */
  suffix?: string;
}

export const insertSql = <T>(shape: RowShape<T>, rows: number, p: Ph): string =>
  `INSERT INTO ${shape.table}(${shape.cols.join(', ')}) VALUES ${valuesSql(rows, shape.cols.length, p)}${shape.suffix ?? ''}`;

export const paramsOf = <T>(shape: RowShape<T>, rows: readonly T[]): unknown[] => rows.flatMap((r) => shape.params(r));

const cols = <T>(table: string, names: readonly (keyof T & string)[], suffix?: string): RowShape<T> => ({
  table,
  cols: names,
  params: (row) => names.map((n) => row[n]),
  ...(suffix ? { suffix } : {}),
});

export const CONTENT_ROWS = cols<{ digest: string; kind: string; document: string; stored_at: string }>('content', ['digest', 'kind', 'document', 'stored_at'], ' ON CONFLICT (digest) DO NOTHING');
export const EVENT_ROWS = cols<EventRow>('control_events', ['project_id', 'branch_id', 'position', 'event_id', 'event_type', 'idempotency_key', 'input_digest', 'event_digest', 'document']);
export const HEAD_ROWS = cols<HeadRow>(
  'control_heads',
  ['project_id', 'branch_id', 'scope_kind', 'position', 'event_id', 'event_digest', 'state'],
  ` ON CONFLICT (project_id, branch_id) DO UPDATE SET position = excluded.position, event_id = excluded.event_id,
     event_digest = excluded.event_digest, state = excluded.state`,
);
export const RESERVATION_ROWS = cols<ReservationRow>('ledger_reservations', [
  'reservation_id',
  'effect_id',
  'root_id',
  'owner_namespace',
  'chain',
  'kind',
  'amounts',
  'charged',
  'status',
  'request_digest',
  'receipt',
  'settlement',
  'created_at',
  'settled_at',
]);
export const ENTRY_ROWS = cols<EntryRow>('ledger_entries', ['reservation_id', 'node_id', 'dimension', 'd_consumed', 'd_reserved', 'reason', 'at']);
export const NODE_ROWS = cols<NodeRow>('ledger_nodes', ['node_id', 'parent_id', 'preset_id', 'root_id', 'depth', 'space_id', 'owner_namespace', 'not_after', 'request_digest', 'issued_event', 'created_at']);
export const BALANCE_ROWS = cols<BalanceRow>('ledger_balances', ['node_id', 'dimension', 'unit', 'ceiling', 'consumed', 'reserved']);

/**
 * A node and its ancestors up `parent_id`, the node first, at most `max` of
 * them, in one statement (issue #24: a chain was read one node per statement).
 * A walk stops early where a parent is absent. `lock` is the dialect's row
 * lock clause for the nodes returned ('' where writers are serial).
 */
export const lineageSql = (p: Ph, lock: string): string =>
  `WITH RECURSIVE up(node_id, parent_id, hop) AS (
     SELECT node_id, parent_id, 1 FROM ledger_nodes WHERE node_id = ${p(1)}
     UNION ALL
     SELECT n.node_id, n.parent_id, up.hop + 1 FROM up JOIN ledger_nodes n ON n.node_id = up.parent_id WHERE up.hop < ${p(2)})
   SELECT n.* FROM up JOIN ledger_nodes n ON n.node_id = up.node_id ORDER BY up.hop${lock}`;

/** One statement of a batch write: `sql` numbers its placeholders from p(1); `key` and `rows` name its shape (prepared once per shape). */
export interface Part {
  key: string;
  rows: number;
  sql: (p: Ph) => string;
  params: unknown[];
  /**
   * Its SQL ends in RETURNING and the caller needs what it returned: the
   * revision ids written (`revisions`), or how many rows it changed (`heads`,
   * `charges`). At most one part of a statement reports each kind;
   * allInOneSql answers each as a column.
   */
  reports?: Report;
}

export type Report = 'revisions' | 'heads' | 'charges';

const insertPart = <T>(shape: RowShape<T>, rows: readonly T[]): Part => ({
  key: shape.table,
  rows: rows.length,
  sql: (p) => insertSql(shape, rows.length, p),
  params: paramsOf(shape, rows),
});

export const WORK_ROWS = cols<WorkRow>('attempt_work', ['effect_id', 'attempt_id', 'reservation_id', 'lease_owner', 'lease_until', 'tries', 'deadline', 'created_at', 'gateway_id']);

/** Ends the follow-up of these effects (their work rows, work-sql.ts). */
const donePart = (effectIds: readonly string[]): Part => ({
  key: 'attempt_work:done',
  rows: effectIds.length,
  sql: (p) => `DELETE FROM attempt_work WHERE effect_id IN (${effectIds.map((_, i) => p(i + 1)).join(', ')})`,
  params: [...effectIds],
});

/**
 * Where a queued revision `v` is its record's plain next revision (records/put.ts):
 * a first revision of a record without a head, or a revision whose prior ref
 * names the head exactly — its revision id and that revision's content digest.
 * `c` names v's columns: record_id, prior revision id, prior content digest.
 */
export const fitsSql = (c: { record: string; prior: string; digest: string }) =>
  `CASE WHEN ${c.prior} IS NULL THEN NOT EXISTS (SELECT 1 FROM record_heads h WHERE h.record_id = ${c.record})
   ELSE EXISTS (SELECT 1 FROM record_heads h JOIN records r ON r.revision_id = h.revision_id
     WHERE h.record_id = ${c.record} AND h.revision_id = ${c.prior} AND r.content_digest = ${c.digest}) END`;

const RECORD_COLS = ['record_id', 'revision_id', 'content_digest', 'schema_ref', 'prior_revision', 'document', 'stored_at'] as const;

/** fitsSql in memory, against the record's head as read (undefined: the record has none). */
export const fitsHead = (row: BatchRecord, head: { revision_id: string; content_digest: string } | undefined): boolean =>
  head === undefined ? row.prior_revision === null : row.prior_revision === head.revision_id && row.prior_digest === head.content_digest;

/**
 * A batch's record revisions and their heads with no head read before the
 * write (issue #24; PostgreSQL's form, where a read is a round trip). Each
 * revision is written only where it fits its head (fitsSql), and reported;
 * then, in one statement, the head of each that
 * fits (the same condition: the records written do not change it) is
 * inserted (a first revision) or advanced only while the head row itself
 * still names its prior (a first revision's prior is null: a head that
 * exists is left alone). The head row is compared, not re-read in a
 * subquery: PostgreSQL's ON CONFLICT judges the row as it is once a
 * concurrent writer is done with it, a subquery keeps the statement's
 * snapshot. So every revision written moves one head — unless another
 * transaction moved it meanwhile, which the `heads` report shows short.
 * Revisions that do not fit are left to the caller (TxBatch.flush: the
 * single-row rules name the refusal).
 */
export function recordParts(rows: readonly BatchRecord[]): Part[] {
  if (rows.length === 0) return [];
  return [
    {
      key: 'records',
      rows: rows.length,
      sql: (p) =>
        `INSERT INTO records(${RECORD_COLS.join(', ')}) SELECT ${RECORD_COLS.map((_, i) => `v.column${i + 1}`).join(', ')}
         FROM (VALUES ${valuesSql(rows.length, 8, p)}) AS v WHERE ${fitsSql({ record: 'v.column1', prior: 'v.column5', digest: 'v.column8' })} RETURNING revision_id`,
      params: rows.flatMap((r) => [...RECORD_COLS.map((c) => r[c]), r.prior_digest]),
      reports: 'revisions',
    },
    {
      key: 'record_heads',
      rows: rows.length,
      sql: (p) =>
        `WITH v(record_id, revision_id, prior, prior_digest) AS (VALUES ${valuesSql(rows.length, 4, p)})
         INSERT INTO record_heads(record_id, revision_id) SELECT record_id, revision_id FROM v
         WHERE ${fitsSql({ record: 'v.record_id', prior: 'v.prior', digest: 'v.prior_digest' })}
         ON CONFLICT (record_id) DO UPDATE SET revision_id = excluded.revision_id
         WHERE record_heads.revision_id = (SELECT prior FROM v WHERE v.record_id = excluded.record_id) RETURNING 1`,
      params: rows.flatMap((r) => [r.record_id, r.revision_id, r.prior_revision, r.prior_digest]),
      reports: 'heads',
    },
  ];
}

/**
 * Revisions a caller found to fit their heads (fitsHead, under a lock that
 * keeps them so), and their heads: plain multi-row writes. SQLite's form for
 * a batch its record_appends view refused (sqlite/appends.ts: a revision did
 * not fit), whose single writer keeps what it read exact.
 */
export const checkedRecordParts = (rows: readonly BatchRecord[]): Part[] => [
  insertPart(RECORD_ROWS, rows),
  insertPart(RECORD_HEAD_ROWS, rows.map((r) => ({ record_id: r.record_id, revision_id: r.revision_id }))),
];

const RECORD_ROWS = cols<RecordRow>('records', [...RECORD_COLS]);
const RECORD_HEAD_ROWS = cols<{ record_id: string; revision_id: string }>('record_heads', ['record_id', 'revision_id'], ' ON CONFLICT (record_id) DO UPDATE SET revision_id = excluded.revision_id');

/**
 * A dialect's own form of some of a batch's tables: `records` (recordParts,
 * or none where the adapter writes them itself); `control`, the events with
 * their heads, and `journal`, the entries with the charges of their balances,
 * where a dialect writes each pair in one statement (sqlite/appends.ts).
 */
export interface DialectParts {
  records: readonly Part[];
  control?: readonly Part[];
  journal?: readonly Part[];
}

/** A batch's writes, table by table in the order they are written, leaving out empty tables. */
export function batchParts(w: BatchWrites, own: DialectParts): Part[] {
  const parts = [
    ...nodeParts(w.nodes, w.balances),
    ...own.records,
    insertPart(CONTENT_ROWS, w.contents),
    ...(own.control ?? [insertPart(EVENT_ROWS, w.events), insertPart(HEAD_ROWS, w.heads)]),
    insertPart(RESERVATION_ROWS, w.reservations),
    ...(own.journal ?? [insertPart(ENTRY_ROWS, w.entries)]),
    insertPart(WORK_ROWS, w.work.map((r) => ({ ...{}, ...r, gateway_id: r.gateway_id ?? null }))),
    donePart(w.done),
  ];
  return parts.filter((x) => x.rows > 0);
}

/** New budget nodes, then their balances (a balance names its node). */
export const nodeParts = (nodes: readonly NodeRow[], balances: readonly BalanceRow[]): Part[] =>
  [insertPart(NODE_ROWS, nodes), insertPart(BALANCE_ROWS, balances)].filter((x) => x.rows > 0);

/** PostgreSQL caps a statement's parameters (65,535); a batch beyond this many is written statement by statement. */
export const MAX_PARAMS = 30_000;

/**
 * Several statements as one: each a data-modifying WITH (PostgreSQL runs
 * every one of them to completion, on one snapshot; a foreign key between
 * them is checked at the end of the statement). Numbered from 1 across all.
 * Its one row has a column per report kind of the parts (Part.reports).
 */
export function allInOneSql(parts: readonly Part[], p: Ph, expected?: Readonly<Record<Report, number>>): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const ctes = parts.map((x, i) => {
    const offset = params.length;
    params.push(...x.params);
    return `w${i} AS (${x.sql((n) => p(offset + n))})`;
  });
  if (expected) {
    // One condition per part that reports, each a count (a revision id is written once); a kind no part reports was planned as none.
    const checks = parts.flatMap((x, i) => (!x.reports ? [] : [`(SELECT count(*) FROM w${i}) = ${p(params.push(expected[x.reports]))}`]));
    return { sql: `WITH ${ctes.join(', ')} SELECT ${PLANNED_FN}(${checks.length === 0 ? 'true' : checks.join(' AND ')}) AS planned`, params };
  }
  const select = parts.flatMap((x, i) =>
    !x.reports ? [] : [`(SELECT ${x.reports === 'revisions' ? "coalesce(array_agg(revision_id), '{}')" : 'count(*)'} FROM w${i}) AS ${x.reports}`],
  );
  return { sql: `WITH ${ctes.join(', ')} SELECT ${select.length === 0 ? '1 AS n' : select.join(', ')}`, params };
}

/**
 * PostgreSQL's check that a batch wrote what its plan expected
 * (postgres/transaction.ts): true, or it fails the statement with SQLSTATE
 * BT001, so that a COMMIT sent behind it is skipped.
 */
export const PLANNED_FN = 'baton_planned';

export const PLANNED_FN_SQL = `CREATE OR REPLACE FUNCTION ${PLANNED_FN}(ok boolean) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION 'the batch did not write what its plan expected' USING ERRCODE = 'BT001';
  END IF;
  RETURN true;
END $$`;

/** What a batch's statements reported, gathered by kind (Part.reports): revisions written, heads moved, balances charged. */
export interface Reported {
  revisions: string[];
  heads: number;
  charges: number;
}

export const noneReported = (): Reported => ({ revisions: [], heads: 0, charges: 0 });

/** Adds one part's answer to `into`: the rows its RETURNING gave (revision ids, or one row per changed row). */
export function gather(into: Reported, kind: Report | undefined, rows: readonly unknown[]): void {
  if (kind === 'revisions') into.revisions.push(...rows.map((r) => (r as { revision_id: string }).revision_id));
  else if (kind) into[kind] += rows.length;
}

/** Refuses two changes to one balance row in one statement (UPDATE … FROM would apply only one of them). */
export function assertOnePerBalance(deltas: readonly BalanceChange[]): void {
  const keys = new Set(deltas.map((d) => `${d.node_id}\u0000${d.dimension}`));
  if (keys.size !== deltas.length) throw new Error('two changes to one balance row in one statement');
}
