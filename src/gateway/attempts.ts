/**
 * The attempt repository: ExecutionAttempt records (RW-003 §7) read back
 * through their zod schema (never cast), and revised on top of whatever the
 * newest revision is. Several paths revise one attempt (a verdict, a stop, a
 * follow-up turn, another node): a revision that loses the race to another
 * is rebuilt on the new head, so a conflict after an effect is never a
 * refusal reported to the caller.
 */
import { isConflict, storageError } from '../errors.ts';
import { freezeCanonical, isCanonicalFrozen } from '../records/canonical.ts';
import { refOf, sealRecord, summariseIssues, type SealedRecord } from '../records/envelope.ts';
import type { IdSource } from '../records/ids.ts';
import type { ActorRef, RevisionRef } from '../records/revision-ref.ts';
import type { Clock } from '../records/time.ts';
import type { Envelope } from '../records/envelope.ts';
import type { Store } from '../store/port.ts';
import { recordAt } from '../store/record-at.ts';
import { AttemptBodySchema, type AttemptBody, type StoredTaskView } from '../attempts/record.ts';
import { detachedOf, ride } from '../records/detached.ts';
import type { JsonValue } from '../records/strict-json.ts';

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
  // A deep-frozen record (as the store hands out, src/records/decode.ts) cannot change, so it is parsed once (issue #15).
  const frozen = isCanonicalFrozen(record);
  const known = frozen ? parsedAttempts.get(record) : undefined;
  if (known) return known;
  const body = AttemptBodySchema.safeParse(record.body);
  // ADR-0014: state that cannot be read is a storage error, never an empty or guessed one.
  if (!body.success) throw storageError('a stored attempt record does not parse', { record_id: record.record_id, issues: summariseIssues(body.error) });
  const attempt = { ...{}, ...record, body: body.data as AttemptBody } as Attempt;
  if (frozen) parsedAttempts.set(record, freezeCanonical(attempt));
  return attempt;
}

/** Attempts parsed from deep-frozen records, each frozen in turn so sharing it leaks no change between readers. */
const parsedAttempts = new WeakMap<object, Attempt>();

/** The views of revisions sealed by this process, for {@link shown} (the stored form names them by digest). */
const shownViews = new WeakMap<object, StoredTaskView>();

/** A sealed revision as callers see it: with the task view it was sealed with. */
export function shown(a: Attempt): Attempt {
  const view = shownViews.get(a);
  return view ? { ...{}, ...a, body: { ...{}, ...a.body, view } } : a;
}

/** See {@link AttemptRepository.remoteTaskId}. */
export async function remoteTaskIdOf(store: Pick<Store, 'work'>, a: Pick<Attempt, 'record_id' | 'body'>): Promise<string | undefined> {
  if (a.body.remote.task_id !== undefined) return a.body.remote.task_id;
  for (const row of await store.work.ofAttempt(a.record_id)) if (row.remote_task_id) return row.remote_task_id;
  return undefined;
}

export class AttemptRepository {
  /** The tail of each turn's verdicts in this process, by effect id ({@link oneAtATime}). */
  private readonly verdicts = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: AttemptRepositoryDeps) {}

  /**
   * Runs the verdicts of one turn in this process one after another: a
   * stream, a cancellation and a poll can all see the same terminal state,
   * and the second must find the first's verdict instead of recording
   * another. (Across processes the ledger's resolve-once rule decides.)
   */
  oneAtATime<T>(effectId: string, fn: () => Promise<T>): Promise<T> {
    const next = (this.verdicts.get(effectId) ?? Promise.resolve()).then(fn, fn);
    const tail = next.catch(() => undefined);
    this.verdicts.set(effectId, tail);
    void tail.then(() => this.verdicts.get(effectId) === tail && this.verdicts.delete(effectId));
    return next;
  }

  async get(attemptId: string): Promise<Attempt | undefined> {
    const a = attemptOf(await this.deps.store.getRecord(attemptId));
    return a && this.withContent(a);
  }

  /**
   * The attempt with its task view attached from the content store (it is
   * stored apart, by digest); once retention purged it, `content_purged`
   * says so and the view is absent — never guessed, never an error.
   */
  async withContent(a: Attempt): Promise<Attempt> {
    const digest = a.body.view_digest;
    if (a.body.view || !digest) return a;
    const row = await this.deps.store.content.get(digest);
    if (row?.document) return { ...{}, ...a, body: { ...{}, ...a.body, view: JSON.parse(row.document) as StoredTaskView } };
    if (row?.purged_at) return { ...{}, ...a, body: { ...{}, ...a.body, content_purged: true } };
    throw storageError('the task view an attempt names is missing from the content store', { record_id: a.record_id, digest });
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

  /**
   * The delegatee's task id: on the attempt once a verdict (or an interrupted
   * turn) recorded it, else on a followed turn's work row (noteRemoteTask).
   */
  remoteTaskId(a: Attempt): Promise<string | undefined> {
    return remoteTaskIdOf(this.deps.store, a);
  }

  /** The attempt a PermissionDecision (by its exact ref) was admitted for. */
  async ofDecision(ref: RevisionRef): Promise<Attempt | undefined> {
    const decision = await recordAt(this.deps.store, ref);
    const attemptId = decision?.body.attempt_id;
    return typeof attemptId === 'string' ? this.get(attemptId) : undefined;
  }

  /**
   * The next revision of `attempt` with `patch` applied (not stored), as it is
   * stored: its task view replaced by view_digest, the view riding beside it
   * to the content table (records/detached.ts). Use {@link shown} for the
   * in-memory attempt with its view.
   */
  seal(attempt: Attempt, patch: Partial<AttemptBody>): Attempt {
    const { view, content_purged: _purged, ...body } = { ...{}, ...attempt.body, ...patch };
    const content = view ? detachedOf('task_view', view as unknown as JsonValue) : undefined;
    const record = sealRecord<AttemptBody>(
      {
        type: 'execution_attempt',
        issuedBy: this.deps.gatewayActor,
        lifecycle: (patch.state ?? attempt.body.state) === 'closed' ? 'recorded' : 'active',
        recordId: attempt.record_id,
        prior: refOf(attempt),
        body: content ? { ...{}, ...body, view_digest: content.digest } : body,
      },
      this.deps,
    );
    if (content && view) shownViews.set(record, view);
    return ride(record, content ? [content] : []);
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
  async commit(attempt: Attempt, patch: AttemptPatch, write: (next: Attempt | undefined, latest: Attempt) => Promise<void>, known?: Attempt): Promise<Attempt> {
    // `known`: the newest revision the caller has just read (a rebase corrects it if it moved since).
    let latest = known ?? (await this.latest(attempt));
    for (let i = 0; ; i++) {
      const p = patch(latest);
      const next = p && this.seal(latest, p);
      try {
        await write(next, latest);
        return next ? shown(next) : latest;
      } catch (err) {
        if (i >= MAX_REBASES || !isConflict(err, 'head_moved')) throw err;
        latest = await this.latest(attempt);
      }
    }
  }
}
