/**
 * One transaction on one pooled client, whose bookends ride on its statements
 * (issue #24): BEGIN goes in the round trip of the first statement, and a
 * statement whose answer the caller does not wait for (a batch's write that
 * checks itself, ./transaction.ts) goes in the round trip of whatever follows
 * it: the next statement, or the COMMIT. A transaction of n statements whose
 * last is its write is then n round trips instead of n + 2.
 *
 * What a lost connection means is unchanged, with one honest widening: once
 * a round trip that holds COMMIT is sent, its outcome is unknown until the
 * server answers (`committing`), even if the connection is lost before the
 * statement in front of it finished.
 */
import type pg from 'pg';
import { pipelined, type Queryable, type Statement, type StatementResult } from './pipeline.ts';
import type { StatementNames } from './prepared.ts';

const BEGIN: Statement = { text: 'BEGIN' };
const COMMIT: Statement = { text: 'COMMIT' };

export class PgSession implements Queryable {
  /** BEGIN was sent: the server may hold an open transaction for this client. */
  begun = false;
  /** A COMMIT was sent: if the connection is lost now, whether it committed is unknown. */
  committing = false;
  /** The server answered the COMMIT. */
  committed = false;
  /** Statements whose answers the caller does not wait for (a write that checks itself): sent ahead of the next. */
  private readonly deferred: Statement[] = [];

  constructor(
    readonly client: pg.PoolClient,
    private readonly names: StatementNames | undefined,
    private readonly types: pg.CustomTypesConfig,
  ) {}

  async query<T = unknown>(text: string, values?: readonly unknown[]): Promise<StatementResult<T>> {
    const lead = this.lead();
    if (lead.length === 0) {
      const res = await this.client.query(text, values as unknown[] | undefined);
      return { rows: res.rows as T[], rowCount: res.rowCount };
    }
    const results = await this.pipeline([...lead, { text, ...(values ? { values } : {}) }]);
    return results[results.length - 1] as StatementResult<T>;
  }

  /** Sends `statements` in one round trip (with what must go ahead of them); their answers. */
  async run(statements: readonly Statement[]): Promise<StatementResult[]> {
    if (statements.length === 0) return [];
    const lead = this.lead();
    return (await this.pipeline([...lead, ...statements])).slice(lead.length);
  }

  /**
   * Sends `statement` with whatever the transaction sends next (a statement,
   * or its COMMIT), without waiting for its answer: for a statement that
   * fails unless it did what the caller assumed (transaction.ts).
   */
  defer(statement: Statement): void {
    this.deferred.push(statement);
  }

  /** Sends the deferred statements now, alone (the caller is about to give up on the transaction, and must know they held). */
  async flush(): Promise<void> {
    if (this.deferred.length > 0) await this.pipeline(this.lead());
  }

  /** Commits what ran, with what was deferred; a transaction in which nothing ran was never opened. */
  async commit(): Promise<void> {
    if (this.committed || (!this.begun && this.deferred.length === 0)) return;
    const statements = [...this.lead(), COMMIT];
    this.committing = true;
    if (statements.length === 1) await this.client.query(COMMIT.text);
    else await this.pipeline(statements);
    this.committed = true;
  }

  /** Rolls back an open transaction (a failed one included: its COMMIT was skipped or refused); what was deferred is dropped. */
  async rollback(): Promise<void> {
    this.deferred.length = 0;
    if (this.begun && !this.committed) await this.client.query('ROLLBACK');
  }

  /** What must go ahead of the next statement: BEGIN if not sent yet, then the deferred statements. */
  private lead(): Statement[] {
    const lead = this.begun ? [] : [BEGIN];
    this.begun = true;
    lead.push(...this.deferred.splice(0));
    return lead;
  }

  private pipeline(statements: readonly Statement[]): Promise<StatementResult[]> {
    return pipelined(this.client, statements, this.names, this.types);
  }
}
