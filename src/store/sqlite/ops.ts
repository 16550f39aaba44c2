/**
 * SQLite answers to the transaction primitives. Locks are no-ops here: every
 * write transaction is BEGIN IMMEDIATE, so one writer at a time holds the
 * whole database and reads inside it are already serialised.
 */
import type { StreamId } from '../../control/scope.ts';
import type { BalanceRow, BatchRecord, EntryRow, EventRow, HeadRow, NodeRow, RecordRow, ReservationRow, RootCapacity, TxOps } from '../tx/ops.ts';
import { assertOnePerBalance, batchParts, checkedRecordParts, fitsHead, gather, lineageSql, noneReported, nodeParts, valuesSql, type Part, type Reported } from '../tx/rows-sql.ts';
import type Database from 'better-sqlite3';
import { checkedRow, RecordHeadRowSchema } from '../tx/rows.ts';
import type { Db } from './database.ts';
import { INSERT_CONTENT_SQL } from '../content-sql.ts';
import { capacityOf, retainedSql, rootCapacitySql } from '../capacity.ts';
import { controlAppends, journalAppends, recordAppends, TRIGGER_REFUSAL } from './appends.ts';

type Counts = { [K in keyof RootCapacity]?: bigint };

// Integers come back as BigInt (database.ts safeIntegers): every row read here reaches a program or a store
// read through its zod schema (tx/rows.ts, compose.ts), which reads positions and depths as numbers.

export function sqliteOps(db: Db): TxOps {
  const q = {
    recordByRevision: db.prepare<[string], RecordRow>('SELECT * FROM records WHERE revision_id = ?'),
    recordHead: db.prepare<[string], { revision_id: string }>('SELECT revision_id FROM record_heads WHERE record_id = ?'),
    insertRecord: db.prepare(
      `INSERT INTO records(record_id, revision_id, content_digest, schema_ref, prior_revision, document, stored_at)
       VALUES (@record_id, @revision_id, @content_digest, @schema_ref, @prior_revision, @document, @stored_at)`,
    ),
    insertContent: db.prepare(INSERT_CONTENT_SQL(() => '?')),
    setRecordHead: db.prepare(
      'INSERT INTO record_heads(record_id, revision_id) VALUES (?, ?) ON CONFLICT(record_id) DO UPDATE SET revision_id = excluded.revision_id',
    ),
    streamHead: db.prepare<[string, string], HeadRow>('SELECT * FROM control_heads WHERE project_id = ? AND branch_id = ?'),
    eventByIdem: db.prepare<[string, string, string], EventRow>(
      'SELECT * FROM control_events WHERE project_id = ? AND branch_id = ? AND idempotency_key = ?',
    ),
    insertEvent: db.prepare(
      `INSERT INTO control_events(project_id, branch_id, position, event_id, event_type, idempotency_key, input_digest, event_digest, document)
       VALUES (@project_id, @branch_id, @position, @event_id, @event_type, @idempotency_key, @input_digest, @event_digest, @document)`,
    ),
    upsertHead: db.prepare(
      `INSERT INTO control_heads(project_id, branch_id, scope_kind, position, event_id, event_digest, state)
       VALUES (@project_id, @branch_id, @scope_kind, @position, @event_id, @event_digest, @state)
       ON CONFLICT(project_id, branch_id) DO UPDATE SET position = excluded.position, event_id = excluded.event_id,
         event_digest = excluded.event_digest, state = excluded.state`,
    ),
    node: db.prepare<[string], NodeRow>('SELECT * FROM ledger_nodes WHERE node_id = ?'),
    lineage: db.prepare<[string, number], NodeRow>(lineageSql(() => '?', '')),
    countDescendants: db.prepare<[string], { n: bigint }>('SELECT count(*) AS n FROM ledger_nodes WHERE root_id = ? AND parent_id IS NOT NULL'),
    countRetained: db.prepare<[{ ns: string; at: string }], { n: bigint }>(retainedSql((name) => `@${name}`, 'counter')),
    addToBalance: db.prepare(
      'UPDATE ledger_balances SET consumed = consumed + ?, reserved = reserved + ? WHERE node_id = ? AND dimension = ?',
    ),
    lowerCeiling: db.prepare('UPDATE ledger_balances SET ceiling = ? WHERE node_id = ? AND dimension = ? AND ceiling > ?'),
    reservationByEffect: db.prepare<[string], ReservationRow>('SELECT * FROM ledger_reservations WHERE effect_id = ?'),
    reservationsClaiming: db.prepare<[string, string], ReservationRow>('SELECT * FROM ledger_reservations WHERE effect_id = ? OR reservation_id = ?'),
    reservation: db.prepare<[string], ReservationRow>('SELECT * FROM ledger_reservations WHERE reservation_id = ?'),
    resolveReservation: db.prepare('UPDATE ledger_reservations SET status = ?, settlement = ?, settled_at = ? WHERE reservation_id = ?'),
    resolveHeld: db.prepare<[string, string, string | null, string], ReservationRow>(
      "UPDATE ledger_reservations SET status = ?, settlement = ?, settled_at = ? WHERE reservation_id = ? AND status = 'held' RETURNING *",
    ),
    insertEntry: db.prepare(
      `INSERT INTO ledger_entries(reservation_id, node_id, dimension, d_consumed, d_reserved, reason, at)
       VALUES (@reservation_id, @node_id, @dimension, @d_consumed, @d_reserved, @reason, @at)`,
    ),
  };
  const n = (row: { n: bigint } | undefined) => Number(row?.n ?? 0n);
  // One statement per list length (a chain has at most 17 nodes), prepared once.
  const balancesFor = new Map<number, Database.Statement<string[], BalanceRow>>();
  const balances = (ids: readonly string[]): BalanceRow[] => {
    let stmt = balancesFor.get(ids.length);
    if (!stmt) {
      stmt = db.prepare<string[], BalanceRow>(`SELECT * FROM ledger_balances WHERE node_id IN (${ids.map(() => '?').join(',')}) ORDER BY node_id, dimension`);
      if (ids.length <= 64) balancesFor.set(ids.length, stmt);
    }
    return stmt.all(...ids);
  };
  // Multi-row statements, prepared once per (text kind, row count): a turn writes a handful of rows per table.
  const many = new Map<string, Database.Statement>();
  const prepared = (key: string, n: number, sql: () => string): Database.Statement => {
    const k = `${key}:${n}`;
    let stmt = many.get(k);
    if (!stmt) {
      stmt = db.prepare(sql());
      if (n <= 64) many.set(k, stmt);
    }
    return stmt;
  };
  const q1 = () => '?';
  const insertParts = (parts: readonly Part[]): Reported => {
    const out = noneReported();
    for (const x of parts) {
      const stmt = prepared(x.key, x.rows, () => x.sql(q1));
      if (x.reports) gather(out, x.reports, stmt.all(...x.params));
      else stmt.run(...x.params);
    }
    return out;
  };
  const streamHeads = (streams: readonly StreamId[]): HeadRow[] =>
    streams.length === 0
      ? []
      : (prepared('heads', streams.length, () =>
          `SELECT h.* FROM (VALUES ${valuesSql(streams.length, 2, q1)}) s JOIN control_heads h ON h.project_id = s.column1 AND h.branch_id = s.column2 ORDER BY h.project_id, h.branch_id`,
        ).all(...streams.flatMap((x) => [x.project_id, x.branch_id])) as HeadRow[]);
  /** The revisions that fit their heads, read in one statement (BEGIN IMMEDIATE keeps them so until the write). */
  const fitting = (rows: readonly BatchRecord[]): BatchRecord[] => {
    if (rows.length === 0) return [];
    const heads = prepared('recordHeads', rows.length, () =>
      `SELECT h.record_id, h.revision_id, r.content_digest FROM (VALUES ${valuesSql(rows.length, 1, q1)}) s
       JOIN record_heads h ON h.record_id = s.column1 JOIN records r ON r.revision_id = h.revision_id`,
    ).all(...rows.map((r) => r.record_id));
    const byRecord = new Map(heads.map((h) => checkedRow(RecordHeadRowSchema, h, 'recordHeads')).map((h) => [h.record_id, h]));
    return rows.filter((r) => fitsHead(r, byRecord.get(r.record_id)));
  };
  /**
   * Writes the revisions that fit their heads and returns their ids: all of
   * them in one statement, or — when one does not fit and the view refuses
   * the statement — those the heads, read first, say fit (the rest are left
   * to the single-row rules, TxBatch.flush).
   */
  const appendRecords = (rows: readonly BatchRecord[]): string[] => {
    if (rows.length === 0) return [];
    try {
      insertParts([recordAppends(rows)]);
      return rows.map((r) => r.revision_id);
    } catch (err) {
      if ((err as { code?: unknown }).code !== TRIGGER_REFUSAL) throw err;
    }
    const fit = fitting(rows);
    if (fit.length > 0) insertParts(checkedRecordParts(fit));
    return fit.map((r) => r.revision_id);
  };
  const addToBalances: TxOps['addToBalances'] = (deltas) => {
    if (deltas.length === 0) return;
    assertOnePerBalance(deltas);
    const info = prepared('addToBalances', deltas.length, () =>
      `UPDATE ledger_balances SET consumed = consumed + v.column3, reserved = reserved + v.column4
       FROM (VALUES ${valuesSql(deltas.length, 4, q1)}) AS v WHERE ledger_balances.node_id = v.column1 AND ledger_balances.dimension = v.column2`,
    ).run(...deltas.flatMap((d) => [d.node_id, d.dimension, d.consumed, d.reserved]));
    if (info.changes !== deltas.length) throw new Error('a balance row is missing');
  };
  return {
    nodes: (ids) =>
      ids.length === 0
        ? []
        : (prepared('nodes', ids.length, () => `SELECT * FROM ledger_nodes WHERE node_id IN (${ids.map(() => '?').join(', ')})`).all(...ids) as NodeRow[]),
    streamHeads: (streams) => streamHeads(streams),
    // The revisions first, through their view (appends.ts), as no other row of a batch names them; then the
    // rest, events with their heads and entries with their charges through theirs.
    writeBatch: (w) => {
      const revisions = appendRecords(w.records);
      const journal = journalAppends(w.entries, w.charges);
      insertParts(batchParts(w, { records: [], control: controlAppends(w.events, w.heads), journal: journal.parts }));
      addToBalances(journal.apart);
      return { revisions, heads: revisions.length };
    },
    insertNodes: (nodes, balances) => void insertParts(nodeParts(nodes, balances)),
    addToBalances,
    recordByRevision: (id) => q.recordByRevision.get(id),
    recordHead: (id) => q.recordHead.get(id)?.revision_id,
    insertRecord: (row) => void q.insertRecord.run(row),
    insertContent: (row) => void q.insertContent.run(row.digest, row.kind, row.document, row.stored_at),
    setRecordHead: (id, rev) => void q.setRecordHead.run(id, rev),
    streamHead: (s: StreamId) => q.streamHead.get(s.project_id, s.branch_id),
    eventByIdempotency: (s, key) => q.eventByIdem.get(s.project_id, s.branch_id, key),
    insertEvent: (row: EventRow) => void q.insertEvent.run(row),
    upsertHead: (row: HeadRow) => void q.upsertHead.run(row),
    node: (id) => q.node.get(id),
    lineage: (id, max) => q.lineage.all(id, max),
    countDescendants: (root) => n(q.countDescendants.get(root)),
    // The prune is the root's insert trigger's (capacity.ts PRUNE_ON_ISSUE_SQLITE): `before` is PostgreSQL's.
    rootCapacity: (ns, at, _before, preset, claims) =>
      // Its four forms (with or without a preset, with or without claims), each prepared once.
      capacityOf(
        prepared(`capacity:${preset !== undefined}:${claims !== undefined}`, 1, () => rootCapacitySql((name) => `@${name}`, preset !== undefined, 'counter', claims !== undefined)).get({
          ns,
          at,
          ...(preset && { preset: preset.preset_id, since: preset.since }),
          ...(claims && { effect: claims.effect_id, reservation: claims.reservation_id }),
        }) as Counts | undefined,
      ),
    countRetained: (ns, at) => n(q.countRetained.get({ ns, at })),
    // BEGIN IMMEDIATE already makes every writer serial.
    serialWriters: () => true,
    lockPreset: () => undefined,
    balances: (ids) => (ids.length === 0 ? [] : balances(ids)),
    addToBalance: (id, dim, c, r) => {
      const info = q.addToBalance.run(c, r, id, dim);
      if (info.changes !== 1) throw new Error(`balance row ${id}/${dim} missing`);
    },
    lowerCeiling: (id, dim, ceiling) => void q.lowerCeiling.run(ceiling, id, dim, ceiling),
    reservationByEffect: (id) => q.reservationByEffect.get(id),
    reservationsClaiming: (effectId, reservationId) => q.reservationsClaiming.all(effectId, reservationId),
    reservation: (id) => q.reservation.get(id),
    resolveReservation: (id, status, settlement, at) => void q.resolveReservation.run(status, settlement, at, id),
    resolveHeld: (id, status, settlement, at) => q.resolveHeld.get(status, settlement, at, id),
    insertEntry: (row: EntryRow) => void q.insertEntry.run(row),
  };
}
