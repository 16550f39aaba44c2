/**
 * The records, control and ledger tables (migrations 1 and 2), written once
 * for both dialects as push-sql.ts and work-sql.ts are. A dialect supplies
 * only what differs: SQLite's STRICT tables and 64-bit INTEGER, PostgreSQL's
 * BIGINT and BIGSERIAL, and how immutability is enforced (RW-003 §1: records,
 * control events and ledger entries are never updated or deleted).
 *
 * The generated SQL must keep every name the applied migrations created
 * (triggers included): a database migrated by an older build and one created
 * now are the same schema (test/store/schema-dialects.test.ts).
 */

export interface DdlDialect {
  /** ' STRICT' for SQLite, '' for PostgreSQL. */
  strict: string;
  /** A signed 64-bit integer column. */
  int64: string;
  /** An append-only sequence key. */
  seq: string;
  /**
   * The control stream's (project, branch, position) key. SQLite makes it the
   * primary key (the rows are stored in stream order); PostgreSQL keeps it a
   * UNIQUE constraint, as migration 2 first created it there.
   */
  streamKey: 'PRIMARY KEY' | 'UNIQUE';
  /** Statements run once before the first immutability trigger. */
  immutableSetup: string;
  /** Refuses UPDATE and DELETE on `table`; `names` are the trigger names the migrations already used. */
  immutable(table: string, names: { sqlite: string; pg: string }, what: string): string;
}

export const SQLITE_DDL: DdlDialect = {
  strict: ' STRICT',
  int64: 'INTEGER',
  seq: 'INTEGER PRIMARY KEY',
  streamKey: 'PRIMARY KEY',
  immutableSetup: '',
  immutable: (table, { sqlite }, what) => `
      CREATE TRIGGER ${sqlite}_u BEFORE UPDATE ON ${table} BEGIN SELECT RAISE(ABORT, '${what} are immutable'); END;
      CREATE TRIGGER ${sqlite}_d BEFORE DELETE ON ${table} BEGIN SELECT RAISE(ABORT, '${what} are immutable'); END;`,
};

export const PG_DDL: DdlDialect = {
  strict: '',
  int64: 'BIGINT',
  seq: 'BIGSERIAL PRIMARY KEY',
  streamKey: 'UNIQUE',
  immutableSetup: `
      CREATE FUNCTION baton_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION '% rows are immutable', TG_TABLE_NAME; END $$;`,
  immutable: (table, { pg }) => `
      CREATE TRIGGER ${pg} BEFORE UPDATE OR DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION baton_immutable();`,
};

/** The records table under `name`; `digest` is what follows content_digest's NOT NULL (migration 1 made it UNIQUE). */
const recordsTableSql = (d: DdlDialect, name: string, digest: string) => `
      CREATE TABLE ${name} (
        seq             ${d.seq},
        record_id       TEXT NOT NULL,
        revision_id     TEXT NOT NULL UNIQUE,
        content_digest  TEXT NOT NULL${digest},
        schema_ref      TEXT NOT NULL,
        prior_revision  TEXT,
        document        TEXT NOT NULL,
        stored_at       TEXT NOT NULL
      )${d.strict};`;
const recordHeadsTableSql = (d: DdlDialect, name: string, records: string) => `
      CREATE TABLE ${name} (
        record_id    TEXT PRIMARY KEY,
        revision_id  TEXT NOT NULL REFERENCES ${records}(revision_id)
      )${d.strict};`;
const RECORDS_BY_RECORD = 'CREATE INDEX records_by_record ON records(record_id, seq);';
const recordsImmutableSql = (d: DdlDialect) => d.immutable('records', { sqlite: 'records_immutable', pg: 'records_immutable' }, 'records');

/** Migration 1: append-only, head-chained record revisions (RW-003 §1). */
export const recordTablesSql = (d: DdlDialect) => `${recordsTableSql(d, 'records', ' UNIQUE')}
      ${RECORDS_BY_RECORD}${recordHeadsTableSql(d, 'record_heads', 'records')}
      -- RW-003 §1: every record is immutable; corrections are new revisions.${d.immutableSetup}${recordsImmutableSql(d)}
`;

/**
 * Migration 21: no UNIQUE index on records.content_digest. A record's content
 * digest covers its revision_id (RW-003 §2: the digest of the whole sealed
 * revision), so revision_id UNIQUE already makes it unique; and every read by
 * digest held the whole RevisionRef, so it reads by revision id now
 * (store/record-at.ts). The index's keys are random, so every record a
 * transaction inserted dirtied a leaf page of its own: 9 of the 113 WAL
 * frames a delegated call wrote at c=1, 8 of 44 at c=32 (bench/wal-frames.ts).
 *
 * PostgreSQL drops the constraint. SQLite cannot drop the index a constraint
 * made, so it copies records into a table without it, and record_heads too,
 * whose foreign key names records (a DROP TABLE of a referenced table fails
 * with foreign keys on, and PRAGMA foreign_keys cannot change inside the
 * migration's transaction). `recordAppends` is SQLite's append view over
 * records (sqlite/appends.ts), dropped with the old table and made again. The
 * copy costs time and WAL space in proportion to the records held, once (100,000
 * records of 2.5 KB: 2.5 s, 424 MB of WAL); the old table's pages go to the
 * freelist, for later writes to reuse. secure_delete is off while it runs: the
 * old pages hold the very rows the new table holds, so zeroing them protects
 * nothing, and would write the table to the WAL a second time.
 */
export const RECORDS_WITHOUT_DIGEST_INDEX_PG = 'ALTER TABLE records DROP CONSTRAINT records_content_digest_key;';
export const recordsWithoutDigestIndexSqlite = (recordAppends: string) => `
      PRAGMA secure_delete = OFF;
      DROP VIEW record_appends;${recordsTableSql(SQLITE_DDL, 'records_next', '')}
      INSERT INTO records_next SELECT seq, record_id, revision_id, content_digest, schema_ref, prior_revision, document, stored_at FROM records ORDER BY seq;${recordHeadsTableSql(SQLITE_DDL, 'record_heads_next', 'records_next')}
      INSERT INTO record_heads_next SELECT record_id, revision_id FROM record_heads;
      DROP TABLE record_heads;
      DROP TABLE records;
      ALTER TABLE records_next RENAME TO records;
      ALTER TABLE record_heads_next RENAME TO record_heads;
      ${RECORDS_BY_RECORD}${recordsImmutableSql(SQLITE_DDL)}
      ${recordAppends}
      PRAGMA secure_delete = ON;
`;

/** Migration 2: control streams (RW-003 §1.2) and the shared-budget ledger (ADR-0014). */
export const controlLedgerTablesSql = (d: DdlDialect) => `
      -- RW-003 §1.2 control streams: (project_id, branch_id, position) identifies an event.
      CREATE TABLE control_events (
        project_id       TEXT NOT NULL,
        branch_id        TEXT NOT NULL,
        position         ${d.int64} NOT NULL CHECK (position > 0),
        event_id         TEXT NOT NULL UNIQUE,
        event_type       TEXT NOT NULL,
        idempotency_key  TEXT,
        input_digest     TEXT NOT NULL,
        event_digest     TEXT NOT NULL,
        document         TEXT NOT NULL,
        ${d.streamKey} (project_id, branch_id, position)
      )${d.strict};
      CREATE UNIQUE INDEX control_idempotency ON control_events(project_id, branch_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
      CREATE TABLE control_heads (
        project_id    TEXT NOT NULL,
        branch_id     TEXT NOT NULL,
        scope_kind    TEXT NOT NULL,
        position      ${d.int64} NOT NULL,
        event_id      TEXT NOT NULL,
        event_digest  TEXT NOT NULL,
        state         TEXT NOT NULL,
        PRIMARY KEY (project_id, branch_id)
      )${d.strict};${d.immutable('control_events', { sqlite: 'control_immutable', pg: 'control_immutable' }, 'control events')}

      -- ADR-0014 shared budgets. 2^62 bound: consumed + reserved never overflows int64.
      CREATE TABLE ledger_nodes (
        node_id          TEXT PRIMARY KEY,
        parent_id        TEXT REFERENCES ledger_nodes(node_id),
        root_id          TEXT NOT NULL,
        depth            INTEGER NOT NULL CHECK (depth >= 0),
        space_id         TEXT NOT NULL,
        owner_namespace  TEXT NOT NULL,
        not_after        TEXT NOT NULL,
        request_digest   TEXT NOT NULL,
        issued_event     TEXT NOT NULL,
        created_at       TEXT NOT NULL
      )${d.strict};
      CREATE INDEX ledger_nodes_by_root ON ledger_nodes(root_id);
      CREATE INDEX ledger_nodes_by_ns ON ledger_nodes(owner_namespace, parent_id);
      CREATE TABLE ledger_balances (
        node_id    TEXT NOT NULL REFERENCES ledger_nodes(node_id),
        dimension  TEXT NOT NULL,
        unit       TEXT NOT NULL,
        ceiling    ${d.int64} NOT NULL CHECK (ceiling >= 0 AND ceiling <= 4611686018427387903),
        consumed   ${d.int64} NOT NULL DEFAULT 0 CHECK (consumed >= 0),
        reserved   ${d.int64} NOT NULL DEFAULT 0 CHECK (reserved >= 0),
        CHECK (consumed + reserved <= ceiling),
        PRIMARY KEY (node_id, dimension)
      )${d.strict};
      CREATE TABLE ledger_reservations (
        reservation_id   TEXT PRIMARY KEY,
        effect_id        TEXT NOT NULL UNIQUE,
        root_id          TEXT NOT NULL,
        owner_namespace  TEXT NOT NULL,
        chain            TEXT NOT NULL,
        kind             TEXT NOT NULL CHECK (kind IN ('consume', 'reserve')),
        amounts          TEXT NOT NULL,
        charged          TEXT NOT NULL,
        status           TEXT NOT NULL CHECK (status IN ('held', 'unknown', 'settled', 'released', 'consumed')),
        request_digest   TEXT NOT NULL,
        receipt          TEXT NOT NULL,
        settlement       TEXT,
        created_at       TEXT NOT NULL,
        settled_at       TEXT
      )${d.strict};
      CREATE INDEX ledger_unresolved ON ledger_reservations(status, created_at) WHERE status IN ('held', 'unknown');
      CREATE INDEX ledger_reservations_by_ns ON ledger_reservations(owner_namespace);
      CREATE TABLE ledger_entries (
        seq             ${d.seq},
        reservation_id  TEXT NOT NULL REFERENCES ledger_reservations(reservation_id),
        node_id         TEXT NOT NULL,
        dimension       TEXT NOT NULL,
        d_consumed      ${d.int64} NOT NULL,
        d_reserved      ${d.int64} NOT NULL,
        reason          TEXT NOT NULL,
        at              TEXT NOT NULL
      )${d.strict};${d.immutable('ledger_entries', { sqlite: 'ledger_entries', pg: 'ledger_entries_immutable' }, 'ledger entries')}
`;
