/**
 * PostgreSQL schema: the same tables and CHECKs as SQLite, in PostgreSQL
 * types. Migrations run under an advisory lock so several Baton processes
 * starting together against one database migrate it exactly once.
 */
import { CAPACITY_INDEXES } from '../capacity.ts';
import { metaTableSql } from '../meta.ts';
import { pushTablesSql } from '../push-sql.ts';
import { workTablesSql } from '../work-sql.ts';
import { contentTablesSql } from '../content-sql.ts';

export const PG_MIGRATIONS: ReadonlyArray<{ version: number; sql: string }> = [
  {
    version: 1,
    sql: `
      CREATE TABLE records (
        seq BIGSERIAL PRIMARY KEY,
        record_id TEXT NOT NULL,
        revision_id TEXT NOT NULL UNIQUE,
        content_digest TEXT NOT NULL UNIQUE,
        schema_ref TEXT NOT NULL,
        prior_revision TEXT,
        document TEXT NOT NULL,
        stored_at TEXT NOT NULL
      );
      CREATE INDEX records_by_record ON records(record_id, seq);
      CREATE TABLE record_heads (record_id TEXT PRIMARY KEY, revision_id TEXT NOT NULL REFERENCES records(revision_id));
      CREATE FUNCTION baton_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION '% rows are immutable', TG_TABLE_NAME; END $$;
      CREATE TRIGGER records_immutable BEFORE UPDATE OR DELETE ON records FOR EACH ROW EXECUTE FUNCTION baton_immutable();
    `,
  },
  {
    version: 2,
    sql: `
      CREATE TABLE control_events (
        project_id TEXT NOT NULL,
        branch_id TEXT NOT NULL,
        position BIGINT NOT NULL CHECK (position > 0),
        event_id TEXT NOT NULL UNIQUE,
        event_type TEXT NOT NULL,
        idempotency_key TEXT,
        input_digest TEXT NOT NULL,
        event_digest TEXT NOT NULL,
        document TEXT NOT NULL,
        UNIQUE (project_id, branch_id, position)
      );
      CREATE UNIQUE INDEX control_idempotency ON control_events(project_id, branch_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
      CREATE TABLE control_heads (
        project_id TEXT NOT NULL,
        branch_id TEXT NOT NULL,
        scope_kind TEXT NOT NULL,
        position BIGINT NOT NULL,
        event_id TEXT NOT NULL,
        event_digest TEXT NOT NULL,
        state TEXT NOT NULL,
        PRIMARY KEY (project_id, branch_id)
      );
      CREATE TRIGGER control_immutable BEFORE UPDATE OR DELETE ON control_events FOR EACH ROW EXECUTE FUNCTION baton_immutable();
      CREATE TABLE ledger_nodes (
        node_id TEXT PRIMARY KEY,
        parent_id TEXT REFERENCES ledger_nodes(node_id),
        root_id TEXT NOT NULL,
        depth INTEGER NOT NULL CHECK (depth >= 0),
        space_id TEXT NOT NULL,
        owner_namespace TEXT NOT NULL,
        not_after TEXT NOT NULL,
        request_digest TEXT NOT NULL,
        issued_event TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE INDEX ledger_nodes_by_root ON ledger_nodes(root_id);
      CREATE INDEX ledger_nodes_by_ns ON ledger_nodes(owner_namespace, parent_id);
      CREATE TABLE ledger_balances (
        node_id TEXT NOT NULL REFERENCES ledger_nodes(node_id),
        dimension TEXT NOT NULL,
        unit TEXT NOT NULL,
        ceiling BIGINT NOT NULL CHECK (ceiling >= 0 AND ceiling <= 4611686018427387903),
        consumed BIGINT NOT NULL DEFAULT 0 CHECK (consumed >= 0),
        reserved BIGINT NOT NULL DEFAULT 0 CHECK (reserved >= 0),
        CHECK (consumed + reserved <= ceiling),
        PRIMARY KEY (node_id, dimension)
      );
      CREATE TABLE ledger_reservations (
        reservation_id TEXT PRIMARY KEY,
        effect_id TEXT NOT NULL UNIQUE,
        root_id TEXT NOT NULL,
        owner_namespace TEXT NOT NULL,
        chain TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('consume', 'reserve')),
        amounts TEXT NOT NULL,
        charged TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('held', 'unknown', 'settled', 'released', 'consumed')),
        request_digest TEXT NOT NULL,
        receipt TEXT NOT NULL,
        settlement TEXT,
        created_at TEXT NOT NULL,
        settled_at TEXT
      );
      CREATE INDEX ledger_unresolved ON ledger_reservations(status, created_at) WHERE status IN ('held', 'unknown');
      CREATE INDEX ledger_reservations_by_ns ON ledger_reservations(owner_namespace);
      CREATE TABLE ledger_entries (
        seq BIGSERIAL PRIMARY KEY,
        reservation_id TEXT NOT NULL REFERENCES ledger_reservations(reservation_id),
        node_id TEXT NOT NULL,
        dimension TEXT NOT NULL,
        d_consumed BIGINT NOT NULL,
        d_reserved BIGINT NOT NULL,
        reason TEXT NOT NULL,
        at TEXT NOT NULL
      );
      CREATE TRIGGER ledger_entries_immutable BEFORE UPDATE OR DELETE ON ledger_entries FOR EACH ROW EXECUTE FUNCTION baton_immutable();
    `,
  },
  { version: 3, sql: CAPACITY_INDEXES },
  { version: 4, sql: pushTablesSql('') },
  { version: 5, sql: metaTableSql('') },
  { version: 6, sql: workTablesSql('') },
  { version: 9, sql: contentTablesSql('') },
];
