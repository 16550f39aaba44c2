/**
 * ADR-0014 capacity: each owner namespace's unresolved reservations (held, or
 * unknown), which count against its retained records, kept as counter rows by
 * triggers on the writes that change them, per dialect (capacity.ts reads them).
 */

/** A reservation still unresolved (held, or unknown: ADR-0014 durable uncertainty holds capacity), as a condition on `status` of the row named. */
export const unresolvedIn = (row?: string) => `${row ? `${row}.` : ''}status IN ('held', 'unknown')`;

/** A namespace's unresolved reservations, by how its store counts them ({@link Unresolved}). */
export const UNRESOLVED_COUNT: Record<Unresolved, (ns: string) => string> = {
  counter: (ns) => `coalesce((SELECT n FROM ledger_unresolved_counts WHERE owner_namespace = ${ns}), 0)`,
  stripes: (ns) => `(SELECT coalesce(sum(n), 0)::bigint FROM ledger_unresolved_counts WHERE owner_namespace = ${ns})`,
};

/**
 * How a namespace's unresolved reservations are counted: read from its
 * counter row (ledger_unresolved_counts, SQLite since migration 16), or summed
 * over its counter's stripes (PostgreSQL since migration 26). Both replaced a
 * walk of the namespace's unresolved reservations, as long as the backlog.
 */
export type Unresolved = 'counter' | 'stripes';

/**
 * Migration 16 (SQLite, issue #24 "capacity limits kept as counter rows that
 * the same writes maintain"): the number of held or unknown reservations per
 * namespace, kept by triggers on the statements that write reservations, so
 * the retained count (capacity.ts retainedSql) reads one row instead of walking every
 * unresolved reservation — a walk as long as the backlog (up to
 * maxRetainedRecords), paid by every admission. A reservation becomes
 * unresolved only when inserted so, and stops being so once (resolve-once,
 * ledger/rules.ts); the triggers also count the other direction and
 * deletions, so the row stays the rule's count whatever writes it.
 * PostgreSQL keeps it striped (migration 26, below): there one row per
 * namespace, locked from an admission's insert to its commit, would serialise
 * the namespace's admissions across processes.
 */
export const UNRESOLVED_COUNTER_SQLITE = `
  CREATE TABLE ledger_unresolved_counts (
    owner_namespace  TEXT PRIMARY KEY,
    n                INTEGER NOT NULL CHECK (n >= 0)
  ) STRICT, WITHOUT ROWID;
  INSERT INTO ledger_unresolved_counts(owner_namespace, n)
    SELECT owner_namespace, count(*) FROM ledger_reservations WHERE ${unresolvedIn()} GROUP BY owner_namespace;
  CREATE TRIGGER ledger_unresolved_on_insert AFTER INSERT ON ledger_reservations WHEN ${unresolvedIn('NEW')} BEGIN
    INSERT INTO ledger_unresolved_counts(owner_namespace, n) VALUES (NEW.owner_namespace, 1)
      ON CONFLICT (owner_namespace) DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER ledger_unresolved_on_update AFTER UPDATE OF status, owner_namespace ON ledger_reservations
    WHEN (${unresolvedIn('OLD')}) <> (${unresolvedIn('NEW')}) OR (OLD.owner_namespace <> NEW.owner_namespace AND ${unresolvedIn('NEW')}) BEGIN
    UPDATE ledger_unresolved_counts SET n = n - 1 WHERE owner_namespace = OLD.owner_namespace AND ${unresolvedIn('OLD')};
    INSERT INTO ledger_unresolved_counts(owner_namespace, n) SELECT NEW.owner_namespace, 1 WHERE ${unresolvedIn('NEW')}
      ON CONFLICT (owner_namespace) DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER ledger_unresolved_on_delete AFTER DELETE ON ledger_reservations WHEN ${unresolvedIn('OLD')} BEGIN
    UPDATE ledger_unresolved_counts SET n = n - 1 WHERE owner_namespace = OLD.owner_namespace;
  END;
`;

/** Rows of a namespace's counter on PostgreSQL: more than the connections that write at once, in practice. */
export const UNRESOLVED_STRIPES = 64;

const stripeAdd = (ns: string, delta: string) => `INSERT INTO ledger_unresolved_counts(owner_namespace, stripe, n) VALUES (${ns}, s, ${delta})
      ON CONFLICT (owner_namespace, stripe) DO UPDATE SET n = ledger_unresolved_counts.n + (${delta})`;

/**
 * PostgreSQL migration 26 (issue #24): the counter of SQLite's migration 16,
 * striped. The walk it replaces read every unresolved reservation of the
 * namespace on each admission — about 800 index entries a call once the
 * admission bench had a few thousand outstanding, and up to
 * maxRetainedRecords (10,000) on a gateway whose agents stopped answering,
 * when admission should be cheapest. One row per namespace would do, but a
 * row lock taken by an admission's insert is held through its commit, so it
 * would serialise the namespace's admissions across connections and
 * processes. Each connection counts on its own stripe instead
 * (pg_backend_pid() modulo {@link UNRESOLVED_STRIPES}), and the count is the
 * sum: exact, because every insert, resolution and deletion of an unresolved
 * reservation adds its +1 or -1 to some stripe of its namespace in the same
 * transaction (a resolution may land on another stripe than its insert, so a
 * stripe alone can be negative). The triggers fire whatever program writes,
 * as on SQLite. The filling read is exact too: SHARE MODE waits for the
 * writers under way and holds new ones off until the triggers exist.
 * ledger_reservations_live, read only by the walk, goes (as SQLite's 17).
 */
export const UNRESOLVED_COUNTER_PG = `
  LOCK TABLE ledger_reservations IN SHARE MODE;
  CREATE TABLE ledger_unresolved_counts (
    owner_namespace  TEXT NOT NULL,
    stripe           INTEGER NOT NULL CHECK (stripe >= 0 AND stripe < ${UNRESOLVED_STRIPES}),
    n                BIGINT NOT NULL,
    PRIMARY KEY (owner_namespace, stripe)
  );
  INSERT INTO ledger_unresolved_counts(owner_namespace, stripe, n)
    SELECT owner_namespace, 0, count(*) FROM ledger_reservations WHERE ${unresolvedIn()} GROUP BY owner_namespace;
  CREATE FUNCTION ledger_unresolved_count() RETURNS trigger LANGUAGE plpgsql AS $fn$
  DECLARE s integer := pg_backend_pid() % ${UNRESOLVED_STRIPES};
  BEGIN
    IF TG_OP <> 'INSERT' AND ${unresolvedIn('OLD')} THEN ${stripeAdd('OLD.owner_namespace', '-1')}; END IF;
    IF TG_OP <> 'DELETE' AND ${unresolvedIn('NEW')} THEN ${stripeAdd('NEW.owner_namespace', '1')}; END IF;
    RETURN NULL;
  END $fn$;
  CREATE TRIGGER ledger_unresolved_on_insert AFTER INSERT ON ledger_reservations
    FOR EACH ROW WHEN (${unresolvedIn('NEW')}) EXECUTE FUNCTION ledger_unresolved_count();
  CREATE TRIGGER ledger_unresolved_on_update AFTER UPDATE OF status, owner_namespace ON ledger_reservations
    FOR EACH ROW WHEN ((${unresolvedIn('OLD')}) <> (${unresolvedIn('NEW')}) OR OLD.owner_namespace <> NEW.owner_namespace)
    EXECUTE FUNCTION ledger_unresolved_count();
  CREATE TRIGGER ledger_unresolved_on_delete AFTER DELETE ON ledger_reservations
    FOR EACH ROW WHEN (${unresolvedIn('OLD')}) EXECUTE FUNCTION ledger_unresolved_count();
  DROP INDEX ledger_reservations_live;
`;

/**
 * SQLite migration 17 (issue #24): with the counter of migration 16 nothing
 * on SQLite reads ledger_reservations by namespace any more (every read goes
 * by reservation id, effect id, root or unresolved status, and none scans the
 * table: test/store/sqlite-query-plans.test.ts), so the index only cost a
 * B-tree page per admission and per verdict, whose status change moves its
 * entry. PostgreSQL kept it for its walk until its own counter (migration 26).
 */
export const DROP_NAMESPACE_INDEX_SQLITE = 'DROP INDEX ledger_reservations_live;';
