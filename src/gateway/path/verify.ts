/**
 * Step 7: the verdict of one turn (DESIGN §6 "Read-back before outcome",
 * RW-003 §9 post-effect verification, §10.3). A terminal remote state is an
 * observation: the task is re-read on the separate verification route, the
 * fences are re-checked (RW-003 §1.2: a moved head makes success unknown),
 * the outcome is projected, and the receipt, the attempt's revision, the
 * settlement of this turn's own reservation, the terminal observation and the
 * end of its follow-up commit in one transaction.
 *
 * What it reads besides the store's rows (the read-back, the fences, the
 * view it keeps) is ./read-back.ts; every verdict variant and its spans stay
 * here, in the step that owns the resolve-once rule.
 */
import { project, withFences, type Observation, type Projection, type ReadBack } from '../../attempts/outcome.ts';
import { fingerprint, TaskView, type TaskFingerprint } from '../../attempts/task-view.ts';
import type { ControlEventInput } from '../../control/event.ts';
import type { SettlementOutcome } from '../../ledger/rules.ts';
import type { Reservation } from '../../ledger/types.ts';
import { isBatonError, isConflict } from '../../errors.ts';
import { digestOf } from '../../records/digest.ts';
import { refOf, sealRecord, type Envelope, type SealedRecord } from '../../records/envelope.ts';
import type { JsonValue } from '../../records/strict-json.ts';
import { utc } from '../../records/time.ts';
import type { AttemptBody, ReceiptBody } from '../../attempts/record.ts';
import type { Attempt, AttemptPatch } from '../attempts.ts';
import type { ConsumptionEvidence } from '../../federation/consumption.ts';
import type { PathDeps } from './deps.ts';
import { heardIn, remoteWithTask, type Json, type Turn } from './turn.ts';
import { inSpan, turnIds } from '../../telemetry/tracing.ts';
import { consumptionOf, fencesCurrent, remoteFenceCurrent, storedView, timedReadBack } from './read-back.ts';

type Deps = Pick<PathDeps, 'store' | 'attempts' | 'remote' | 'clock' | 'ids' | 'gatewayActor' | 'events' | 'federation'>;

/** What every revision written for a turn records about it. */
const turnFields = (turn: Turn, latest: Attempt): Partial<AttemptBody> => ({
  effect_id: turn.effect_id,
  reservation_id: turn.reservation_id,
  fence_set: turn.fence_set,
  idempotency_key: turn.effect_id,
  remote: remoteWithTask(turn, latest.body),
});

/** A terminal (or unverifiable) observation: read back, project, record and settle. */
export function verdict(deps: Deps, turn: Turn, observation: Observation, view?: Json): Promise<Attempt> {
  return deps.attempts.oneAtATime(turn.effect_id, () => judge(deps, turn, observation, view));
}

/**
 * A follow-up shares its task with other turns: a terminal state whose
 * history lacks the turn's message is another turn's result, and a terminal
 * task takes no more messages — so the turn is lost: `unknown`, its
 * reservation held for an operator, never `succeeded` (issue #25 item 2).
 */
export const NOT_SHOWN = "the delegatee's task does not show this turn's message";

async function judge(deps: Deps, turn: Turn, observation: Observation, view?: Json): Promise<Attempt> {
  // A turn this process admitted is judged on what its admission left, nothing read first (issue #24: no
  // pre-reads): its reservation held, its fences current, its own revision the base. The commit checks both
  // (held_only, fences): if a fence moved, the outcome is projected again with the fences stale; if another
  // writer resolved the reservation meanwhile, nothing is written and the turn is judged on the store.
  // Another turn's result (a follow-up's shared task) is judged on the store, as it always was.
  if (turn.reserved && (observation.kind !== 'task' || heardIn(turn, view ?? (observation.task as Json)))) {
    const assessed = await assess(deps, turn, observation, turn.reserved.amounts, 'in_commit');
    try {
      return await commitAssessed(deps, turn, assessed, view, admitted(turn, turn.reserved));
    } catch (err) {
      if (!isConflict(err, 'not_held')) throw err;
      return judgeStored(deps, turn, observation, view, assessed);
    }
  }
  return judgeStored(deps, turn, observation, view);
}

/** A turn judged on its reservation, attempt and fences as the store holds them (a turn rebuilt from the store, or one whose reservation another writer resolved). */
async function judgeStored(deps: Deps, turn: Turn, observation: Observation, view: Json | undefined, assessed?: Assessment): Promise<Attempt> {
  const r = await deps.store.ledger.reservation(turn.reservation_id);
  // While the turn's reservation is held no verdict came first: the turn's own revision is the base, not read again;
  // should another writer have revised the attempt meanwhile, the commit is rebuilt on the new head (attempts.commit).
  // Otherwise the attempt is read to see whether the verdict is already given.
  const latest = r?.status === 'held' ? turn.attempt : await deps.attempts.latest(turn.attempt);
  // Another path or node already gave this turn its verdict: nothing to add. An `unknown` one stands too — only
  // reconciliation settles an uncertain effect (ADR-0014), never a later poll of a node that lost the lease.
  if (r && r.status !== 'held' && (latest.body.state === 'closed' || r.status === 'unknown')) return latest;
  if (observation.kind === 'task' && !heardIn(turn, view ?? (observation.task as Json))) return judgeForeign(deps, turn);
  const a = assessed ? await fencesRead(deps, turn, assessed) : await assess(deps, turn, observation, r?.amounts, 'read');
  return commitAssessed(deps, turn, a, view, { latest, reservation: r });
}

/** A judgement before its commit; `fencesInCommit`: the local fences were not read but are checked by the commit. */
type Assessment = Pick<Judgement, 'observation' | 'back' | 'projection' | 'fencesCurrent' | 'consumption'> & { fencesInCommit: boolean };

/**
 * The read-back and the projected outcome of a turn whose reservation holds
 * `reserved` (if it is known), with its fences read first or left to the
 * commit ('in_commit': assumed current here, checked there).
 */
async function assess(deps: Deps, turn: Turn, observation: Observation, reserved: Record<string, string> | undefined, fences: 'read' | 'in_commit'): Promise<Assessment> {
  const back = observation.kind === 'task' ? await timedReadBack(deps, turn, observation.task.id) : undefined;
  const current = fences === 'in_commit' ? await remoteFenceCurrent(deps, turn) : (await fencesCurrent(deps.store, turn.fence_set, turn.scopes)) && (await remoteFenceCurrent(deps, turn));
  const projection = withFences(project(observation, back, turn.target.acceptance), current);
  const consumption = projection.settlement === 'consume' && reserved && back?.kind === 'task' ? await consumptionOf(deps, turn, back, reserved) : undefined;
  return { observation, back, projection, fencesCurrent: current, fencesInCommit: fences === 'in_commit' && current, ...(consumption ? { consumption } : {}) };
}

/** The assessment with its local fences read now, where it had left them to the commit. */
async function fencesRead(deps: Deps, turn: Turn, a: Assessment): Promise<Assessment> {
  if (!a.fencesInCommit) return a;
  return (await fencesCurrent(deps.store, turn.fence_set, turn.scopes)) ? { ...{}, ...a, fencesInCommit: false } : stale(turn, a);
}

/** The assessment projected again with the fences stale (RW-003 §1.2: a racing control change makes success unknown). */
function stale(turn: Turn, a: Assessment): Assessment {
  const { consumption: _c, ...rest } = a;
  return { ...{}, ...rest, fencesCurrent: false, fencesInCommit: false, projection: withFences(project(a.observation, a.back, turn.target.acceptance), false) };
}

/** Commits an assessment; one whose fences the commit found moved is projected again and committed without them. */
async function commitAssessed(deps: Deps, turn: Turn, a: Assessment, view: Json | undefined, read: Known): Promise<Attempt> {
  const { fencesInCommit, ...judged } = a;
  try {
    return await commitVerdict(deps, turn, { ...{}, ...judged, ...(view ? { view } : {}), read: { ...{}, ...read, ...(fencesInCommit ? { fencesInCommit } : {}) } });
  } catch (err) {
    if (!fencesInCommit || !isConflict(err, 'fences_moved')) throw err;
    return commitAssessed(deps, turn, stale(turn, a), view, read);
  }
}

/**
 * A follow-up turn that found only another turn's result: its own reservation
 * is held `unknown` with a receipt saying why, and the task is left to the
 * turn whose result it is — this verdict neither closes the attempt nor
 * announces it (as a refused follow-up leaves it, `release` below).
 */
async function judgeForeign(deps: Deps, turn: Turn): Promise<Attempt> {
  const current = (await fencesCurrent(deps.store, turn.fence_set, turn.scopes)) && (await remoteFenceCurrent(deps, turn));
  const observation: Observation = { kind: 'lost', reason: NOT_SHOWN };
  const projection = { ...{}, ...withFences(project(observation, undefined, turn.target.acceptance), current), outcome: 'unknown' as const };
  const receipt = receiptOf(deps, turn, observation, undefined, projection, current);
  return settleTurn(deps, turn, projection.settlement, refOf(receipt), [receipt], [terminalEvent(deps, turn, receipt, projection)], undefined, () => undefined);
}

export interface Judgement {
  observation: Observation;
  back: (ReadBack & { raw?: JsonValue }) | undefined;
  projection: Projection;
  fencesCurrent: boolean;
  view?: Json;
  /** What a downstream Baton's consumption receipt settles (separate stores). */
  consumption?: ConsumptionEvidence;
  /** The attempt and reservation as the judgement just read them (not read again to commit), and what the commit checks instead. */
  read?: Known;
  /** The receipt's verification profile and read-back verdict (default: an A2A task read back with GetTask, compared here). */
  profile?: ReceiptBody['profile'];
  readback?: ReceiptBody['readback'];
  /** The view the closing revision keeps (default: the read-back's evidence, else the observed view). */
  shown?: Json;
  /** Fields the closing revision adds (an MCP call recorded as observed: `verification`). */
  closing?: Partial<AttemptBody>;
}

/**
 * The attempt and reservation a judgement starts from, and what its commit
 * checks because it was taken as given, not read: `heldOnly`, the
 * reservation (taken from the turn's admission) is settled only while still
 * held (SettlementRequest.held_only); `fencesInCommit`, the fences the
 * projection assumed current (SettlementRequest.fences).
 */
type Known = { latest: Attempt; reservation: Pick<Reservation, 'status' | 'amounts'> | undefined; heldOnly?: boolean; fencesInCommit?: boolean };

/** Records a judged turn: receipt, closing revision, settlement, terminal observation; then announces it. */
export function commitVerdict(deps: Deps, turn: Turn, j: Judgement): Promise<Attempt> {
  return inSpan(
    'baton.verdict',
    turnIds(turn),
    async (span) => {
      const closed = await commitJudged(deps, turn, j);
      span.setAttributes({ 'baton.outcome': closed.body.outcome ?? 'none', 'baton.fences_current': j.fencesCurrent });
      return closed;
    },
    // Refused only where the commit checked what the judgement took as given (Known): judged again, not failed.
    (err) => (isConflict(err, 'not_held') ? 'not_held' : isConflict(err, 'fences_moved') ? 'fences_moved' : undefined),
  );
}

async function commitJudged(deps: Deps, turn: Turn, j: Judgement): Promise<Attempt> {
  const projection = { ...{}, ...j.projection, outcome: j.projection.outcome ?? 'unknown' };
  const receipt = receiptOf(deps, turn, j.observation, j.back, projection, j.fencesCurrent, { consumption: j.consumption, profile: j.profile, readback: j.readback });
  const evidence = j.back?.kind === 'task' ? j.back.raw : undefined;
  const shown = j.shown ?? evidence ?? j.view;
  // RW-003 §6 T4: a verified success still waits for the reviewer's decision before `succeeded` is projected.
  const review = turn.attempt.body.approval?.tier === 'T4_consequential_execute' && projection.outcome === 'succeeded';
  const measured = j.consumption && projection.settlement === 'consume' ? j.consumption.settled : undefined;
  const closed = await settleTurn(deps, turn, measured ? { measured } : projection.settlement, refOf(receipt), [receipt], [terminalEvent(deps, turn, receipt, projection)], j.read, (latest) =>
    latest.body.state === 'closed'
      ? undefined
      : {
          ...{}, ...turnFields(turn, latest),
          state: 'closed',
          ...(review ? { review: { state: 'pending' as const, receipt_outcome: projection.outcome } } : { outcome: projection.outcome }),
          receipt_ref: refOf(receipt),
          ...(j.observation.kind === 'task' ? { observed: j.observation.fingerprint } : {}),
          ...(shown && typeof shown === 'object' && !Array.isArray(shown) ? { view: storedView(shown as Json) } : {}),
          ...j.closing,
        },
  );
  if (j.consumption?.status === 'capped') {
    await deps.events.emit({ type: 'escalate', kind: 'consumption_disputed', subject: { attempt_id: turn.attempt.body.attempt_id, delegation_id: turn.attempt.body.delegation_ref.object_id }, reasons: [j.consumption.reason ?? 'consumption receipt above the reservation'] });
  }
  // Announced (push, breakers) once the reviewer decided (src/gateway/path/review.ts).
  if (!review) await deps.events.emit({ type: 'closed', attempt: closed, ...(evidence !== undefined ? { evidence } : {}), reasons: projection.reasons, readback: receipt.body.readback });
  return closed;
}

/**
 * The remote answered this turn with an interrupted state (INPUT_REQUIRED,
 * AUTH_REQUIRED): the turn's effect happened, so its own reservation is
 * consumed now, with the revision recording that answer as evidence — not
 * left held until a follow-up that may never be admitted.
 */
export function verdictInterrupted(deps: Deps, turn: Turn, view: Json): Promise<Attempt> {
  const task = TaskView.parse(view);
  return deps.attempts.oneAtATime(turn.effect_id, () => settleOwn(deps, turn, 'consume', (latest) => ({
    ...{}, ...turnFields(turn, latest),
    ...(latest.body.state === 'closed' ? {} : { state: 'open' as const }),
    observed: fingerprint(task),
    view: storedView(view),
  })));
}

/**
 * The delegatee did not execute this turn (it never left Baton, or the
 * remote refused it): the reservation is released with the reason recorded.
 * A first turn closes the attempt as failed; a refused follow-up leaves the
 * task as the previous turn left it.
 */
export function verdictReleased(deps: Deps, turn: Turn, reason: string): Promise<Attempt> {
  return inSpan('baton.verdict', { ...{}, ...turnIds(turn), 'baton.settlement': 'release' }, () => release(deps, turn, reason));
}

async function release(deps: Deps, turn: Turn, reason: string): Promise<Attempt> {
  const at = utc(deps.clock.now());
  const first = turn.attempt.body.state === 'dispatching' && turn.attempt.body.effect_id === turn.effect_id;
  const closed = await settleOwn(deps, turn, 'release', (latest) => ({
    ...{}, ...(first && latest.body.state !== 'closed' ? { state: 'closed' as const, outcome: 'failed' as const } : {}),
    refused: { reason: reason.slice(0, 512), at },
  }));
  if (first) await deps.events.emit({ type: 'closed', attempt: closed, reasons: [reason] });
  return closed;
}

/** What a turn admitted here starts from: its reservation as the admission left it, settled only while still held. */
const admitted = (turn: Turn, reserved: NonNullable<Turn['reserved']>): Known => ({ latest: turn.attempt, reservation: { ...{}, ...reserved, status: 'held' }, heldOnly: true });

/**
 * A settlement without a receipt (interrupted, released): for a turn admitted here on what its admission left,
 * nothing read first (issue #24); if another writer resolved the reservation meanwhile, again on the store.
 */
async function settleOwn(deps: Deps, turn: Turn, settlement: 'release' | 'consume', patch: AttemptPatch): Promise<Attempt> {
  if (turn.reserved) {
    try {
      return await settleTurn(deps, turn, settlement, undefined, [], [], admitted(turn, turn.reserved), patch);
    } catch (err) {
      if (!isConflict(err, 'not_held')) throw err;
    }
  }
  return settleTurn(deps, turn, settlement, undefined, [], [], undefined, patch);
}

/**
 * One transaction for a turn's verdict: the settlement of the turn's own
 * reservation, the records (receipt, attempt revision), the observation and
 * the end of its follow-up. If another node settled first, resolve-once
 * holds and only the records are written. A revision that lost a race to
 * another writer is rebuilt on the new head (never reported as a refusal).
 */
async function settleTurn(
  deps: Deps,
  turn: Turn,
  settlement: 'release' | 'consume' | 'hold' | { measured: Record<string, string> },
  evidence: ReturnType<typeof refOf> | undefined,
  records: readonly Envelope[],
  events: readonly ControlEventInput[],
  known: Known | undefined,
  patch: AttemptPatch,
): Promise<Attempt> {
  let first = known;
  return deps.attempts.commit(turn.attempt, patch, async (next, latest) => {
    const all = [...records, ...(next ? [next] : [])];
    const at = utc(deps.clock.now());
    /** Another verdict (another node, an operator) resolved the reservation first: only what the attempt still lacks is written. */
    const resolvedElsewhere = async () => {
      if (next) {
        for (const rec of all) await deps.store.putRecord(rec);
        for (const ev of events) await deps.store.control.appendControl(ev);
      }
      await deps.store.work.done(turn.effect_id);
    };
    // What the judgement read serves the first try; a rebuilt revision reads again — unless the reservation was
    // taken from the admission: then every try settles it only while held, and the caller judges again if not.
    const heldOnly = known?.heldOnly === true;
    const r = heldOnly ? known!.reservation : first ? first.reservation : await deps.store.ledger.reservation(turn.reservation_id);
    first = undefined;
    if (!r || (r.status !== 'held' && r.status !== 'unknown')) return resolvedElsewhere();
    const outcome: SettlementOutcome =
      typeof settlement === 'object'
        ? { kind: 'measured', actual: new Map(Object.entries(settlement.measured).map(([k, v]) => [k, BigInt(v)])) }
        : settlement === 'release'
        ? { kind: 'not_dispatched' }
        : settlement === 'consume'
          ? { kind: 'measured', actual: new Map(Object.entries(r.amounts).map(([k, v]) => [k, BigInt(v)])) }
          : { kind: 'unknown' };
    try {
      const checks = { ...{}, ...(heldOnly ? { held_only: true } : {}), ...(known?.fencesInCommit ? { fences: { fence_set: turn.fence_set, scopes: turn.scopes } } : {}) };
      await deps.store.ledger.settle({ reservation_id: turn.reservation_id, outcome, evidence: evidence ?? refOf(next ?? latest), at, records: all, events: [...events], ends_follow: turn.effect_id, ...checks });
    } catch (err) {
      // Judged on what the admission left (not_held) or with fences it did not read (fences_moved): the caller judges again.
      if (heldOnly) throw err;
      // Resolve-once: a verdict that lost the race to another one is not an error after the effect.
      const now = await deps.store.ledger.reservation(turn.reservation_id);
      const revisionConflict = isConflict(err, 'head_moved'); // commit() rebuilds and retries
      const lostRace = isBatonError(err, 'invalid_request') && now !== undefined && now.status !== 'held' && now.status !== 'unknown';
      if (revisionConflict || !lostRace) throw err;
      await resolvedElsewhere();
    }
  }, known?.latest);
}

/**
 * Did the read-back show what was observed? Only this makes a receipt say
 * `agreed` — a success turned `unknown` because a fence moved still agreed
 * (it is not a dispute, and reconciliation may settle it as consumed).
 */
function sameTask(a: TaskFingerprint, b: TaskFingerprint): boolean {
  return a.task_id === b.task_id && a.state === b.state && a.status_digest === b.status_digest && a.artifacts_digest === b.artifacts_digest;
}

function receiptOf(
  deps: Deps,
  turn: Turn,
  observation: Observation,
  back: (ReadBack & { raw?: JsonValue }) | undefined,
  projection: Projection & { outcome: NonNullable<Projection['outcome']> },
  current: boolean,
  how: { consumption?: ConsumptionEvidence | undefined; profile?: ReceiptBody['profile'] | undefined; readback?: ReceiptBody['readback'] | undefined } = {},
): SealedRecord<ReceiptBody> {
  const { consumption } = how;
  return sealRecord<ReceiptBody>(
    {
      type: 'verification_receipt',
      issuedBy: deps.gatewayActor,
      lifecycle: 'recorded',
      body: {
        profile: how.profile ?? 'a2a-readback/1',
        attempt_id: turn.attempt.body.attempt_id,
        delegation_ref: turn.attempt.body.delegation_ref,
        effect_id: turn.effect_id,
        // The card observation the attempt ran on (signed or not, identity source): RW-003 §10.3.
        ...(turn.attempt.body.remote.card ? { card: turn.attempt.body.remote.card } : {}),
        ...(observation.kind === 'task' ? { expected: observation.fingerprint } : {}),
        ...(back?.kind === 'task' ? { observed: back.fingerprint } : {}),
        readback: how.readback ?? (back === undefined ? 'not_applicable' : back.kind === 'unavailable' ? 'unavailable' : observation.kind === 'task' && sameTask(observation.fingerprint, back.fingerprint) ? 'agreed' : 'disagreed'),
        acceptance: projection.acceptance,
        fences_current: current,
        verifier_ref: deps.gatewayActor,
        checked_at: utc(deps.clock.now()),
        evidence_digest: back?.kind === 'task' && back.raw !== undefined ? digestOf(back.raw) : null,
        outcome: projection.outcome,
        reasons: projection.reasons,
        no_project_mutation: true,
        ...(consumption ? { consumption } : {}),
        // A follow-up turn: which message was its own, and whether the delegatee evidently received it (reconciler.ts).
        ...(turn.followUp ? { follow_up: { message_id: turn.followUp.messageId, delivered: turn.followUp.delivered } } : {}),
      },
    },
    deps,
  );
}

function terminalEvent(deps: Deps, turn: Turn, receipt: SealedRecord<ReceiptBody>, projection: Projection & { outcome: NonNullable<Projection['outcome']> }): ControlEventInput {
  return {
    event_type: 'rw003.execution.terminal',
    control_scope_ref: { space_id: turn.attempt.body.space_id, scope_kind: 'attempt', scope_id: turn.attempt.body.attempt_id },
    actor_ref: deps.gatewayActor,
    produced_records: [refOf(receipt)],
    outcome: projection.outcome,
    idempotency_key: `terminal:${receipt.record_id}`,
    payload: { reasons: projection.reasons },
  };
}
