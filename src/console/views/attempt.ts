/**
 * One attempt, as the operator API's audit returns it (OperatorService.attemptAudit):
 * what was called — an A2A agent, or an MCP server's tool (RW-003 §10.2, issue #26) —
 * the outcome and how it was established (read back, or observed only), the receipt,
 * the reservation, revisions and audit-stream events. Read-only.
 */
import type { AttemptBody } from '../../attempts/record.ts';
import { html, type Html } from '../html.ts';

type Rec = { record_id?: string; body?: Record<string, unknown> };

/** The parts of the audit this page shows; the rest of the JSON is ignored (loose on purpose: a read, never a check). */
export interface AttemptAudit {
  attempt: { body: AttemptBody };
  revisions?: Array<{ revision_id: string; issued_at: string; state: string; outcome: string | null }>;
  reservation?: { status?: string } | null;
  records?: Rec[];
  events?: Array<{ position?: string | number | bigint; event_type?: string; recorded_at?: string }>;
}

/**
 * How the outcome was established (RW-003 §10.3: a tool result alone is transport evidence):
 * observed only for an MCP tool without a read route, else what the receipt's read-back found.
 */
function verification(b: AttemptBody, receipt: Rec | undefined): string {
  if (b.verification === 'observed') return 'observed only, never verified (no read route)';
  return typeof receipt?.body?.readback === 'string' ? `read back on a separate route: ${receipt.body.readback}` : 'no receipt yet';
}

const row = (label: string, value: Html | string) => html`<tr><th scope="row">${label}</th><td>${value}</td></tr>`;

export function attemptView(audit: AttemptAudit): Html {
  const b = audit.attempt.body;
  const r = b.remote;
  const receipt = (audit.records ?? []).find((x) => typeof x.body?.profile === 'string');
  return html`<p>Attempt <code>${b.attempt_id}</code>: <strong class="state-${b.state}">${b.state}</strong>, outcome <strong class="outcome-${b.outcome ?? 'none'}">${b.outcome ?? '—'}</strong>${b.cancel_cause ? html` <span class="badge">${b.cancel_cause.cause}</span>` : ''}</p>
<table><tbody>
${row('Verification', verification(b, receipt))}
${row('Adapter', html`${r.protocol} <span class="hint">binding</span> ${r.binding} <span class="hint">version</span> ${r.protocol_version}`)}
${row('Delegatee', html`${b.delegatee_id} <span class="hint">card</span> <code>${r.card_ref.object_id}</code>`)}
${b.tool ? row('Tool', html`<code>${b.tool.server}/${b.tool.name}</code> <span class="hint">arguments</span> <code>${b.tool.arguments_digest}</code>`) : ''}
${row('Caller', b.caller_id)}
${row('Delegation', html`<a class="id" href="/console/delegations/${b.delegation_ref.object_id}">${b.delegation_ref.object_id}</a>`)}
${row('Reservation', html`<code>${b.reservation_id}</code> ${audit.reservation?.status ?? '—'}`)}
${receipt ? row('Receipt', html`<code>${receipt.record_id}</code> <span class="hint">profile</span> ${String(receipt.body!.profile)} <span class="hint">outcome</span> ${String(receipt.body!.outcome ?? '—')}`) : ''}
${b.approval ? row('Approval', html`${b.approval.tier} <code>${b.approval.decision_ref.object_id}</code>`) : ''}
</tbody></table>
<h2>Revisions</h2>
<table><thead><tr><th scope="col">Revision</th><th scope="col">Issued</th><th scope="col">State</th><th scope="col">Outcome</th></tr></thead><tbody>
${(audit.revisions ?? []).map((v) => html`<tr><td class="id">${v.revision_id}</td><td>${v.issued_at}</td><td>${v.state}</td><td>${v.outcome ?? '—'}</td></tr>`)}
</tbody></table>
<h2>Audit stream</h2>
<ol>${(audit.events ?? []).map((e) => html`<li><code>${e.event_type ?? '?'}</code> <span class="hint">${e.recorded_at ?? ''}</span></li>`)}</ol>`;
}
