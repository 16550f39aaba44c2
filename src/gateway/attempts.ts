/**
 * The attempt repository: ExecutionAttempt records (RW-003 §7) read back
 * through their zod schema (never cast), and revised on top of whatever the
 * newest revision is. Several paths revise one attempt (a verdict, a stop, a
 * follow-up turn, another node): a revision that loses the race to another
 * is rebuilt on the new head, so a conflict after an effect is never a
 * refusal reported to the caller.
 */
import { isBatonError, storageError } from '../errors.ts';
import { refOf, sealRecord, summariseIssues, type SealedRecord } from '../records/envelope.ts';
import type { IdSource } from '../records/ids.ts';
import type { ActorRef } from '../records/revision-ref.ts';
import type { Clock } from '../records/time.ts';
import type { Envelope } from '../records/envelope.ts';
import type { Store } from '../store/port.ts';
import { AttemptBodySchema, type AttemptBody } from '../attempts/record.ts';

export type Attempt = SealedRecord<AttemptBody>;

export interface AttemptRepositoryDeps {
  store: Store;
  clock: Clock;
  ids: IdSource;
  gatewayActor: ActorRef;
}

/** A patch computed from the newest revision; undefined leaves the attempt as it is. */
export type AttemptPatch = (latest: Attempt) => Partial<AttemptBody> | undefined;

const MAX_REBASES = 8;

/** Parses a stored record as an attempt, or undefined when it is none. */
export function attemptOf(record: Envelope | undefined): Attempt | undefined {
  if (!record || !record.schema_ref.endsWith('#execution_attempt')) return undefined;
  const body = AttemptBodySchema.safeParse(record.body);
  // ADR-0014: state that cannot be read is a storage error, never an empty or guessed one.
  if (!body.success) throw storageError('a stored attempt record does not parse', { record_id: record.record_id, issues: summariseIssues(body.error) });
  return { ...record, body: body.data as AttemptBody } as Attempt;
}

export class AttemptRepository {
  constructor(private readonly deps: AttemptRepositoryDeps) {}

  async get(attemptId: string): Promise<Attempt | undefined> {
    return attemptOf(await this.deps.store.getRecord(attemptId));
  }

  /** The newest stored revision (another path or node may have revised it). */
  async latest(attempt: Attempt): Promise<Attempt> {
    return (await this.get(attempt.record_id)) ?? attempt;
  }

  /** The caller's own attempt; another caller's is as absent as a missing one (A2A TaskNotFound). */
  async forCaller(callerId: string, attemptId: string): Promise<Attempt | undefined> {
    const a = await this.get(attemptId);
    return a && a.body.caller_id === callerId ? a : undefined;
  }

  /** The attempt a PermissionDecision (by its content digest) was admitted for. */
  async ofDecision(digest: string): Promise<Attempt | undefined> {
    const decision = await this.deps.store.getByDigest(digest);
    const attemptId = decision?.body.attempt_id;
    return typeof attemptId === 'string' ? this.get(attemptId) : undefined;
  }

  /** The next revision of `attempt` with `patch` applied (not stored). */
  seal(attempt: Attempt, patch: Partial<AttemptBody>): Attempt {
    return sealRecord<AttemptBody>(
      { type: 'execution_attempt', issuedBy: this.deps.gatewayActor, lifecycle: (patch.state ?? attempt.body.state) === 'closed' ? 'recorded' : 'active', recordId: attempt.record_id, prior: refOf(attempt), body: { ...attempt.body, ...patch } },
      this.deps,
    );
  }

  /**
   * Stores a revision computed by `patch` from the newest one; rebuilt on
   * the new head when another writer got there first.
   */
  async revise(attempt: Attempt, patch: AttemptPatch): Promise<Attempt> {
    return this.commit(attempt, patch, async (next) => void (next && (await this.deps.store.putRecord(next))));
  }

  /**
   * Like revise, but what is written is `write`'s (e.g. a settlement
   * transaction that stores the revision with it); `write` always runs,
   * with no revision when the patch leaves the attempt as it is, and runs
   * again with a rebuilt revision when the head moved meanwhile.
   */
  async commit(attempt: Attempt, patch: AttemptPatch, write: (next: Attempt | undefined, latest: Attempt) => Promise<void>): Promise<Attempt> {
    let latest = await this.latest(attempt);
    for (let i = 0; ; i++) {
      const p = patch(latest);
      const next = p && this.seal(latest, p);
      try {
        await write(next, latest);
        return next ?? latest;
      } catch (err) {
        if (i >= MAX_REBASES || !isBatonError(err, 'invalid_request') || err.details.conflict !== 'head_moved') throw err;
        latest = await this.latest(attempt);
      }
    }
  }
}
