/**
 * Reconciliation (ADR-0014: only authoritative reconciliation settles an
 * uncertain effect; RW-003 §7.1, §9). Two fresh reads on the verification
 * route must agree with each other and show a terminal task. A turn whose
 * recorded claim and read-back disagreed is disputed: the agent's own reads
 * are no independent evidence, so reconciliation never re-labels it — least
 * of all as `succeeded` — and only an operator resolution with evidence
 * settles it. A read that agrees while a fence moved proves the effect
 * happened, not that it was authorised: it is settled as consumed and stays
 * `unknown`. A follow-up turn shares its task with other turns: a task that
 * does not show the turn's message is another turn's result, never evidence
 * about this one (issue #25 item 2).
 */
import { project, type Projection } from '../attempts/outcome.ts';
import { isTerminal } from '../attempts/task-view.ts';
import { invalidRequest } from '../errors.ts';
import { refOf, sealRecord } from '../records/envelope.ts';
import type { ActorRef } from '../records/revision-ref.ts';
import { utc } from '../records/time.ts';
import type { ReceiptBody } from '../attempts/record.ts';
import type { Attempt } from './attempts.ts';
import type { PathDeps } from './path/deps.ts';
import { findByContext } from './path/follow.ts';
import { rebuildTurn } from './path/rebuild-turn.ts';
import { heardIn, type Json } from './path/turn.ts';
import { fencesCurrent, readBack } from './path/read-back.ts';
import { commitVerdict, NOT_SHOWN } from './path/verify.ts';

interface Dispute {
  text: string;
  receipt: ReturnType<typeof refOf>;
  expected: ReceiptBody['expected'] | null;
  observed: ReceiptBody['observed'] | null;
}

export interface ReconcileResult {
  reservation_id: string;
  status: string;
  outcome?: string;
  reason: string;
}

export class Reconciler {
  constructor(private readonly deps: PathDeps) {}

  async reconcile(reservationId: string): Promise<ReconcileResult> {
    const r = await this.deps.store.ledger.reservation(reservationId);
    if (!r) throw invalidRequest('no such reservation', { reservation_id: reservationId });
    const result = (status: string, reason: string, outcome?: string): ReconcileResult => ({ reservation_id: reservationId, status, reason, ...(outcome ? { outcome } : {}) });
    if (r.status !== 'held' && r.status !== 'unknown') return result(r.status, 'already resolved');
    const attempt = await this.deps.attempts.ofDecision(r.decision_ref);
    // A turn still followed rebuilds from its work row: it says whether the delegatee evidently received a follow-up.
    const row = await this.deps.store.work.get(r.effect_id);
    const turn = attempt && (await rebuildTurn(this.deps, row ?? { attempt_id: attempt.record_id, reservation_id: reservationId }));
    if (!attempt || !turn) return result(r.status, 'no attempt record for this reservation; resolve it manually with evidence');
    const dispute = await this.disputeOf(attempt, r.effect_id);
    if (dispute) {
      await this.recordDispute(attempt, reservationId, dispute);
      return result(r.status, `disputed: ${dispute.text}; the agent's own reads cannot settle it — resolve it with operator evidence`);
    }
    turn.remoteTaskId ??= await findByContext(this.deps, turn).catch(() => undefined);
    if (!turn.remoteTaskId) return result(r.status, 'the delegatee never named a task; resolve it manually with evidence');
    const first = await readBack(this.deps.remote, turn.target.endpoint, turn.remoteTaskId, turn.target.headers);
    const second = await readBack(this.deps.remote, turn.target.endpoint, turn.remoteTaskId, turn.target.headers);
    if (first.kind !== 'task' || second.kind !== 'task') return result(r.status, `read-back unavailable: ${first.kind === 'task' ? (second as { reason: string }).reason : first.reason}`);
    if (!isTerminal(first.fingerprint.state)) return result(r.status, `remote task still open (${first.fingerprint.state})`);
    if (!heardIn(turn, first.raw as Json)) return result(r.status, `${NOT_SHOWN}; resolve it manually with evidence`);
    const judged = project({ kind: 'task', task: first.task, fingerprint: first.fingerprint }, second, turn.target.acceptance);
    if (judged.outcome !== 'succeeded' && judged.outcome !== 'failed' && judged.outcome !== 'cancelled') return result(r.status, `two reads do not agree: ${judged.reasons.join('; ')}`);
    const current = await fencesCurrent(this.deps.store, turn.fence_set, turn.scopes);
    const projection: Projection =
      !current && judged.outcome === 'succeeded'
        ? { ...{}, ...judged, outcome: 'unknown', settlement: 'consume', reasons: [...judged.reasons, 'consumed: the effect happened, but a control head moved after admission, so it is no authorised success'] }
        : judged;
    const closed = await commitVerdict(this.deps, turn, { observation: { kind: 'task', task: first.task, fingerprint: first.fingerprint }, back: second, projection, fencesCurrent: current });
    const after = await this.deps.store.ledger.reservation(reservationId);
    return result(after?.status ?? r.status, `two agreeing reads projected ${projection.outcome}`, closed.body.outcome);
  }

  /** Why this turn's recorded claim and its read-back disagreed, if they did (its receipt says so). */
  private async disputeOf(attempt: Attempt, effectId: string): Promise<Dispute | undefined> {
    if (!attempt.body.receipt_ref || attempt.body.effect_id !== effectId) return undefined;
    const receipt = await this.deps.store.getRecord(attempt.body.receipt_ref.object_id, attempt.body.receipt_ref.revision_id);
    const body = receipt?.body as Partial<ReceiptBody> | undefined;
    if (!body || (body.readback !== 'disagreed' && body.outcome !== 'partially_applied')) return undefined;
    const expected = body.expected ? `${body.expected.state} ${body.expected.artifacts_digest.slice(0, 19)}` : 'nothing';
    const observed = body.observed ? `${body.observed.state} ${body.observed.artifacts_digest.slice(0, 19)}` : 'nothing';
    return { text: `claimed ${expected}, read back ${observed}`, receipt: attempt.body.receipt_ref, expected: body.expected ?? null, observed: body.observed ?? null };
  }

  /**
   * RW-003 §7.1/§9: the dispute is evidence in its own right — recorded
   * once per reservation (expected vs observed, and the receipt it rests
   * on), however often reconciliation is run over it.
   */
  private async recordDispute(attempt: Attempt, reservationId: string, d: Dispute): Promise<void> {
    const recordId = `rcn_${reservationId.replace(/^res_/, '')}`;
    if (await this.deps.store.getRecord(recordId)) return;
    const record = sealRecord(
      {
        type: 'verification_receipt',
        issuedBy: this.deps.gatewayActor,
        lifecycle: 'recorded',
        body: { profile: 'a2a-reconciliation/1', reservation_id: reservationId, attempt_id: attempt.body.attempt_id, disputed: true, receipt_ref: d.receipt, expected: d.expected, observed: d.observed, reasons: [d.text], no_project_mutation: true },
      },
      { ids: { next: (p) => (p === 'rev' ? this.deps.ids.next('rev') : recordId) }, clock: this.deps.clock },
    );
    await this.deps.store.putRecord(record);
  }

  /**
   * An operator's resolution of an effect Baton cannot verify itself, with
   * their evidence recorded as an immutable record; the task then shows it.
   * Never automatic.
   */
  async resolveManually(reservationId: string, as: 'not_dispatched' | 'consumed', note: string, operator: ActorRef): Promise<string> {
    const r = await this.deps.store.ledger.reservation(reservationId);
    if (!r) throw invalidRequest('no such reservation', { reservation_id: reservationId });
    const record = sealRecord(
      { type: 'verification_receipt', issuedBy: operator, lifecycle: 'recorded', body: { profile: 'operator-reconciliation/1', reservation_id: reservationId, resolution: as, note: note.slice(0, 2048), no_project_mutation: true } },
      this.deps,
    );
    await this.deps.store.putRecord(record);
    const at = utc(this.deps.clock.now());
    const outcome = as === 'not_dispatched' ? ({ kind: 'not_dispatched' } as const) : ({ kind: 'measured', actual: new Map(Object.entries(r.amounts).map(([k, v]) => [k, BigInt(v)])) } as const);
    const settled = await this.deps.store.ledger.settle({ reservation_id: reservationId, outcome, evidence: refOf(record), at, ends_follow: r.effect_id });
    const attempt = await this.deps.attempts.ofDecision(r.decision_ref);
    if (attempt) await this.closeResolved(attempt, r.effect_id, as, refOf(record));
    return settled.status;
  }

  /** The attempt shows the operator's resolution of its last turn (not of an earlier one). */
  private async closeResolved(attempt: Attempt, effectId: string, as: 'not_dispatched' | 'consumed', receipt: ReturnType<typeof refOf>): Promise<void> {
    await this.deps.attempts.revise(attempt, (l) =>
      l.body.effect_id !== effectId && l.body.state === 'closed' ? undefined : { state: 'closed', resolution: { as, receipt_ref: receipt }, ...(as === 'not_dispatched' ? { outcome: 'failed' as const } : {}) },
    );
  }
}
