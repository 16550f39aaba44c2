/**
 * SQLite schema, as an ordered list of migrations. Every table is STRICT, so a
 * value of the wrong type is an error instead of a silent coercion, and every
 * integer is read back as a BigInt (see database.ts). Each migration's DDL is
 * written once for both dialects (core-sql.ts, push-sql.ts, meta.ts, work-sql.ts).
 */
import { CAPACITY_INDEXES, DROP_UNREAD_INDEXES, liveRootOnReserveSql, liveRootsTableSql, liveRootTriggersSql, NODES_BY_ROOT_WITH_EXPIRY, presetWindowSql, PRUNE_ON_ISSUE_SQLITE } from '../capacity.ts';
import { DROP_NAMESPACE_INDEX_SQLITE, UNRESOLVED_COUNTER_SQLITE } from '../unresolved-sql.ts';
import { controlLedgerTablesSql, SQLITE_DDL, recordsWithoutDigestIndexSqlite, recordTablesSql } from '../core-sql.ts';
import { metaTableSql } from '../meta.ts';
import { pushGatewaySql, pushTablesSql } from '../push-sql.ts';
import { workEndsOnResolveSql, workGatewaySql, workRemoteTaskSql, workTablesSql } from '../work-sql.ts';
import { contentTablesSql } from '../content-sql.ts';
import { APPEND_VIEWS_SQLITE, RECORD_APPENDS_VIEW_SQLITE } from './appends.ts';
import type { Db } from './database.ts';
import { withoutRowid } from './without-rowid.ts';

export interface Migration {
  version: number;
  sql: string;
  /** A step SQL alone cannot write (it reads the schema it changes), run after `sql` in the same transaction. */
  run?: (db: Db) => void;
}

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, sql: recordTablesSql(SQLITE_DDL) },
  { version: 2, sql: controlLedgerTablesSql(SQLITE_DDL) },
  { version: 3, sql: CAPACITY_INDEXES },
  { version: 4, sql: pushTablesSql(' STRICT') },
  { version: 5, sql: metaTableSql(' STRICT') },
  { version: 6, sql: workTablesSql(' STRICT') },
  // 7 and 8 are taken by other branches (federation, approvals); the lead renumbers on merge if needed.
  { version: 9, sql: contentTablesSql(' STRICT') },
  { version: 10, sql: liveRootsTableSql(' STRICT', 'INTEGER') },
  { version: 11, sql: workRemoteTaskSql },
  { version: 12, sql: workGatewaySql },
  { version: 13, sql: pushGatewaySql },
  { version: 14, sql: liveRootTriggersSql('sqlite') },
  { version: 15, sql: DROP_UNREAD_INDEXES },
  { version: 16, sql: UNRESOLVED_COUNTER_SQLITE },
  { version: 17, sql: DROP_NAMESPACE_INDEX_SQLITE },
  { version: 18, sql: PRUNE_ON_ISSUE_SQLITE },
  { version: 19, sql: APPEND_VIEWS_SQLITE },
  { version: 20, sql: workEndsOnResolveSql('sqlite') },
  { version: 21, sql: recordsWithoutDigestIndexSqlite(RECORD_APPENDS_VIEW_SQLITE) },
  { version: 22, sql: '', run: withoutRowid },
  // PostgreSQL's migration 23 adds the function its batch writes check their plan with (postgres/transaction.ts); a
  // SQLite transaction has no round trips to save. Kept as a version so that both dialects name the same schema.
  { version: 23, sql: '' },
  { version: 24, sql: presetWindowSql('sqlite') },
  { version: 25, sql: liveRootOnReserveSql('sqlite') },
  // PostgreSQL's migration 26 adds the unresolved counter SQLite has had since 16 (unresolved-sql.ts UNRESOLVED_COUNTER_PG).
  { version: 26, sql: '' },
  // PostgreSQL's migration 27 adds the preset hold its planned transactions send with their write; SQLite's writers are serial.
  { version: 27, sql: '' },
  { version: 28, sql: NODES_BY_ROOT_WITH_EXPIRY },
];
