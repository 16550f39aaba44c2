/**
 * PostgreSQL schema: the same tables and CHECKs as SQLite, generated from
 * the one DDL source per migration (core-sql.ts, push-sql.ts, meta.ts,
 * work-sql.ts) in PostgreSQL types. Migrations run under an advisory lock so several Baton processes
 * starting together against one database migrate it exactly once.
 */
import { CAPACITY_INDEXES, DROP_UNREAD_INDEXES, liveRootOnReserveSql, liveRootsTableSql, liveRootTriggersSql, NODES_BY_ROOT_WITH_EXPIRY, presetWindowSql, PRESET_HOLD_FN_SQL } from '../capacity.ts';
import { UNRESOLVED_COUNTER_PG } from '../unresolved-sql.ts';
import { controlLedgerTablesSql, PG_DDL, RECORDS_WITHOUT_DIGEST_INDEX_PG, recordTablesSql } from '../core-sql.ts';
import { metaTableSql } from '../meta.ts';
import { pushGatewaySql, pushTablesSql } from '../push-sql.ts';
import { workEndsOnResolveSql, workGatewaySql, workRemoteTaskSql, workTablesSql } from '../work-sql.ts';
import { contentTablesSql } from '../content-sql.ts';
import { PLANNED_FN_SQL } from '../tx/rows-sql.ts';

export const PG_MIGRATIONS: ReadonlyArray<{ version: number; sql: string }> = [
  { version: 1, sql: recordTablesSql(PG_DDL) },
  { version: 2, sql: controlLedgerTablesSql(PG_DDL) },
  { version: 3, sql: CAPACITY_INDEXES },
  { version: 4, sql: pushTablesSql('') },
  { version: 5, sql: metaTableSql('') },
  { version: 6, sql: workTablesSql('') },
  { version: 9, sql: contentTablesSql('') },
  { version: 10, sql: liveRootsTableSql('', 'BIGINT') },
  { version: 11, sql: workRemoteTaskSql },
  { version: 12, sql: workGatewaySql },
  { version: 13, sql: pushGatewaySql },
  { version: 14, sql: liveRootTriggersSql('postgres') },
  { version: 15, sql: DROP_UNREAD_INDEXES },
  // SQLite's migration 16 adds the per-namespace unresolved counter (unresolved-sql.ts UNRESOLVED_COUNTER_SQLITE); here
  // it came with migration 26, striped, as one counter row per namespace would serialise its admissions. Kept as a
  // version so that both dialects name the same schema generation.
  { version: 16, sql: 'SELECT 1' },
  // SQLite's migration 17 drops ledger_reservations_live, unread there since its counter; here migration 26 does.
  { version: 17, sql: 'SELECT 1' },
  // SQLite's migration 18 prunes live roots in the root's insert trigger (capacity.ts PRUNE_ON_ISSUE_SQLITE); here the
  // prune rides in the capacity statement, already one round trip (pruneThenCapacitySql).
  { version: 18, sql: 'SELECT 1' },
  // SQLite's migration 19 adds the views a batch appends through (sqlite/appends.ts); here a batch is one statement already.
  { version: 19, sql: 'SELECT 1' },
  { version: 20, sql: workEndsOnResolveSql('postgres') },
  { version: 21, sql: RECORDS_WITHOUT_DIGEST_INDEX_PG },
  // SQLite's migration 22 rebuilds its small keyed tables WITHOUT ROWID (sqlite/without-rowid.ts); a PostgreSQL
  // heap table has no rowid B-tree beside its key to drop. Kept as a version so that both dialects name the same schema.
  { version: 22, sql: 'SELECT 1' },
  // A batch's write checks it wrote what its plan expected, so that its COMMIT can ride in the same round trip (transaction.ts).
  { version: 23, sql: PLANNED_FN_SQL },
  { version: 24, sql: presetWindowSql('postgres') },
  { version: 25, sql: liveRootOnReserveSql('postgres') },
  // The unresolved counter SQLite has had since its migration 16, striped so that admissions do not queue on it.
  { version: 26, sql: UNRESOLVED_COUNTER_PG },
  // A planned transaction takes its preset's lock with its write, and checks the preset's limits under it (transaction.ts).
  { version: 27, sql: PRESET_HOLD_FN_SQL },
  // The retained count reads nodes' expiry off the index (capacity.ts NODES_BY_ROOT_WITH_EXPIRY).
  { version: 28, sql: NODES_BY_ROOT_WITH_EXPIRY },
];
