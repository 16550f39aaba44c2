/**
 * Planner statistics for a young schema (issue #24). The store's statements
 * are prepared once per connection (prepared.ts), and PostgreSQL keeps the
 * plan it chose for one until something invalidates it — in practice the
 * next ANALYZE of a table it reads. A fresh schema is not analyzed until
 * autovacuum gets to it (after its naptime, a minute by default), so every
 * plan made while the tables were a few pages long stays in use while they
 * grow: measured on a fresh schema at c=32, the fence read, the head checks
 * of the batch write and the charge joined their small input against a
 * sequential scan of control_heads, record_heads and ledger_balances, about
 * 60,000 rows read and 19.5 ms of server CPU per delegated call, 55 calls/s;
 * after one ANALYZE the same load ran at 152 calls/s on 4.0 ms of server CPU
 * per call, every read an index probe.
 *
 * So this process analyzes its own tables while they are young: after
 * {@link FIRST_CHECK} committed transactions, then after twice as many again
 * each time until the gap is {@link GrowthStatistics.every}, then every
 * `every` committed transactions, it compares each
 * table's size with the size the planner last recorded for it (pg_class.
 * relpages, set by ANALYZE and VACUUM, 0 before either), and analyzes those
 * that have at least doubled. A table is analyzed about log2(size) times in
 * its life, and once autovacuum keeps up (it re-analyzes after a tenth of a
 * table changed) this finds nothing to do. The ANALYZE invalidates the plans
 * that read the table, on every connection of every process, so they are made
 * again for its present size.
 *
 * ANALYZE (SKIP_LOCKED) does not wait for another session's ANALYZE or VACUUM
 * of the same table (another node doing the same); a table this role does not
 * own is skipped by the server with a warning, and is not tried again until
 * it doubles once more. Nothing here is on a request's path: a check runs
 * after the commit that triggered it, one at a time, and a failure only
 * leaves the statistics as they were (it is counted, for tests and
 * diagnostics).
 */

import { z } from 'zod';

/** Runs one statement on the store's pool as a simple query (no parameters, never prepared) and returns its rows. */
export type PoolQuery = (sql: string) => Promise<unknown[]>;

/** A table this small is read whole about as fast as through an index: never analyzed on its account. */
export const MIN_PAGES = 16;

/** Committed transactions between two size checks, by default. */
export const CHECK_EVERY = 500;

/**
 * Committed transactions before this process's first check. The gaps double
 * from here up to `every`: a schema fresh enough for every plan to be a scan
 * outgrows those plans within the first few hundred transactions, and until a
 * check re-plans them each costs more the more the tables hold.
 */
export const FIRST_CHECK = 32;

// Relations of the schema the connection works in (its search_path), with their size in pages now.
const SIZES_SQL = `SELECT c.relname AS name, c.relpages::int AS planned, (pg_relation_size(c.oid) / current_setting('block_size')::int)::int AS pages
  FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'`;

const SizeRow = z.object({ name: z.string().min(1), planned: z.number().int().min(0), pages: z.number().int().min(0) });

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

export class GrowthStatistics {
  private readonly tables: ReadonlySet<string>;
  private commits = 0;
  /** Committed transactions from one check to the next: {@link FIRST_CHECK}, doubling up to `every`. */
  private gap: number;
  private running: Promise<string[]> | undefined;
  /** Pages of each table when this process last asked for its ANALYZE: not asked again before it doubles from there. */
  private readonly asked = new Map<string, number>();
  readonly stats = { checks: 0, analyzed: 0, failures: 0 };

  /**
   * @param query the store's pool, as a simple query
   * @param tables Baton's own tables: the only ones it analyzes, in a schema it may share
   * @param every committed transactions between two checks (0: only {@link refresh} called by hand)
   */
  constructor(
    private readonly query: PoolQuery,
    tables: readonly string[],
    readonly every = CHECK_EVERY,
  ) {
    this.tables = new Set(tables);
    this.gap = Math.min(FIRST_CHECK, every);
  }

  /** Called after each committed transaction; starts a check once the gap is reached, unless one is under way. */
  committed(): void {
    if (this.every <= 0 || ++this.commits < this.gap) return;
    this.commits = 0;
    this.gap = Math.min(2 * this.gap, this.every);
    if (this.running) return;
    void this.refresh().catch(() => this.stats.failures++);
  }

  /** Analyzes the tables that have doubled since the planner last saw them; returns their names. */
  refresh(): Promise<string[]> {
    this.running ??= this.check().finally(() => (this.running = undefined));
    return this.running;
  }

  /** Waits for a check under way (before the pool closes). */
  async settled(): Promise<void> {
    await this.running?.catch(() => undefined);
  }

  private async check(): Promise<string[]> {
    this.stats.checks++;
    const sizes = (await this.query(SIZES_SQL)).map((row) => SizeRow.parse(row));
    const grown = sizes.filter((t) => this.tables.has(t.name) && t.pages >= MIN_PAGES && t.pages >= 2 * Math.max(t.planned, this.asked.get(t.name) ?? 0));
    if (grown.length === 0) return [];
    await this.query(`ANALYZE (SKIP_LOCKED) ${grown.map((t) => quoted(t.name)).join(', ')}`);
    // Only once it went through: an ANALYZE that failed (a lost connection, a cancelled statement) is asked again next check.
    for (const t of grown) this.asked.set(t.name, t.pages);
    this.stats.analyzed += grown.length;
    return grown.map((t) => t.name);
  }
}
