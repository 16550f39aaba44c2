/**
 * PostgreSQL answers to the transaction primitives, on the one client that
 * holds the transaction. Heads that are only fenced are locked FOR SHARE,
 * heads and balances that change FOR UPDATE; callers read them in sorted
 * order, so concurrent admissions lock in the same order and do not deadlock.
 */
import type { StreamId } from '../../control/scope.ts';
import { INSERT_CONTENT_SQL } from '../content-sql.ts';
import { retainedSql } from '../capacity.ts';
import type { BalanceChange, BalanceRow, BatchWrites, HeadRow, NodeRow, RecordRow, ReservationRow, RootCapacity } from '../tx/ops.ts';
import type { Queryable, StatementResult } from './pipeline.ts';
import { lockSql, READS, type ReadSpec } from './reads.ts';
import type { PgTxOps } from './transaction.ts';
import { allInOneSql, assertOnePerBalance, batchParts, gather, MAX_PARAMS, noneReported, nodeParts, recordParts, type Part, type Reported } from '../tx/rows-sql.ts';

// int8 comes back as BigInt (store.ts type parser): every row read here reaches its program through its zod
// schema (tx/rows.ts checkedResult), which reads positions and depths as numbers.

export function pgOps(client: Queryable): PgTxOps {
  const one = async <T>(sql: string, params: unknown[]): Promise<T | undefined> => (await client.query(sql, params)).rows[0] as T | undefined;
  const exec = async (sql: string, params: unknown[]): Promise<void> => {
    await client.query(sql, params);
  };
  /** A read's statements one after another (reads.ts: the same ones a transaction may send ahead). */
  const read = async (spec: ReadSpec): Promise<unknown> => {
    const results: StatementResult[] = [];
    for (const st of spec.statements) results.push(await client.query(st.text, st.values));
    return spec.decode(results);
  };
  const count = async (sql: string, params: unknown[]): Promise<number> => Number((await one<{ n: bigint }>(sql, params))?.n ?? 0n);
  const insert = (table: string, row: object) => {
    const cols = Object.keys(row);
    return exec(`INSERT INTO ${table}(${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`, Object.values(row));
  };
  /** Whether `parts` fit one statement's parameters. */
  const withinCap = (parts: readonly Part[]) => parts.reduce((n, x) => n + x.params.length, 0) <= MAX_PARAMS;
  /**
   * Several tables' rows in one statement (one round trip, issue #24); table
   * by table past the parameter cap. Answers what the parts reported (Part.reports).
   */
  const insertParts = async (parts: readonly Part[]): Promise<Reported> => {
    const out = noneReported();
    if (parts.length === 1 || !withinCap(parts)) {
      for (const x of parts) gather(out, x.reports, (await client.query(x.sql((i) => `$${i}`), x.params)).rows);
      return out;
    }
    if (parts.length === 0) return out;
    const { sql, params } = allInOneSql(parts, (n) => `$${n}`);
    const row = await one<{ revisions?: string[]; heads?: unknown; charges?: unknown }>(sql, params);
    return { revisions: row?.revisions ?? [], heads: Number(row?.heads ?? 0), charges: Number(row?.charges ?? 0) };
  };
  const charged = 'UPDATE ledger_balances b SET consumed = b.consumed + v.c, reserved = b.reserved + v.r';
  /** Adds each change to its balance row; a part of the batch's one statement, so its rows must exist before it. */
  const chargePart = (deltas: readonly BalanceChange[]): Part => {
    assertOnePerBalance(deltas);
    return {
      key: 'ledger_balances:charge',
      rows: deltas.length,
      sql: (p) => `${charged} FROM unnest(${p(1)}::text[], ${p(2)}::text[], ${p(3)}::bigint[], ${p(4)}::bigint[]) AS v(node_id, dimension, c, r)
         WHERE b.node_id = v.node_id AND b.dimension = v.dimension RETURNING 1`,
      params: [deltas.map((d) => d.node_id), deltas.map((d) => d.dimension), deltas.map((d) => d.consumed.toString()), deltas.map((d) => d.reserved.toString())],
      reports: 'charges',
    };
  };
  /** A batch's writes, in order: its tables (records as recordParts), then the charges of stored balance rows. */
  const writeParts = (w: BatchWrites): Part[] => {
    const parts = batchParts(w, { records: recordParts(w.records) });
    return w.charges.length === 0 ? parts : [...parts, chargePart(w.charges)];
  };
  const addToBalances = async (deltas: readonly BalanceChange[]): Promise<void> => {
    if (deltas.length === 0) return;
    if ((await insertParts([chargePart(deltas)])).charges !== deltas.length) throw new Error('a balance row is missing');
  };
  return {
    nodes: (ids, lock) => read(READS.nodes(ids, lock)) as Promise<NodeRow[]>,
    streamHeads: (streams, lock) => read(READS.streamHeads(streams, lock)) as Promise<HeadRow[]>,
    // The charges ride in the batch's one statement: a CTE sees the rows as they were before it, which is
    // enough, as they charge stored rows only (the rows of nodes the batch inserts go in charged, TxBatch.journal).
    writeBatch: async (w) => {
      const { revisions, heads, charges } = await insertParts(writeParts(w));
      if (charges !== w.charges.length) throw new Error('a balance row is missing');
      return { revisions, heads };
    },
    plannedWrite: (w) => {
      const parts = writeParts(w);
      if (parts.length === 0 || !withinCap(parts)) return undefined;
      const { sql, params } = allInOneSql(parts, (n) => `$${n}`, { revisions: w.records.length, heads: w.records.length, charges: w.charges.length });
      return { text: sql, values: params };
    },
    insertNodes: async (nodes, balances) => void (await insertParts(nodeParts(nodes, balances))),
    addToBalances,
    recordByRevision: (id) => one<RecordRow>('SELECT * FROM records WHERE revision_id = $1', [id]),
    recordHead: async (id) => (await one<{ revision_id: string }>('SELECT revision_id FROM record_heads WHERE record_id = $1 FOR UPDATE', [id]))?.revision_id,
    insertRecord: (row) => insert('records', row),
    insertContent: (row) => exec(INSERT_CONTENT_SQL((n) => `$${n}`), [row.digest, row.kind, row.document, row.stored_at]),
    setRecordHead: (id, rev) =>
      exec('INSERT INTO record_heads(record_id, revision_id) VALUES ($1, $2) ON CONFLICT (record_id) DO UPDATE SET revision_id = excluded.revision_id', [id, rev]),

    streamHead: (s: StreamId, lock) => one<HeadRow>(`SELECT * FROM control_heads WHERE project_id = $1 AND branch_id = $2${lockSql(lock)}`, [s.project_id, s.branch_id]),
    eventByIdempotency: (s, key) =>
      one('SELECT * FROM control_events WHERE project_id = $1 AND branch_id = $2 AND idempotency_key = $3', [s.project_id, s.branch_id, key]),
    insertEvent: (row) => insert('control_events', row),
    upsertHead: (row) =>
      exec(
        `INSERT INTO control_heads(project_id, branch_id, scope_kind, position, event_id, event_digest, state) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (project_id, branch_id) DO UPDATE SET position = excluded.position, event_id = excluded.event_id,
           event_digest = excluded.event_digest, state = excluded.state`,
        [row.project_id, row.branch_id, row.scope_kind, row.position, row.event_id, row.event_digest, row.state],
      ),

    lineage: (id, max, lock) => read(READS.lineage(id, max, lock)) as Promise<NodeRow[]>,
    node: (id, lock) => one<NodeRow>(`SELECT * FROM ledger_nodes WHERE node_id = $1${lockSql(lock)}`, [id]),
    countDescendants: (root) => count('SELECT count(*) AS n FROM ledger_nodes WHERE root_id = $1 AND parent_id IS NOT NULL', [root]),
    rootCapacity: (...args) => read(READS.rootCapacity(...args)) as Promise<RootCapacity>,
    countRetained: (ns, at) => count(retainedSql((name) => (name === 'ns' ? '$1' : '$2'), 'stripes'), [ns, at]),
    // Row locks: the order of reads is the order of locks (src/ledger/programs.ts admitIn).
    serialWriters: async () => false,
    lockPreset: async (preset) => void (await read(READS.lockPreset(preset))),
    balances: async (ids, lock) =>
      (await client.query(`SELECT * FROM ledger_balances WHERE node_id = ANY($1) ORDER BY node_id, dimension${lockSql(lock)}`, [ids])).rows as BalanceRow[],
    addToBalance: async (id, dim, c, r) => {
      const res = await client.query('UPDATE ledger_balances SET consumed = consumed + $1, reserved = reserved + $2 WHERE node_id = $3 AND dimension = $4', [c, r, id, dim]);
      if (res.rowCount !== 1) throw new Error(`balance row ${id}/${dim} missing`);
    },
    lowerCeiling: async (id, dim, ceiling) => {
      await client.query('UPDATE ledger_balances SET ceiling = $1 WHERE node_id = $2 AND dimension = $3 AND ceiling > $1', [ceiling, id, dim]);
    },
    reservationByEffect: (id) => one<ReservationRow>('SELECT * FROM ledger_reservations WHERE effect_id = $1', [id]),
    reservationsClaiming: (effectId, reservationId) => read(READS.reservationsClaiming(effectId, reservationId)) as Promise<ReservationRow[]>,
    reservation: (id, lock) => one<ReservationRow>(`SELECT * FROM ledger_reservations WHERE reservation_id = $1${lockSql(lock)}`, [id]),
    resolveReservation: (id, status, settlement, at) =>
      exec('UPDATE ledger_reservations SET status = $1, settlement = $2, settled_at = $3 WHERE reservation_id = $4', [status, settlement, at, id]),
    resolveHeld: (...args) => read(READS.resolveHeld(...args)) as Promise<ReservationRow | undefined>,
    insertEntry: (row) => insert('ledger_entries', row),
  };
}
