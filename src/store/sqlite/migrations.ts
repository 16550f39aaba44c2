/**
 * SQLite schema, as an ordered list of migrations. Every table is STRICT, so a
 * value of the wrong type is an error instead of a silent coercion, and every
 * integer is read back as a BigInt (see database.ts).
 */
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
        revision_id  TEXT NOT NULL,
        seq          INTEGER NOT NULL REFERENCES records(seq)
      ) STRICT;
      -- RW-003 §1: every record is immutable; corrections are new revisions.
      CREATE TRIGGER records_immutable_u BEFORE UPDATE ON records BEGIN SELECT RAISE(ABORT, 'records are immutable'); END;
      CREATE TRIGGER records_immutable_d BEFORE DELETE ON records BEGIN SELECT RAISE(ABORT, 'records are immutable'); END;
    `,
  },
];
