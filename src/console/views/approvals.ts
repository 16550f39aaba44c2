/**
 * The approvals queue and one request's exact effect preview (RW-003 §6):
 * the approver decides on what is shown here, and the form carries the
 * digest of exactly that preview, so an approval binds what was seen.
 */
import type { ApprovalDetail, ApprovalSummary } from '../../operator/approvals.ts';
import { html, type Html } from '../html.ts';
import { ago, csrfField, type PageContext } from './layout.ts';

const STATES = ['pending', 'approved', 'admitted', 'denied', 'refused', 'expired', 'withdrawn'] as const;

export function approvalsView(state: string | undefined, rows: readonly ApprovalSummary[], now: number): Html {
  return html`<nav aria-label="Filter requests"><ul class="legend">${[undefined, ...STATES].map((s) => html`<li><a href="/console/approvals${s ? `?state=${s}` : ''}"${s === state ? html` aria-current="page"` : ''}>${s ?? 'all'}</a></li>`)}</ul></nav>
${
  rows.length === 0
    ? html`<p>No ${state ?? ''} approval requests.</p>`
    : html`<table><thead><tr><th scope="col">Task</th><th scope="col">State</th><th scope="col">Tier</th><th scope="col">Caller</th><th scope="col">Delegatee</th><th scope="col">Requested</th><th scope="col">Expires</th><th scope="col">What</th></tr></thead><tbody>
${rows.map(
  (r) => html`<tr data-approval="${r.task_id}"><td class="id"><a href="/console/approvals/${r.task_id}">${r.task_id}</a></td><td>${r.state === 'pending' ? html`<strong>pending</strong>` : r.state}</td><td>${r.tier}</td><td>${r.caller_id}</td><td>${r.delegatee_id}</td><td>${ago(r.requested_at, now)} ago</td><td>${r.expires_at}</td><td>${r.summary}</td></tr>`,
)}</tbody></table>`
}`;
}

const json = (v: unknown) => JSON.stringify(v, null, 2);

export function approvalView(ctx: PageContext, d: ApprovalDetail): Html {
  const p = d.preview;
  const taskState = (d.task as { status?: { state?: string } } | undefined)?.status?.state;
  const decision = d.decision?.body;
  return html`<p>Task <code>${d.task_id}</code>: <strong>${d.state}</strong>${taskState ? html` <span class="badge">caller sees ${taskState}</span>` : ''}</p>
${d.refusal ? html`<p class="error" role="alert">Refused at admission: ${d.refusal.code} (${d.refusal.rule}): ${d.refusal.reason}</p>` : ''}
${decision ? html`<p class="flash">${decision.kind} ${decision.decision} by <code>${decision.approver.operator_id}</code> (principal ${decision.approver.principal_id}) at ${decision.decided_at}${decision.note ? `: ${decision.note}` : ''}</p>` : ''}
<h2>Effect preview</h2>
<table><tbody>
<tr><th scope="row">Tier</th><td>${p.tier}</td></tr>
<tr><th scope="row">Operation</th><td>${p.operation}</td></tr>
<tr><th scope="row">Caller</th><td>${p.caller_id}</td></tr>
<tr><th scope="row">Delegatee</th><td>${p.delegatee.id} <span class="hint">card</span> <code>${p.delegatee.card_object_id}</code> <span class="hint">digest</span> <code>${p.delegatee.card_digest}</code></td></tr>
<tr><th scope="row">Message digest</th><td><code>${p.message_digest}</code> <span class="hint">(the exact bytes forwarded)</span></td></tr>
<tr><th scope="row">Expires</th><td>${p.expires_at}</td></tr>
<tr><th scope="row">Preview digest</th><td><code>${d.preview_digest}</code></td></tr>
</tbody></table>
<h2>Message</h2><pre class="preview" tabindex="0" aria-label="The message as it will be forwarded">${p.rendering}</pre>
<details><summary>Scope and budget</summary><pre class="preview">${json({ scope: p.scope, budget: p.budget })}</pre></details>
${
  d.state === 'pending'
    ? html`<form method="post" action="/console/approvals/${d.task_id}/approve" class="stack" aria-labelledby="approve-h"><h2 id="approve-h">Approve this exact effect</h2>
${csrfField(ctx)}<input type="hidden" name="preview_digest" value="${d.preview_digest}">
<label for="approve-note">Note</label><input id="approve-note" name="note" maxlength="2048">
<button type="submit">Approve and forward</button></form>
<form method="post" action="/console/approvals/${d.task_id}/deny" class="stack" aria-labelledby="deny-h"><h2 id="deny-h">Deny</h2>
${csrfField(ctx)}<input type="hidden" name="preview_digest" value="${d.preview_digest}">
<label for="deny-note">Reason</label><input id="deny-note" name="note" maxlength="2048" required>
<button type="submit" class="danger">Deny</button></form>`
    : ''
}
${
  d.tier === 'T4_consequential_execute' && d.state === 'admitted'
    ? html`<form method="post" action="/console/approvals/${d.task_id}/review" class="stack" aria-labelledby="review-h"><h2 id="review-h">Post-effect review (T4)</h2>
<p class="hint">The effect was read back; it is projected succeeded only once a reviewer accepts it.</p>
${csrfField(ctx)}
<label for="review-decision">Decision</label><select id="review-decision" name="decision"><option value="approve">accept</option><option value="deny">reject</option></select>
<label for="review-note">Note</label><input id="review-note" name="note" maxlength="2048">
<button type="submit">Record review</button></form>`
    : ''
}`;
}
