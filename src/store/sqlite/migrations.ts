/**
 * SQLite schema, as an ordered list of migrations. Every table is STRICT, so a
 * value of the wrong type is an error instead of a silent coercion, and every
 * integer is read back as a BigInt (see database.ts).
 */
import { CAPACITY_INDEXES } from '../capacity.ts';
import { metaTableSql } from '../meta.ts';
import { pushTablesSql } from '../push-sql.ts';
import { workTablesSql } from '../work-sql.ts';
import { contentTablesSql } from '../content-sql.ts';

export interface Migration {
  version: number;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE records (
        seq             INTEGER PRIMARY KEY,
        record_id       TEXT NOT NULL,
        revision_id     TEXT NOT NULL UNIQUE,
        content_digest  TEXT NOT NULL UNIQUE,
        schema_ref      TEXT NOT NULL,
        prior_revision  TEXT,
        document        TEXT NOT NULL,
        stored_at       TEXT NOT NULL
      ) STRICT;
      CREATE INDEX records_by_record ON records(record_id, seq);
      CREATE TABLE record_heads (
        record_id    TEXT PRIMARY KEY,
        revision_id  TEXT NOT NULL REFERENCES records(revision_id)
      ) STRICT;
      -- RW-003 §1: every record is immutable; corrections are new revisions.
      CREATE TRIGGER records_immutable_u BEFORE UPDATE ON records BEGIN SELECT RAISE(ABORT, 'records are immutable'); END;
      CREATE TRIGGER records_immutable_d BEFORE DELETE ON records BEGIN SELECT RAISE(ABORT, 'records are immutable'); END;
    `,
  },
  {
    version: 2,
    sql: `
      -- RW-003 §1.2 control streams: UNIQUE(project_id, branch_id, position) is the primary key.
      CREATE TABLE control_events (
        project_id       TEXT NOT NULL,
        branch_id        TEXT NOT NULL,
        position         INTEGER NOT NULL CHECK (position > 0),
        event_id         TEXT NOT NULL UNIQUE,
        event_type       TEXT NOT NULL,
        idempotency_key  TEXT,
        input_digest     TEXT NOT NULL,
        event_digest     TEXT NOT NULL,
        document         TEXT NOT NULL,
        PRIMARY KEY (project_id, branch_id, position)
      ) STRICT;
      CREATE UNIQUE INDEX control_idempotency ON control_events(project_id, branch_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
      CREATE TABLE control_heads (
        project_id    TEXT NOT NULL,
        branch_id     TEXT NOT NULL,
        scope_kind    TEXT NOT NULL,
        position      INTEGER NOT NULL,
        event_id      TEXT NOT NULL,
        event_digest  TEXT NOT NULL,
        state         TEXT NOT NULL,
        PRIMARY KEY (project_id, branch_id)
      ) STRICT;
      CREATE TRIGGER control_immutable_u BEFORE UPDATE ON control_events BEGIN SELECT RAISE(ABORT, 'control events are immutable'); END;
      CREATE TRIGGER control_immutable_d BEFORE DELETE ON control_events BEGIN SELECT RAISE(ABORT, 'control events are immutable'); END;

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
      ) STRICT;
      CREATE INDEX ledger_nodes_by_root ON ledger_nodes(root_id);
      CREATE INDEX ledger_nodes_by_ns ON ledger_nodes(owner_namespace, parent_id);
      CREATE TABLE ledger_balances (
        node_id    TEXT NOT NULL REFERENCES ledger_nodes(node_id),
        dimension  TEXT NOT NULL,
        unit       TEXT NOT NULL,
        ceiling    INTEGER NOT NULL CHECK (ceiling >= 0 AND ceiling <= 4611686018427387903),
        consumed   INTEGER NOT NULL DEFAULT 0 CHECK (consumed >= 0),
        reserved   INTEGER NOT NULL DEFAULT 0 CHECK (reserved >= 0),
        CHECK (consumed + reserved <= ceiling),
        PRIMARY KEY (node_id, dimension)
      ) STRICT;
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
      ) STRICT;
      CREATE INDEX ledger_unresolved ON ledger_reservations(status, created_at) WHERE status IN ('held', 'unknown');
      CREATE INDEX ledger_reservations_by_ns ON ledger_reservations(owner_namespace);
      CREATE TABLE ledger_entries (
        seq             INTEGER PRIMARY KEY,
        reservation_id  TEXT NOT NULL REFERENCES ledger_reservations(reservation_id),
        node_id         TEXT NOT NULL,
        dimension       TEXT NOT NULL,
        d_consumed      INTEGER NOT NULL,
        d_reserved      INTEGER NOT NULL,
        reason          TEXT NOT NULL,
        at              TEXT NOT NULL
      ) STRICT;
      CREATE TRIGGER ledger_entries_u BEFORE UPDATE ON ledger_entries BEGIN SELECT RAISE(ABORT, 'ledger entries are immutable'); END;
      CREATE TRIGGER ledger_entries_d BEFORE DELETE ON ledger_entries BEGIN SELECT RAISE(ABORT, 'ledger entries are immutable'); END;
    `,
  },
  { version: 3, sql: CAPACITY_INDEXES },
  { version: 4, sql: pushTablesSql(' STRICT') },
  { version: 5, sql: metaTableSql(' STRICT') },
  { version: 6, sql: workTablesSql(' STRICT') },
  // 7 and 8 are taken by other branches (federation, approvals); the lead renumbers on merge if needed.
  { version: 9, sql: contentTablesSql(' STRICT') },
];
