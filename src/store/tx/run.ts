/**
 * Running a transaction program against primitives: synchronously here; the
 * PostgreSQL adapter's asynchronous driver is postgres/transaction.ts.
 */
import type { Call, Program, TxOps } from './ops.ts';
import { checkedResult } from './rows.ts';

export type AsyncTxOps = { [K in keyof TxOps]: (...args: Parameters<TxOps[K]>) => Promise<ReturnType<TxOps[K]>> };

/** Runs `program` to completion with synchronous primitives (inside the caller's transaction). */
export function runSync<R>(program: Program<R>, ops: TxOps): R {
  let step = program.next();
  while (!step.done) {
    step = program.next(checkedResult(step.value, dispatch(ops, step.value)));
  }
  return step.value;
}

/** Answers one primitive call with `ops`. */
export function dispatch<O extends TxOps | AsyncTxOps>(ops: O, call: Call): unknown {
  const fn = ops[call.op] as (...args: unknown[]) => unknown;
  return fn.apply(ops, call.args as unknown[]);
}
