/** Drivers that run a transaction program against primitives, sync or async. */
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

/** Runs `program` to completion with asynchronous primitives (inside the caller's transaction). */
export async function runAsync<R>(program: Program<R>, ops: AsyncTxOps): Promise<R> {
  let step = program.next();
  while (!step.done) {
    step = program.next(checkedResult(step.value, await dispatch(ops, step.value)));
  }
  return step.value;
}

/** Answers one primitive call with `ops`. */
export function dispatch<O extends TxOps | AsyncTxOps>(ops: O, call: Call): unknown {
  const fn = ops[call.op] as (...args: unknown[]) => unknown;
  return fn.apply(ops, call.args as unknown[]);
}
