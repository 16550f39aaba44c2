/**
 * A transaction program on PostgreSQL, its batch's write riding in the round
 * trip of what follows it (issue #24, DESIGN "On PostgreSQL each transaction
 * should be one round trip"; BEGIN rides on the first statement, ./session.ts).
 *
 * What a batch's write (TxBatch.flush) reports is, unless something raced it,
 * what the batch planned: every record revision written, every head moved,
 * every balance charged. So when a program yields its write, it is answered
 * that at once, and the write is deferred: it goes to the server with the
 * program's next statement, or with the COMMIT where it was the last (a
 * verdict's fence read follows its write, an admission's COMMIT does), as a
 * statement that fails (PLAN_MISSED, ./failure.ts) unless it wrote exactly
 * what was planned. The server runs it first and skips everything behind a
 * failure, the COMMIT included, so nothing the program did not accept is
 * ever committed. A program that refuses after its write has its write sent
 * first, so that its refusal stands only on a write that went as planned. A
 * miss rolls the whole transaction back, and the store runs the program again
 * the plain way (`planned` false), where each answer is the one the write gave.
 *
 * Reads go ahead the same way. Before the program runs, a copy of it is run
 * on presumed answers (PRESUMED: what an admission's reads find on its usual
 * path — its new nodes and streams without rows, nothing claimed, capacity to
 * spare) until it asks for something no answer can be presumed for (which
 * goes too, last, where it can: a verdict's resolution of its reservation),
 * or refuses a presumed one. The reads it asked for until then go to the
 * server in one round trip, with BEGIN, in that order, and the program's own
 * calls are answered from them as long as each is the very call read ahead.
 * So a new task's admission is two round trips (its reads; its write with
 * COMMIT) and a verdict three (its reads; its write with its fence read;
 * COMMIT, which waits for the fence check). A program that asks for anything
 * else first, or finishes with reads left over, missed its plan: the
 * transaction rolls back and the program runs the plain way. The reads ahead
 * are the program's own, in its own order, so they take its locks in its
 * order — but for a preset's lock, which waits for the write (NOT_AHEAD).
 */
import { isDeepStrictEqual } from 'node:util';
import type { BatchWrites, BatchWritten, Call, OpName, PresetHold, Program, RootCapacity } from '../tx/ops.ts';
import { dispatch, type AsyncTxOps } from '../tx/run.ts';
import { checkedResult } from '../tx/rows.ts';
import { PlanMissed } from './failure.ts';
import type { Statement } from './pipeline.ts';
import { holdPresetStatement, readSpec, type ReadSpec } from './reads.ts';
import type { PgSession } from './session.ts';

/** The PostgreSQL primitives, and a batch's write as one statement that fails unless it writes what was planned. */
export interface PgTxOps extends AsyncTxOps {
  /** Undefined where the write is not one statement (past the parameter cap). */
  plannedWrite(w: BatchWrites): Statement | undefined;
}

/** What a batch's write reports when nothing raced it: every revision written, each with its head. */
export const asPlanned = (w: BatchWrites): BatchWritten => ({ revisions: w.records.map((r) => r.revision_id), heads: w.records.length });

const SPARE: RootCapacity = { claimed: 0, active_roots: 0, retained: 0, preset_active: 0, preset_issued: 0 };

/** The answers a run ahead presumes (see above); `serialWriters` sends nothing, and is answered as the store would. */
const PRESUMED: Partial<Record<OpName, () => unknown>> = {
  nodes: () => [],
  streamHeads: () => [],
  reservationsClaiming: () => [],
  lockPreset: () => undefined,
  rootCapacity: () => SPARE,
  serialWriters: () => false,
};

/**
 * Calls answered without a read ahead: `serialWriters` sends nothing, and a
 * preset's lock goes with the write (capacity.ts PRESET_HOLD_FN_SQL), so that
 * no admission holds it while its client works.
 */
const NOT_AHEAD: ReadonlySet<OpName> = new Set(['serialWriters', 'lockPreset']);

/** Most reads sent ahead of one program. */
const MAX_AHEAD = 16;

/** The reads a copy of the program asks for on presumed answers, in order (see above). */
export function readsAhead<R>(make: () => Program<R>): { call: Call; spec: ReadSpec }[] {
  const program = make();
  const reads: { call: Call; spec: ReadSpec }[] = [];
  try {
    let step = program.next();
    while (!step.done && reads.length < MAX_AHEAD) {
      const presume = PRESUMED[step.value.op];
      const call = step.value;
      // The first call no answer can be presumed for goes ahead too, last, where it can (a verdict's resolution).
      if (!presume) {
        const spec = readSpec(call);
        if (spec) reads.push({ call, spec });
        break;
      }
      if (!NOT_AHEAD.has(call.op)) reads.push({ call, spec: readSpec(call)! });
      step = program.next(presume());
    }
  } catch {
    // It refused a presumed answer (a fenced stream without a head): the read it refused on is in.
  }
  return reads;
}

/** Sends the reads `make`'s program will make first in one round trip; each with its answer. */
async function sendAhead<R>(make: () => Program<R>, session: PgSession): Promise<{ call: Call; answer: unknown }[]> {
  const reads = readsAhead(make);
  const results = await session.run(reads.flatMap((r) => r.spec.statements));
  let at = 0;
  return reads.map(({ call, spec }) => {
    const n = spec.statements.length;
    at += n;
    return { call, answer: spec.decode(results.slice(at - n, at)) };
  });
}

/** Runs `make`'s program in `session`'s transaction; `planned`: with reads ahead and its write deferred, as above. The caller commits. */
export async function runTransaction<R>(make: () => Program<R>, ops: PgTxOps, session: PgSession, planned: boolean): Promise<R> {
  const ahead = planned ? await sendAhead(make, session) : [];
  const program = make();
  const advance = (answer?: unknown): Promise<IteratorResult<Call, R>> => {
    try {
      return Promise.resolve(program.next(answer));
    } catch (err) {
      // Refused: the write it was told went as planned must have (a miss replaces the refusal, and the plain run decides).
      return session.flush().then(() => Promise.reject(err));
    }
  };
  const answerOf = async (call: Call): Promise<unknown> => {
    if (planned && call.op === 'lockPreset') {
      // Taken, and the preset's limits checked again, in the round trip of the write (see NOT_AHEAD).
      session.defer(holdPresetStatement(call.args[0] as PresetHold));
      return undefined;
    }
    if (ahead.length > 0 && !NOT_AHEAD.has(call.op)) {
      const read = ahead.shift()!;
      if (!isDeepStrictEqual(read.call, call)) throw new PlanMissed(`the program asked for ${call.op} where ${read.call.op} was read ahead`);
      return read.answer;
    }
    const write = planned && call.op === 'writeBatch' ? ops.plannedWrite(call.args[0] as BatchWrites) : undefined;
    if (write === undefined) return dispatch(ops, call);
    session.defer(write);
    return asPlanned(call.args[0] as BatchWrites);
  };
  let step = await advance();
  while (!step.done) {
    const call: Call = step.value;
    step = await advance(checkedResult(call, await answerOf(call)));
  }
  if (ahead.length > 0) throw new PlanMissed(`the program finished with ${ahead.length} reads ahead left over`);
  return step.value;
}
