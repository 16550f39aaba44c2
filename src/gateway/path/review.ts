/**
 * RW-003 §6 T4 "post-effect read-back and required review": a verified
 * success of a T4 effect is recorded with its receipt but projected only
 * when an independent reviewer decides. The decision is an immutable
 * AuthorityDecision (kind `review`) naming the attempt revision and receipt
 * reviewed; the attempt's next revision carries the outcome and is announced
 * (push, breakers) like any verdict.
 */
import { invalidRequest } from '../../errors.ts';
import type { Acting, HumanGates } from '../../gates/approvals.ts';
import { refusalError } from '../../gates/approvals.ts';
import type { AuthorityDecisionBody } from '../../gates/records.ts';
import { reviewRefusal } from '../../gates/rules.ts';
import { refOf, sealRecord } from '../../records/envelope.ts';
import { utc } from '../../records/time.ts';
import type { Attempt } from '../attempts.ts';
import type { PathDeps } from './deps.ts';

export async function reviewEffect(deps: PathDeps, gates: HumanGates, taskId: string, decision: 'approve' | 'deny', note: string, by: Acting): Promise<Attempt> {
  const attempt = await deps.attempts.get(taskId);
  if (!attempt) throw invalidRequest('no such task', { task: taskId.slice(0, 128) });
  const approval = await gates.decision(attempt.body.approval?.decision_ref);
  const refusal = reviewRefusal({
    pending: attempt.body.review?.state === 'pending',
    reviewer: gates.approverOf(by.operator_id),
    callerPrincipal: gates.principalOf(attempt.body.caller_id),
    approverPrincipal: approval?.body.approver.principal_id,
  });
  if (refusal) throw refusalError(refusal, { task: taskId });
  const reviewer = gates.approverOf(by.operator_id)!;
  const now = deps.clock.now();
  const record = sealRecord<AuthorityDecisionBody>(
    {
      type: 'authority_decision',
      issuedBy: by.actor_ref,
      lifecycle: 'recorded',
      body: {
        kind: 'review',
        decision,
        task_id: taskId,
        subject_ref: refOf(attempt),
        preview_digest: approval!.body.preview_digest,
        approver: { actor_ref: by.actor_ref, operator_id: by.operator_id, principal_id: reviewer.principal, role: reviewer.role },
        decided_at: utc(now),
        expires_at: utc(now),
        note: note.slice(0, 2048),
        ...(attempt.body.receipt_ref ? { evidence_ref: attempt.body.receipt_ref } : {}),
      },
    },
    deps,
  );
  await deps.store.putRecord(record);
  const reviewed = await deps.attempts.revise(attempt, (latest) =>
    latest.body.review?.state !== 'pending'
      ? undefined
      : { outcome: decision === 'approve' ? 'succeeded' : 'failed', review: { ...{}, ...latest.body.review, state: decision === 'approve' ? 'accepted' : 'rejected', decision_ref: refOf(record) } },
  );
  if (reviewed.body.review?.decision_ref?.revision_id !== record.revision_id) throw invalidRequest('the review was decided by someone else first', { rule: 'no_review_pending' });
  await deps.events.emit({ type: 'closed', attempt: reviewed, reasons: [`reviewed: ${decision}`] });
  return reviewed;
}
