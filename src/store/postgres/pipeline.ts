/**
 * Several statements in one round trip (issue #24; DESIGN "On PostgreSQL each
 * transaction should be one round trip"). node-postgres sends one query,
 * waits for the server's ReadyForQuery, then sends the next. The extended
 * protocol allows more: any number of Parse/Bind/Describe/Execute groups
 * before one Sync, answered in order (PostgreSQL manual, "Pipelining"). A
 * {@link Pipeline} is such a group, handed to a pg.Client as pg's own cursor
 * and stream packages hand theirs (a Submittable).
 *
 * What the server does with it is what it does with the same statements sent
 * one by one inside a transaction block: each statement its own snapshot (READ
 * COMMITTED), in order. The first one that fails ends the pipeline there: the
 * server skips the rest up to the Sync, and the error names its statement
 * (`statementIndex`).
 *
 * ./session.ts uses it to put a transaction's BEGIN on its first statement and
 * its batch's write on what follows it, COMMIT included; ./transaction.ts to
 * send a program's first reads together.
 */
import pg from 'pg';
import { stalePlan } from './failure.ts';
import type { StatementNames } from './prepared.ts';

export interface Statement {
  text: string;
  values?: readonly unknown[];
}

export interface StatementResult<T = unknown> {
  rows: T[];
  rowCount: number | null;
}

/** What the adapter's statements run on: a pooled client, or a transaction's session. */
export interface Queryable {
  query<T = unknown>(text: string, values?: readonly unknown[]): Promise<StatementResult<T>>;
}

/** The parts of pg's Connection a pipeline writes to (pg/lib/connection.js; not all in @types/pg). */
interface Wire {
  stream: { cork?(): void; uncork?(): void };
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
  parse(m: { text: string; name: string; types: number[] }): void;
  bind(m: { portal: string; statement: string; values: unknown[] }): void;
  describe(m: { type: 'P'; name: string }): void;
  execute(m: { portal: string; rows: number }): void;
  sync(): void;
  on(event: 'parseComplete', fn: () => void): void;
  removeListener(event: 'parseComplete', fn: () => void): void;
  sendCopyFail(msg: string): void;
}

interface Message {
  fields: unknown[];
}

/** pg's Result as its own Query uses it (pg/lib/result.js): rows parsed with the pool's type parsers. */
interface ResultBuilder {
  rows: unknown[];
  rowCount: number | null;
  addFields(fields: unknown[]): void;
  parseRow(fields: unknown[]): unknown;
  addRow(row: unknown): void;
  addCommandComplete(msg: unknown): void;
}

const internals = pg as unknown as {
  utils: { prepareValue(v: unknown): unknown };
  Result: new (rowMode: undefined, types: pg.CustomTypesConfig) => ResultBuilder;
};
const prepareValue = internals.utils.prepareValue;

/**
 * Statements sent together and answered together. Parameterised texts are
 * sent as the named statements `names` gives them (prepared.ts), parsed once
 * per connection; this pipeline keeps pg's per-connection record of what is
 * parsed, since pg's client notes at most one name per query.
 */
export class Pipeline {
  readonly done: Promise<StatementResult[]>;
  private settle!: { resolve(r: StatementResult[]): void; reject(err: unknown): void };
  private readonly results: StatementResult[] = [];
  private current: ResultBuilder | undefined;
  /** Names (or '' for unnamed) whose Parse was sent and not yet answered, in order. */
  private readonly parsing: { name: string; text: string }[] = [];
  private wire: Wire | undefined;
  private failure: unknown;

  constructor(
    readonly statements: readonly Statement[],
    /** Where parameterised texts get their names (undefined: all go unnamed). */
    readonly names: StatementNames | undefined,
    private readonly types: pg.CustomTypesConfig,
  ) {
    this.done = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
  }

  /** pg's Submittable: called once the client is ready for a query. */
  submit(connection: unknown): Error | null {
    const wire = connection as Wire;
    let values: unknown[][];
    try {
      values = this.statements.map((s) => (s.values ?? []).map((v) => prepareValue(v)));
    } catch (err) {
      return err as Error; // nothing sent: pg reports it through handleError
    }
    this.wire = wire;
    wire.on('parseComplete', this.parsed);
    wire.stream.cork?.();
    try {
      this.statements.forEach((s, i) => {
        const name = s.values !== undefined && s.values.length > 0 ? (this.names?.nameOf(s.text) ?? '') : '';
        if (name === '' || (wire.parsedStatements[name] === undefined && wire.submittedNamedStatements[name] === undefined)) {
          wire.parse({ text: s.text, name, types: [] });
          if (name !== '') wire.submittedNamedStatements[name] = s.text;
          this.parsing.push({ name, text: s.text });
        }
        wire.bind({ portal: '', statement: name, values: values[i]! });
        wire.describe({ type: 'P', name: '' });
        wire.execute({ portal: '', rows: 0 });
      });
      wire.sync();
    } finally {
      wire.stream.uncork?.();
    }
    return null;
  }

  private readonly parsed = (): void => {
    const p = this.parsing.shift();
    if (p && p.name !== '' && this.wire) {
      this.wire.parsedStatements[p.name] = p.text;
      delete this.wire.submittedNamedStatements[p.name];
    }
  };

  /** Stops listening; a Parse never answered did not create its statement. */
  private finish(): void {
    if (!this.wire) return;
    this.wire.removeListener('parseComplete', this.parsed);
    for (const p of this.parsing.splice(0)) if (p.name !== '') delete this.wire.submittedNamedStatements[p.name];
  }

  handleRowDescription(msg: Message): void {
    this.current = new internals.Result(undefined, this.types);
    this.current.addFields(msg.fields);
  }

  handleDataRow(msg: Message): void {
    if (this.failure !== undefined || !this.current) return;
    try {
      this.current.addRow(this.current.parseRow(msg.fields));
    } catch (err) {
      this.failure = err;
    }
  }

  handleCommandComplete(msg: unknown): void {
    const r = this.current ?? new internals.Result(undefined, this.types);
    r.addCommandComplete(msg);
    this.results.push({ rows: r.rows, rowCount: r.rowCount });
    this.current = undefined;
  }

  handleEmptyQuery(): void {
    this.results.push({ rows: [], rowCount: null });
    this.current = undefined;
  }

  handleError(err: unknown): void {
    this.finish();
    const index = this.results.length;
    const failed = this.statements[index];
    if (failed && stalePlan(err)) this.names?.forget(failed.text);
    if (err !== null && typeof err === 'object') Object.assign(err, { statementIndex: index });
    this.settle.reject(err);
  }

  handleReadyForQuery(): void {
    this.finish();
    if (this.failure !== undefined) this.settle.reject(this.failure);
    else this.settle.resolve(this.results);
  }

  handlePortalSuspended(): void {}

  handleCopyInResponse(): void {
    this.wire?.sendCopyFail('not expected in a pipeline');
  }

  handleCopyData(): void {}
}

/** Sends `statements` in one round trip on `client`; the results in order. */
export function pipelined(client: pg.ClientBase, statements: readonly Statement[], names: StatementNames | undefined, types: pg.CustomTypesConfig): Promise<StatementResult[]> {
  const p = new Pipeline(statements, names, types);
  client.query(p as unknown as pg.Submittable);
  return p.done;
}
