/**
 * SQLite migration 19 (issue #24, "one set-oriented commit"): three views a
 * batch appends through, each an INSTEAD OF trigger that writes a row and
 * what the row implies in the same statement — where PostgreSQL puts every
 * table of a batch in one statement (rows-sql.ts allInOneSql), SQLite has no
 * data-modifying WITH, and a statement of its own per derived table cost a
 * statement per table per transaction.
 *
 * - record_appends: a record revision, checked against its record's head
 *   (rows-sql.ts fitsSql, the rule of records/put.ts) and then made the head.
 *   A revision that does not fit aborts the whole statement (RAISE(ABORT)
 *   undoes only the statement), and the adapter falls back to reading the
 *   heads first, so the single-row rules name the refusal as before.
 * - control_appends: a control event and its stream's head (RW-003 §1.2:
 *   the head is the stream's last event). Rows go in stream order, so the
 *   last row of a stream leaves its head.
 * - ledger_journal: a ledger entry, and, where the row carries a charge, that
 *   charge added to its balance row (ADR-0014: the journal and the balance
 *   move together); a missing balance row aborts.
 *
 * The tables, their constraints and the single-row writes are unchanged:
 * these views only save statements.
 */
import type { BalanceChange, BatchRecord, EntryRow, EventRow, HeadRow } from '../tx/ops.ts';
import { fitsSql, valuesSql, type Part } from '../tx/rows-sql.ts';

/** The error code better-sqlite3 gives a RAISE(ABORT) from a trigger. */
export const TRIGGER_REFUSAL = 'SQLITE_CONSTRAINT_TRIGGER';

const RECORD = ['record_id', 'revision_id', 'content_digest', 'schema_ref', 'prior_revision', 'document', 'stored_at'] as const;
const EVENT = ['project_id', 'branch_id', 'position', 'event_id', 'event_type', 'idempotency_key', 'input_digest', 'event_digest', 'document'] as const;
const ENTRY = ['reservation_id', 'node_id', 'dimension', 'd_consumed', 'd_reserved', 'reason', 'at'] as const;
const HEAD = ['project_id', 'branch_id', 'scope_kind', 'position', 'event_id', 'event_digest', 'state'] as const;

/** The views' columns, in the order their rows are bound. */
export const RECORD_APPEND_COLS = [...RECORD, 'prior_digest'] as const;
export const CONTROL_APPEND_COLS = [...EVENT, 'scope_kind', 'state'] as const;
export const JOURNAL_COLS = [...ENTRY, 'charge', 'charge_consumed', 'charge_reserved'] as const;

const news = (cols: readonly string[]) => cols.map((c) => `NEW.${c}`).join(', ');
const nulls = (cols: readonly string[]) => cols.map((c) => `NULL AS ${c}`).join(', ');

/** The records' append view; migration 21 makes it again over the rebuilt records table (core-sql.ts). */
export const RECORD_APPENDS_VIEW_SQLITE = `
  CREATE VIEW record_appends AS SELECT ${RECORD.join(', ')}, NULL AS prior_digest FROM records WHERE 0;
  CREATE TRIGGER record_appends_write INSTEAD OF INSERT ON record_appends BEGIN
    SELECT RAISE(ABORT, 'record revision does not fit its head')
      WHERE NOT (${fitsSql({ record: 'NEW.record_id', prior: 'NEW.prior_revision', digest: 'NEW.prior_digest' })});
    INSERT INTO records(${RECORD.join(', ')}) VALUES (${news(RECORD)});
    INSERT INTO record_heads(record_id, revision_id) VALUES (NEW.record_id, NEW.revision_id)
      ON CONFLICT (record_id) DO UPDATE SET revision_id = excluded.revision_id;
  END;`;

export const APPEND_VIEWS_SQLITE = `${RECORD_APPENDS_VIEW_SQLITE}
  CREATE VIEW control_appends AS SELECT ${EVENT.join(', ')}, ${nulls(['scope_kind', 'state'])} FROM control_events WHERE 0;
  CREATE TRIGGER control_appends_write INSTEAD OF INSERT ON control_appends BEGIN
    INSERT INTO control_events(${EVENT.join(', ')}) VALUES (${news(EVENT)});
    INSERT INTO control_heads(${HEAD.join(', ')}) VALUES (${news(HEAD)})
      ON CONFLICT (project_id, branch_id) DO UPDATE SET position = excluded.position, event_id = excluded.event_id,
        event_digest = excluded.event_digest, state = excluded.state;
  END;
  CREATE VIEW ledger_journal AS SELECT ${ENTRY.join(', ')}, ${nulls(['charge', 'charge_consumed', 'charge_reserved'])} FROM ledger_entries WHERE 0;
  CREATE TRIGGER ledger_journal_write INSTEAD OF INSERT ON ledger_journal BEGIN
    INSERT INTO ledger_entries(${ENTRY.join(', ')}) VALUES (${news(ENTRY)});
    SELECT RAISE(ABORT, 'a balance row is missing')
      WHERE NEW.charge = 1 AND NOT EXISTS (SELECT 1 FROM ledger_balances WHERE node_id = NEW.node_id AND dimension = NEW.dimension);
    UPDATE ledger_balances SET consumed = consumed + NEW.charge_consumed, reserved = reserved + NEW.charge_reserved
      WHERE NEW.charge = 1 AND node_id = NEW.node_id AND dimension = NEW.dimension;
  END;
`;

const viewPart = (view: string, cols: readonly string[], rows: readonly unknown[][]): Part => ({
  key: view,
  rows: rows.length,
  sql: (p) => `INSERT INTO ${view}(${cols.join(', ')}) VALUES ${valuesSql(rows.length, cols.length, p)}`,
  params: rows.flat(),
});

/** A batch's record revisions as one statement; it aborts, writing none, unless every one fits its head. */
export const recordAppends = (rows: readonly BatchRecord[]): Part =>
  viewPart('record_appends', RECORD_APPEND_COLS, rows.map((r) => [...RECORD.map((c) => r[c]), r.prior_digest]));

const streamKey = (r: { project_id: string; branch_id: string }) => `${r.project_id}\u0000${r.branch_id}`;

/**
 * A batch's events and heads as one statement, each event carrying its
 * stream's kind and final state; undefined where the heads are not exactly
 * the last events of the streams appended to (then they are written apart).
 */
export function controlAppends(events: readonly EventRow[], heads: readonly HeadRow[]): Part[] | undefined {
  const byStream = new Map(heads.map((h) => [streamKey(h), h]));
  const last = new Map<string, EventRow>();
  for (const e of events) last.set(streamKey(e), e);
  if (last.size !== byStream.size) return undefined;
  for (const [key, e] of last) {
    const h = byStream.get(key);
    if (!h || Number(h.position) !== Number(e.position) || h.event_id !== e.event_id || h.event_digest !== e.event_digest) return undefined;
  }
  if (events.length === 0) return [];
  const rows = events.map((e) => {
    const h = byStream.get(streamKey(e))!;
    return [...EVENT.map((c) => e[c]), h.scope_kind, h.state];
  });
  return [viewPart('control_appends', CONTROL_APPEND_COLS, rows)];
}

/**
 * A batch's entries as one statement, each charge (one per balance row,
 * the sum of its entries since the row was last charged: TxBatch.journal)
 * riding on the last entry of its row; `apart`: charges with no entry of
 * their row here, to be added on their own.
 */
export function journalAppends(entries: readonly EntryRow[], charges: readonly BalanceChange[]): { parts: Part[]; apart: BalanceChange[] } {
  const rows = entries.map((e) => [...ENTRY.map((c) => e[c]), 0, 0n, 0n]);
  const lastOf = new Map<string, number>();
  entries.forEach((e, i) => lastOf.set(`${e.node_id}\u0000${e.dimension}`, i));
  const apart: BalanceChange[] = [];
  for (const c of charges) {
    const i = lastOf.get(`${c.node_id}\u0000${c.dimension}`);
    if (i === undefined || rows[i]![ENTRY.length] === 1) apart.push(c);
    else rows[i]!.splice(ENTRY.length, 3, 1, c.consumed, c.reserved);
  }
  return { parts: rows.length === 0 ? [] : [viewPart('ledger_journal', JOURNAL_COLS, rows)], apart };
}
