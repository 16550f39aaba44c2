/**
 * ADR-0014 ledger capacity, as SQL shared by both adapters. What counts is
 * what still holds capacity: roots that are unexpired, not terminal and not
 * yet fully settled, and records that are live (unexpired budget nodes,
 * unresolved reservations). Settled history is kept — nothing is erased —
 * but it does not crowd out new work; unresolved reservations always do.
 */
import { LIVE_ROOT_PRUNE_MARGIN_S } from '../ledger/types.ts';
import type { RootCapacity } from './tx/ops.ts';
import { UNRESOLVED_COUNT, unresolvedIn, type Unresolved } from './unresolved-sql.ts';

const TERMINAL = "('revoked','expired','retired','superseded')";

/** `p(name)` renders a placeholder in the adapter's dialect. */
export type Placeholder = (name: 'ns' | 'at') => string;

/** A root still holds capacity while nothing was admitted under it yet, or something is unresolved. */
const ROOT_LIVE = (root: string) => `
    (NOT EXISTS (SELECT 1 FROM ledger_reservations r WHERE r.root_id = ${root})
     OR EXISTS (SELECT 1 FROM ledger_reservations r WHERE r.root_id = ${root} AND ${unresolvedIn('r')}))`;

/** 1 while the root has a held or unknown reservation: one index probe, however many it has. */
const UNRESOLVED = (root: string) =>
  `(CASE WHEN EXISTS (SELECT 1 FROM ledger_reservations r WHERE r.root_id = ${root} AND ${unresolvedIn('r')}) THEN 1 ELSE 0 END)`;

/**
 * The roots that are live (ROOT_LIVE above), kept as rows so that a capacity
 * count walks live work only, never the settled-but-unexpired history: with a
 * one-hour preset lifetime a busy gateway holds hundreds of thousands of
 * settled roots, and counting them per admission made every admission slower
 * the longer the gateway ran (issue #15, flat growth). `unresolved` is 1
 * while the root has a held or unknown reservation, else 0.
 *
 * The row is never maintained by arithmetic: every write that can change a
 * root's liveness (issuing it, inserting or resolving one of its reservations)
 * recomputes it from the reservations (refreshLiveRootSql), so it cannot drift
 * from the rule. Migration 10 fills it from existing rows; since migration 14
 * the database runs the recomputation itself, in triggers on those writes
 * (liveRootTriggersSql), so no program can forget it and none spends a
 * statement on it (issue #24).
 */
export const liveRootsTableSql = (strict: string, int64: string) => `
  CREATE TABLE ledger_live_roots (
    root_id          TEXT PRIMARY KEY REFERENCES ledger_nodes(node_id),
    owner_namespace  TEXT NOT NULL,
    preset_id        TEXT,
    space_id         TEXT NOT NULL,
    not_after        TEXT NOT NULL,
    unresolved       ${int64} NOT NULL CHECK (unresolved IN (0, 1))
  )${strict};
  CREATE INDEX ledger_live_roots_by_ns ON ledger_live_roots(owner_namespace, not_after);
  CREATE INDEX ledger_live_roots_by_preset ON ledger_live_roots(preset_id) WHERE preset_id IS NOT NULL;
  INSERT INTO ledger_live_roots(root_id, owner_namespace, preset_id, space_id, not_after, unresolved)
    SELECT n.node_id, n.owner_namespace, n.preset_id, n.space_id, n.not_after, ${UNRESOLVED('n.node_id')}
    FROM ledger_nodes n WHERE n.parent_id IS NULL AND ${ROOT_LIVE('n.node_id')};`;

/**
 * Recomputes one root's row: two statements, both bounded by the root's own
 * reservations (ledger_reservations_by_root). `p` renders the one parameter,
 * the root id, every time it appears.
 */
export const refreshLiveRootSql = (p: string): readonly [string, string] => [
  `DELETE FROM ledger_live_roots WHERE root_id = ${p} AND NOT ${ROOT_LIVE(p)}`,
  `INSERT INTO ledger_live_roots(root_id, owner_namespace, preset_id, space_id, not_after, unresolved)
     SELECT n.node_id, n.owner_namespace, n.preset_id, n.space_id, n.not_after, ${UNRESOLVED('n.node_id')}
     FROM ledger_nodes n WHERE n.node_id = ${p} AND n.parent_id IS NULL AND ${ROOT_LIVE('n.node_id')}
   ON CONFLICT (root_id) DO UPDATE SET unresolved = excluded.unresolved`,
];

/**
 * Migration 14: the live-root row follows its root's node and reservations
 * inside the statement that writes them — refreshLiveRootSql, unchanged, on
 * the written row's root (a root's node names itself as its root, so
 * NEW.root_id is the root on every row these fire for). Each write runs only
 * the half that can change anything: a new root or a new unresolved
 * reservation can only make a root live (the add), a resolution only end it
 * (the drop); a reservation resolved from the start may do either. No
 * status change makes a reservation unresolved again that was not (resolve-
 * once, ledger/rules.ts nextReservationStatus: held → unknown changes no
 * row), so a change of status only ever drops. A row
 * trigger sees its own statement's rows in both dialects, so a node and its
 * reservations may be written in either order.
 */
export const liveRootTriggersSql = (dialect: 'sqlite' | 'postgres'): string => {
  const [drop, add] = refreshLiveRootSql('NEW.root_id');
  const unresolved = unresolvedIn('NEW');
  const on = [
    { name: 'ledger_live_root_on_issue', event: 'INSERT ON ledger_nodes', when: 'NEW.parent_id IS NULL', body: [add] },
    { name: 'ledger_live_root_on_reserve', event: 'INSERT ON ledger_reservations', when: unresolved, body: [add] },
    { name: 'ledger_live_root_on_consume', event: 'INSERT ON ledger_reservations', when: `NOT ${unresolved}`, body: [drop, add] },
    { name: 'ledger_live_root_on_resolve', event: 'UPDATE OF status ON ledger_reservations', when: `OLD.status <> NEW.status AND NOT ${unresolved}`, body: [drop] },
  ];
  if (dialect === 'sqlite') return on.map((t) => `CREATE TRIGGER ${t.name} AFTER ${t.event} WHEN ${t.when} BEGIN ${t.body.join(';\n')}; END;`).join('\n');
  return on
    .map(
      (t) => `CREATE FUNCTION ${t.name}() RETURNS trigger LANGUAGE plpgsql AS $fn$ BEGIN ${t.body.join(';\n')}; RETURN NULL; END $fn$;
  CREATE TRIGGER ${t.name} AFTER ${t.event} FOR EACH ROW WHEN (${t.when}) EXECUTE FUNCTION ${t.name}();`,
    )
    .join('\n');
};

/**
 * Migration 25 (issue #24): the refresh a new unresolved reservation runs,
 * with the rule's answer written in instead of read. The reservation just
 * inserted is unresolved and visible to its own AFTER trigger, so ROOT_LIVE
 * holds (its second EXISTS finds it) and UNRESOLVED is 1: the refresh of
 * migration 14 computed exactly this, with three reads of the root's
 * reservations. Those reads were the costly ones: a long-lived root holding
 * most of the table's reservations skews the planner's statistics, and
 * PostgreSQL ran each as a sequential scan, about 0.6 ms of server CPU per
 * admission after a few thousand (auto_explain, bench/admission.ts).
 * Nothing is written when the row already says so.
 */
export const liveRootOnReserveSql = (dialect: 'sqlite' | 'postgres'): string => {
  const add = `INSERT INTO ledger_live_roots(root_id, owner_namespace, preset_id, space_id, not_after, unresolved)
     SELECT n.node_id, n.owner_namespace, n.preset_id, n.space_id, n.not_after, 1
     FROM ledger_nodes n WHERE n.node_id = NEW.root_id AND n.parent_id IS NULL
   ON CONFLICT (root_id) DO UPDATE SET unresolved = 1 WHERE ledger_live_roots.unresolved <> 1`;
  if (dialect === 'sqlite') {
    return `DROP TRIGGER ledger_live_root_on_reserve;
  CREATE TRIGGER ledger_live_root_on_reserve AFTER INSERT ON ledger_reservations WHEN ${unresolvedIn('NEW')} BEGIN ${add}; END;`;
  }
  return `CREATE OR REPLACE FUNCTION ledger_live_root_on_reserve() RETURNS trigger LANGUAGE plpgsql AS $fn$ BEGIN ${add}; RETURN NULL; END $fn$;`;
};

/**
 * Forgets roots that expired by `at` without ever being reserved
 * against: no count includes them (every count needs an unexpired root or an
 * unresolved reservation) and admission refuses an expired chain, so without
 * this they would only lengthen the walk. A root reserved against later after
 * all would get its row back from the refresh.
 */
export const pruneLiveRootsSql = (p: Placeholder) =>
  `DELETE FROM ledger_live_roots WHERE owner_namespace = ${p('ns')} AND not_after <= ${p('at')} AND unresolved = 0`;

/**
 * SQLite migration 18 (issue #24): the prune runs in the statement that
 * inserts a root, from that root's own issuing time, instead of as a
 * statement of its own before the capacity count. Where it runs changes no
 * count: a pruned row is expired and has nothing unresolved, and the rule
 * counts neither (activeFrom, retainedSql). PostgreSQL keeps it inside the
 * capacity statement (pruneThenCapacitySql), already one round trip.
 */
export const PRUNE_ON_ISSUE_SQLITE = `
  CREATE TRIGGER ledger_live_root_prune_on_issue AFTER INSERT ON ledger_nodes WHEN NEW.parent_id IS NULL BEGIN
    ${pruneLiveRootsSql((name) => (name === 'ns' ? 'NEW.owner_namespace' : `strftime('%Y-%m-%dT%H:%M:%fZ', NEW.created_at, '-${LIVE_ROOT_PRUNE_MARGIN_S} seconds')`))};
  END;
`;

/**
 * A root is active while it is unexpired, not terminal and live — and,
 * whatever its horizon or state, while an effect under it is unresolved
 * (ADR-0014: durable uncertainty holds capacity until reconciliation).
 */
const activeFrom = (where: string, at: string) => `
  SELECT count(*) AS n FROM ledger_live_roots l
  LEFT JOIN control_heads h ON h.project_id = 'rw-control:' || l.space_id AND h.branch_id = 'delegation:' || l.root_id
  WHERE ${where} AND (l.unresolved > 0 OR (l.not_after > ${at} AND coalesce(h.state, '') NOT IN ${TERMINAL}))`;

export const activeRootsSql = (p: Placeholder) => activeFrom(`l.owner_namespace = ${p('ns')}`, p('at'));

/**
 * Retained records: unexpired nodes of live roots, and unresolved
 * reservations. A node never outlives its root (openBudget refuses a child
 * expiring after its parent), so only unexpired live roots are walked, and
 * each one's unexpired nodes on ledger_nodes_by_root (migration 28).
 */
export const retainedSql = (p: Placeholder, unresolved: Unresolved) => `
  SELECT (SELECT count(*) FROM ledger_live_roots l JOIN ledger_nodes n ON n.root_id = l.root_id
          WHERE l.owner_namespace = ${p('ns')} AND l.not_after > ${p('at')} AND n.not_after > ${p('at')})
       + ${UNRESOLVED_COUNT[unresolved](p('ns'))} AS n`;

/**
 * Migration 28 (issue #24): ledger_nodes_by_root carries not_after, so the
 * retained count (retainedSql) reads a live root's unexpired nodes off the
 * index alone, where it read each node's table row for its expiry. At 10,000
 * nodes under live roots (maxRetainedRecords) the count took 0.73 ms an
 * admission on SQLite, 0.28 ms with this index. Every other reader of the
 * index (a root's tree, its descendant count) names root_id first, as before.
 */
export const NODES_BY_ROOT_WITH_EXPIRY = `
  DROP INDEX ledger_nodes_by_root;
  CREATE INDEX ledger_nodes_by_root ON ledger_nodes(root_id, not_after);
`;

/** Indexes the capacity queries rely on (migration 3 in both dialects). */
export const CAPACITY_INDEXES = `
  CREATE INDEX ledger_reservations_by_root ON ledger_reservations(root_id, status);
  CREATE INDEX ledger_reservations_live ON ledger_reservations(owner_namespace, status);
  CREATE INDEX ledger_nodes_live ON ledger_nodes(owner_namespace, not_after);
`;

/**
 * Migration 15 (issue #24): indexes no query reads any more, each one more
 * B-tree insert per node or reservation written. Since migration 10 the
 * capacity counts walk ledger_live_roots and reach nodes by root
 * (ledger_nodes_by_root); a namespace's unresolved reservations are counted
 * on ledger_reservations_live, whose first column already serves any lookup
 * by namespace alone.
 */
export const DROP_UNREAD_INDEXES = `
  DROP INDEX ledger_nodes_by_ns;
  DROP INDEX ledger_nodes_live;
  DROP INDEX ledger_reservations_by_ns;
`;

/** `q(name)` renders a placeholder for the preset queries. */
export type PresetPlaceholder = (name: 'preset' | 'at' | 'since') => string;

/**
 * ADR-0014 preset limits, counted in the store so every process shares them
 * and a restart re-grants nothing: the roots of one preset that still hold
 * capacity (the rule above, per preset), and those issued in the last minute.
 */
export const presetActiveRootsSql = (p: PresetPlaceholder) => activeFrom(`l.preset_id = ${p('preset')}`, p('at'));

/** A preset's roots issued after `after` (and at or before `upTo`), counted on ledger_nodes_by_preset. */
const issuedIn = (preset: string, after: string, upTo?: string) =>
  `(SELECT count(*) FROM ledger_nodes WHERE preset_id = ${preset} AND parent_id IS NULL AND created_at > ${after}${upTo === undefined ? '' : ` AND created_at <= ${upTo}`})`;

/**
 * A preset's roots issued after `since`, exactly, read from its window row
 * (migration 24, presetWindowSql): the row's count of roots issued after its
 * own `since`, corrected by the roots between the two times, one of the two
 * ranges empty. The window row moves with every root the preset issues, so
 * the walk is of the roots that left the minute since the last one was
 * issued, where counting the rows walks every root of the minute (issue #24:
 * ~30 ns a root on SQLite, 0.7 ms a call at 390 calls a second). A preset
 * with no row yet (none issued since the migration) is counted over the rows.
 */
export const presetIssuedSinceSql = (p: PresetPlaceholder) =>
  `SELECT coalesce((SELECT w.n + ${issuedIn('w.preset_id', p('since'), 'w.since')} - ${issuedIn('w.preset_id', 'w.since', p('since'))}
     FROM ledger_preset_windows w WHERE w.preset_id = ${p('preset')}), ${issuedIn(p('preset'), p('since'))}) AS n`;

/**
 * Migration 24 (issue #24 "capacity limits kept as counter rows that the same
 * writes maintain"): per preset, `n`, the number of its roots issued after
 * `since`, kept true by a trigger on the statement that inserts a root and
 * moved forward to a minute before it, so that the count above walks only a
 * gap. Arithmetic, unlike the live-root row, and exact for the same reason the
 * unresolved counter is: ledger nodes are only ever inserted (no statement
 * updates or deletes one). `since` may be any time; a root inserted with a
 * clock behind it is counted only if it is after it.
 *
 * SQLite runs row triggers as each row is inserted, so the table then holds
 * only the rows already counted. PostgreSQL runs them after the whole
 * statement, where the table already holds its later rows, so there the
 * trigger runs once per statement over the rows it inserted (a transition
 * table). Issuers of one preset are serialised there by the preset lock
 * (preset_locks), taken before the capacity read and held to commit.
 */
export const presetWindowSql = (dialect: 'sqlite' | 'postgres'): string => {
  const table = `
  CREATE TABLE ledger_preset_windows (
    preset_id  TEXT PRIMARY KEY,
    since      TEXT NOT NULL,
    n          ${dialect === 'sqlite' ? 'INTEGER' : 'BIGINT'} NOT NULL CHECK (n >= 0)
  )${dialect === 'sqlite' ? ' STRICT, WITHOUT ROWID' : ''};`;
  if (dialect === 'sqlite') {
    // A minute before the new root; '' (before every time) where created_at is not one.
    const start = `coalesce(strftime('%Y-%m-%dT%H:%M:%fZ', NEW.created_at, '-60 seconds'), '')`;
    return `${table}
  CREATE TRIGGER ledger_preset_window_on_issue AFTER INSERT ON ledger_nodes WHEN NEW.parent_id IS NULL AND NEW.preset_id IS NOT NULL BEGIN
    UPDATE ledger_preset_windows SET
      n = n + (NEW.created_at > since) - ${issuedIn('NEW.preset_id', 'ledger_preset_windows.since', `max(ledger_preset_windows.since, ${start})`)},
      since = max(since, ${start})
    WHERE preset_id = NEW.preset_id;
    INSERT INTO ledger_preset_windows(preset_id, since, n)
      SELECT NEW.preset_id, ${start}, ${issuedIn('NEW.preset_id', start)}
      WHERE NOT EXISTS (SELECT 1 FROM ledger_preset_windows WHERE preset_id = NEW.preset_id);
  END;`;
  }
  // Per preset in the statement: the window moves to a minute before its latest new root; `n` gains the new roots
  // after the old start and loses every root (new ones included) between the old start and the new one.
  return `${table}
  CREATE FUNCTION ledger_preset_window_on_issue() RETURNS trigger LANGUAGE plpgsql AS $fn$ BEGIN
    WITH issued AS (
      SELECT preset_id, to_char((max(created_at)::timestamptz - interval '60 seconds') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS start
      FROM new_nodes WHERE parent_id IS NULL AND preset_id IS NOT NULL GROUP BY preset_id
    ), moved AS (
      UPDATE ledger_preset_windows w SET
        n = w.n + (SELECT count(*) FROM new_nodes x WHERE x.preset_id = w.preset_id AND x.parent_id IS NULL AND x.created_at > w.since)
                - ${issuedIn('w.preset_id', 'w.since', 'greatest(w.since, i.start)')},
        since = greatest(w.since, i.start)
      FROM issued i WHERE w.preset_id = i.preset_id
      RETURNING w.preset_id
    )
    INSERT INTO ledger_preset_windows(preset_id, since, n)
      SELECT i.preset_id, i.start, ${issuedIn('i.preset_id', 'i.start')} FROM issued i
      WHERE i.preset_id NOT IN (SELECT preset_id FROM moved);
    RETURN NULL;
  END $fn$;
  CREATE TRIGGER ledger_preset_window_on_issue AFTER INSERT ON ledger_nodes REFERENCING NEW TABLE AS new_nodes
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_preset_window_on_issue();`;
};

export const PRESET_HOLD_FN = 'baton_preset_hold';

/** Locks a preset's row (`p` its id), found or inserted: the plain transaction's lockPreset, and the hold below. */
export const presetLockSql = (p: string) => `INSERT INTO preset_locks(preset_id) VALUES (${p}) ON CONFLICT (preset_id) DO UPDATE SET preset_id = excluded.preset_id`;

/**
 * PostgreSQL migration 27 (issue #24): a preset's lock and its limits in one
 * statement, for a planned transaction to send with its write
 * (postgres/transaction.ts). The lock used to be taken in the admission's
 * first round trip and held while the gateway's event loop got round to the
 * write: at c=32 about six of ten pooled connections waited on it, and two
 * gateway processes served fewer calls than one. Now the first round trip
 * counts without the lock, and this takes it where the write is, with no
 * client in between, and counts again under it. In READ COMMITTED each
 * statement of a volatile function reads a fresh snapshot, so the counts
 * after the lock see every root committed by the transaction that held it
 * before: ADR-0014's preset limits stay exact across processes. No room left
 * fails the statement as a missed plan (BT001, rows-sql.ts), so the COMMIT
 * behind it is skipped and the program runs again the plain way, which locks
 * first and refuses with the bound it reached.
 */
export const PRESET_HOLD_FN_SQL = `CREATE OR REPLACE FUNCTION ${PRESET_HOLD_FN}(p_preset text, p_at text, p_since text, p_max_active bigint, p_per_minute bigint)
  RETURNS boolean LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
  ${presetLockSql('p_preset')};
  IF (${presetActiveRootsSql((n) => `p_${n}`)}) >= p_max_active OR (${presetIssuedSinceSql((n) => `p_${n}`)}) >= p_per_minute THEN
    RAISE EXCEPTION 'the preset has no room left under its lock' USING ERRCODE = 'BT001';
  END IF;
  RETURN true;
END $fn$`;

/** `p(name)` renders a placeholder for the combined capacity statement (`before`: the prune horizon). */
export type RootCapacityPlaceholder = (name: 'ns' | 'at' | 'preset' | 'since' | 'before' | 'effect' | 'reservation') => string;

/**
 * A new root's capacity in one statement (issue #24: one statement, not one
 * per count): the active roots of its namespace, its retained records and,
 * when it is issued from a preset, that preset's active roots and its roots
 * issued after `since` — each the rule above, unchanged.
 */
export const rootCapacitySql = (p: RootCapacityPlaceholder, withPreset: boolean, unresolved: Unresolved, withClaims = false) =>
  `SELECT (${activeRootsSql(p)}) AS active_roots, (${retainedSql(p, unresolved)}) AS retained` +
  (withPreset ? `, (${presetActiveRootsSql(p)}) AS preset_active, (${presetIssuedSinceSql(p)}) AS preset_issued` : '') +
  (withClaims ? `, (SELECT count(*) FROM ledger_reservations WHERE effect_id = ${p('effect')} OR reservation_id = ${p('reservation')}) AS claimed` : '');

/**
 * PostgreSQL: the prune (pruneLiveRootsSql, horizon `before`) and the counts
 * in one statement. The counts see the rows as they were before the prune —
 * the WITH's delete and the query share one snapshot — which changes no
 * count: a pruned row is expired and has nothing unresolved, and the rule
 * counts neither (activeFrom).
 */
export const pruneThenCapacitySql = (p: RootCapacityPlaceholder, withPreset: boolean, withClaims: boolean) =>
  `WITH pruned AS (${pruneLiveRootsSql((name) => p(name === 'at' ? 'before' : name))}) ${rootCapacitySql(p, withPreset, 'stripes', withClaims)}`;

/** The counts of one rootCapacitySql row, whatever integer type the driver returns (the preset ones 0 without a preset). */
export const capacityOf = (row: { [K in keyof RootCapacity]?: unknown } | undefined): RootCapacity => ({
  active_roots: Number(row?.active_roots ?? 0),
  retained: Number(row?.retained ?? 0),
  preset_active: Number(row?.preset_active ?? 0),
  preset_issued: Number(row?.preset_issued ?? 0),
  claimed: Number(row?.claimed ?? 0),
});
