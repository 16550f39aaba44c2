/**
 * Server-side prepared statements for the PostgreSQL adapter (issue #24).
 * node-postgres sends a parameterised query unnamed unless told otherwise,
 * and the server then parses, analyses and plans its text on every
 * execution: for a durable admission, whose writes are one statement of
 * several data-modifying CTEs, that was about a third of the server's CPU
 * (2.15 → 1.47 ms per admission; 249 / 265 → 318 / 321 admissions/s in one
 * process, old and new tree alternated). Named, a statement is parsed once
 * per connection.
 *
 * - Every parameterised text gets one name for the life of the process
 *   (`baton_<n>`); the texts are the adapter's own, a bounded set of shapes,
 *   and past {@link MAX_NAMED} distinct texts the rest go unnamed, so a
 *   connection never holds more than that many.
 * - A text without parameters (BEGIN, COMMIT, a migration's DDL) stays a
 *   simple query: it may hold several statements.
 * - A prepared statement whose result columns changed under it (another node
 *   migrated the schema: PostgreSQL refuses with 0A000 "cached plan must not
 *   change result type") is dropped from the names for good: that text goes
 *   unnamed from then on, and the store runs the refused statement or
 *   transaction again (failure.ts stalePlan).
 * - Off (`store.preparedStatements: false`) for a connection pooler that
 *   hands one client's statements to several server sessions (PgBouncer in
 *   transaction mode before 1.21).
 */
import pg from 'pg';
import { stalePlan } from './failure.ts';

/** Most distinct texts one process names. */
export const MAX_NAMED = 512;

/** Which texts are sent as which named statement (one per process, shared by every pooled client). */
export class StatementNames {
  private readonly names = new Map<string, string>();
  /** Texts whose prepared form went stale: never named again (the stale one may still exist on a connection). */
  private readonly unnamed = new Set<string>();
  private issued = 0;

  constructor(private readonly max = MAX_NAMED) {}

  /** The name `text` is prepared under, or undefined where it goes unnamed. */
  nameOf(text: string): string | undefined {
    const known = this.names.get(text);
    if (known !== undefined || this.issued >= this.max || this.unnamed.has(text)) return known;
    const name = `baton_${++this.issued}`;
    this.names.set(text, name);
    return name;
  }

  /** Stops naming `text` (its prepared form went stale). */
  forget(text: string): void {
    if (this.names.delete(text)) this.unnamed.add(text);
  }

  /** How many texts are named now. */
  get size(): number {
    return this.names.size;
  }
}

type QueryArgs = [config: unknown, values?: unknown, callback?: unknown];
type Callback = (err: unknown, res?: unknown) => void;

/** A pg.Client (for pg.Pool's `Client` option) that sends each parameterised text as the named statement `names` gives it. */
export function namingClient(names: StatementNames): typeof pg.Client {
  return class NamingClient extends pg.Client {
    // pg.Client's query is heavily overloaded; its arguments pass through unchanged unless a name is added.
    override query(...args: QueryArgs): never {
      const [text, values, callback] = args;
      const name = typeof text === 'string' && Array.isArray(values) ? names.nameOf(text) : undefined;
      const send = super.query as (...a: QueryArgs) => unknown;
      if (name === undefined) return send.apply(this, args) as never;
      const stale = (err: unknown) => void (stalePlan(err) && names.forget(text as string));
      // pg-pool's own query passes a callback; the transactions await the promise.
      if (typeof callback === 'function') return send.call(this, { name, text, values }, (err: unknown, res: unknown) => (stale(err), (callback as Callback)(err, res))) as never;
      return (send.call(this, { name, text, values }) as Promise<unknown>).catch((err: unknown) => {
        stale(err);
        throw err;
      }) as never;
    }
  };
}
