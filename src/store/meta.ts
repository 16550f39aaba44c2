/**
 * The store's own identity, kept inside the database (table `baton_meta`) and,
 * for SQLite, in the marker file beside it. ADR-0014: "Unreadable, corrupt or
 * incomplete previously initialized state prevents affected admission; it is
 * not an empty budget." A database that lost its tables, its rows or its
 * schema generation therefore must never look like a fresh one.
 */
import { z } from 'zod';

/** Migration 5 in both dialects: one row, written when the store is created. */
export const metaTableSql = (strict: string) => `
  CREATE TABLE baton_meta (
    singleton   INTEGER PRIMARY KEY CHECK (singleton = 1),
    store_id    TEXT NOT NULL,
    generation  INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL
  )${strict};
  -- One row per gateway (its own card's agent actor): every node serving it must present the same identity.
  CREATE TABLE gateway_identity (
    gateway_id  TEXT PRIMARY KEY,
    document    TEXT NOT NULL,
    claimed_at  TEXT NOT NULL
  )${strict};
  -- RW-003 §4.3 continuity history of remote cards: append-only, newest row wins.
  CREATE TABLE card_history (
    seq            ${strict ? 'INTEGER PRIMARY KEY' : 'BIGSERIAL PRIMARY KEY'},
    origin         TEXT NOT NULL,
    agent_card_id  TEXT NOT NULL,
    document       TEXT NOT NULL,
    accepted_at    TEXT NOT NULL
  )${strict};
  CREATE INDEX card_history_by_card ON card_history(origin, agent_card_id, seq);
`;

/** What the marker beside a SQLite file says about the database it belongs to. */
export const StoreMarker = z.strictObject({
  store_id: z.string().min(1),
  schema: z.number().int().min(1),
  /**
   * Bumped inside the database by every process that opens it, then here. A
   * database whose generation is behind its marker lost committed writes (a
   * WAL deleted after kill -9): its rows are not the store's state.
   */
  generation: z.number().int().min(0),
  created_at: z.string(),
});
export type StoreMarker = z.infer<typeof StoreMarker>;

/**
 * Every table a migrated store must have, read from the migrations themselves
 * in order: a table a later migration drops, or renames, is not one of them
 * (SQLite's migration 21 rebuilds records under a scratch name).
 */
export function tablesOf(migrations: ReadonlyArray<{ sql: string }>): string[] {
  const tables = new Set<string>();
  for (const m of migrations) {
    for (const [, created, dropped, from, to] of m.sql.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?(\w+)|DROP TABLE (?:IF EXISTS )?(\w+)|ALTER TABLE (\w+) RENAME TO (\w+)/g)) {
      if (created) tables.add(created);
      else if (dropped) tables.delete(dropped);
      else if (from && to) {
        tables.delete(from);
        tables.add(to);
      }
    }
  }
  return [...tables].sort();
}

/** Why an opened database is not the initialised one the marker names; undefined when it is. */
export function markerMismatch(
  marker: StoreMarker,
  found: { schema: number; storeId: string | undefined; generation: number; missingTables: readonly string[] },
): string | undefined {
  if (found.missingTables.length > 0) return `tables missing: ${found.missingTables.join(', ')}`;
  if (found.schema < marker.schema) return `schema version ${found.schema} is older than the initialised ${marker.schema}`;
  if (found.storeId === undefined) return 'store identity row is missing';
  if (found.storeId !== marker.store_id) return 'database belongs to another store';
  // Behind, never ahead: a process may have committed its bump and not yet written the marker.
  if (found.generation < marker.generation) return `generation ${found.generation} is behind the marker's ${marker.generation} (committed writes were lost)`;
  return undefined;
}

/** Store-wide facts that are neither ledger nor control: gateway identity claims and remote card history. */
export interface MetaStore {
  /**
   * Claims the store for one gateway identity, atomically: `decide` gets the
   * stored document (undefined on the first claim) and returns the one to
   * store, or throws to refuse. Returns the stored document.
   */
  claimIdentity(gatewayId: string, decide: (stored: string | undefined) => string, at: string): Promise<string>;
  /** The newest accepted-card document for one agent_card_id at one origin. */
  lastCard(origin: string, agentCardId: string): Promise<string | undefined>;
  appendCard(origin: string, agentCardId: string, document: string, at: string): Promise<void>;
}
