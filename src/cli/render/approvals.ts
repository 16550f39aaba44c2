/** The approvals queue and one request's exact effect preview, for people (machines use --json). */
import type { ApprovalDetail, ApprovalOutcome, ApprovalSummary } from '../../operator/approvals.ts';
import { table } from './table.ts';

export function renderApprovals(list: readonly ApprovalSummary[]): string {
  if (list.length === 0) return 'no approval requests';
  return table(
    ['TASK', 'STATE', 'TIER', 'CALLER', 'DELEGATEE', 'REQUESTED', 'EXPIRES', 'MESSAGE'],
    list.map((a) => [a.task_id, a.state, a.tier.replace(/_.*/, ''), a.caller_id, a.delegatee_id, a.requested_at, a.expires_at, a.summary.slice(0, 60)]),
  );
}

/** The preview an approver decides on, every field the digest covers, then the decision if any. */
export function renderApproval(d: ApprovalDetail): string {
  const p = d.preview;
  const lines = [
    `task            ${d.task_id} (${d.state})`,
    `tier            ${d.tier}`,
    `caller          ${d.caller_id}`,
    `delegatee       ${p.delegatee.id}  card ${p.delegatee.card_object_id}  ${p.delegatee.card_digest}`,
    `operation       ${p.operation}`,
    `message digest  ${p.message_digest}`,
    `scope           ${JSON.stringify(p.scope)}`,
    `budget          ${JSON.stringify(p.budget)}`,
    `expires         ${p.expires_at}`,
    `preview digest  ${d.preview_digest}`,
    'message:',
    ...(p.rendering ?? '').split('\n').map((l) => `  ${l}`),
  ];
  if (d.decision) lines.push(`decision        ${d.decision.body.decision} by ${d.decision.body.approver.operator_id} (principal ${d.decision.body.approver.principal_id}) at ${d.decision.body.decided_at}, valid until ${d.decision.body.expires_at}`);
  if (d.refusal) lines.push(`refused         ${d.refusal.code} (${d.refusal.rule}): ${d.refusal.reason}`);
  return lines.join('\n');
}

export function renderOutcome(o: ApprovalOutcome): string {
  const head = `${o.request.task_id} ${o.decision.body.decision === 'approve' ? 'approved' : 'denied'} by ${o.decision.body.approver.operator_id} (${o.decision.record_id})`;
  if (!o.admission) return o.decision.body.decision === 'approve' ? `${head}; the serving gateway forwards it on its next sweep` : `${head}; nothing was forwarded`;
  if ('error' in o.admission) return `${head}; not admitted: ${o.admission.error.code}: ${o.admission.error.message}`;
  return `${head}; admitted as ${o.admission.attempt_id} (${o.admission.state})`;
}
