/**
 * Configuration checks for the human gates (`baton config check`, `serve`):
 * a gate nobody may open, an approver that is not an operator, or a rule
 * naming nothing that exists is an error, not a surprise at the first call.
 */
import type { ApprovalsConfig } from './policy.ts';

export interface GateProblem {
  path: string;
  message: string;
  hint?: string;
}

export function approvalProblems(c: { approvals: ApprovalsConfig; retention?: { contentDays?: number | undefined }; operators: ReadonlyArray<{ id: string }>; delegatees: ReadonlyArray<{ id: string; requireApproval?: unknown }>; presets: ReadonlyArray<{ id: string }> }): GateProblem[] {
  const out: GateProblem[] = [];
  const operators = new Set(c.operators.map((o) => o.id));
  c.approvals.approvers.forEach((a, i) => {
    if (!operators.has(a.operator)) out.push({ path: `approvals.approvers[${i}].operator`, message: `operator "${a.operator}" is not defined`, hint: 'approvers act through an operator credential: add it under operators' });
  });
  const delegatees = new Set(c.delegatees.map((d) => d.id));
  const presets = new Set(c.presets.map((p) => p.id));
  c.approvals.rules.forEach((r, i) => {
    if (r.delegatee !== undefined && !delegatees.has(r.delegatee)) out.push({ path: `approvals.rules[${i}].delegatee`, message: `delegatee "${r.delegatee}" is not defined` });
    if (r.preset !== undefined && !presets.has(r.preset)) out.push({ path: `approvals.rules[${i}].preset`, message: `preset "${r.preset}" is not defined` });
  });
  const gated = c.approvals.rules.length > 0 || c.delegatees.some((d) => d.requireApproval !== undefined);
  if (gated && c.approvals.approvers.length === 0) out.push({ path: 'approvals.approvers', message: 'effects require approval but no approver is configured', hint: 'name at least one operator under approvals.approvers (every gated request would wait until it expires)' });
  return [...out, ...t4ReviewerProblems(c), ...(gated ? purgedBeforeDecided(c) : [])];
}

/**
 * A gated message is kept apart from its request and purgeable (content.ts):
 * a retention period shorter than a request's life would purge what an
 * approver is still to see and the approval to forward.
 */
function purgedBeforeDecided(c: { approvals: ApprovalsConfig; retention?: { contentDays?: number | undefined } }): GateProblem[] {
  const days = c.retention?.contentDays;
  if (days === undefined || days * 86_400 > c.approvals.pendingSeconds + c.approvals.approvalSeconds) return [];
  return [{ path: 'retention.contentDays', message: `${days} day(s) is shorter than an approval request's life (approvals.pendingSeconds + approvalSeconds)`, hint: 'keep content longer than requests wait for a decision and its admission' }];
}

/**
 * RW-003 §6 T4 "required review": the reviewer is neither the caller nor the
 * approver, so whichever reviewer approved, another must be left to review —
 * at least two distinct principals with `reviewer: true` (never implied).
 */
export function t4ReviewerProblems(c: { approvals: ApprovalsConfig; delegatees: ReadonlyArray<{ id: string; requireApproval?: unknown }> }): GateProblem[] {
  const t4 = c.approvals.rules.some((r) => r.tier === 'T4_consequential_execute') || c.delegatees.some((d) => d.requireApproval === 'T4_consequential_execute');
  const reviewers = new Set(c.approvals.approvers.filter((a) => a.reviewer === true).map((a) => a.principal ?? a.operator));
  if (!t4 || reviewers.size >= 2) return [];
  return [{ path: 'approvals.approvers', message: `a T4 gate needs at least two distinct reviewer principals (reviewer: true); ${reviewers.size} configured`, hint: 'mark approvers of two different principals reviewer: true (reviewer defaults to false)' }];
}
