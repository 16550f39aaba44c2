/** Escalations, breakers, push deliveries and the audit: lists with their one action each. */
import type { AuditReport } from '../../audit/report.ts';
import type { StreamHead } from '../../control/fence.ts';
import { AUTHORITY_KINDS } from '../../control/scope.ts';
import type { Escalation } from '../../operator/escalation.ts';
import { BREAKER_TRIGGERS } from '../../operator/service.ts';
import type { DeliveryRow } from '../../store/port.ts';
import { html, type Html } from '../html.ts';
import { ago, csrfField, type PageContext } from './layout.ts';

const subjectOf = (s: Escalation['body']['subject']) => [s.scope, s.delegation_id && `delegation ${s.delegation_id}`, s.attempt_id && `attempt ${s.attempt_id}`].filter(Boolean).join(', ');

export function escalationsView(ctx: PageContext, list: readonly Escalation[], now: number): Html {
  if (list.length === 0) return html`<p>No escalations.</p>`;
  return html`<table><thead><tr><th scope="col">Raised</th><th scope="col">Kind</th><th scope="col">Subject</th><th scope="col">Reasons</th><th scope="col">State</th></tr></thead><tbody>
${list.map(
  (e) => html`<tr data-escalation="${e.record_id}">
<td>${ago(e.body.raised_at, now)} ago</td><td>${e.body.kind}</td><td class="id">${subjectOf(e.body.subject)}</td>
<td><ul>${e.body.reasons.map((r) => html`<li>${r}</li>`)}</ul></td>
<td>${
    e.body.state === 'open'
      ? html`<form method="post" action="/console/escalations/${e.record_id}/acknowledge" class="inline">${csrfField(ctx)}
<label for="note-${e.record_id}" class="hint">Note</label><input id="note-${e.record_id}" name="note" maxlength="2048">
<button type="submit">Acknowledge</button></form>`
      : html`acknowledged by <code>${e.body.acknowledged_by?.object_id ?? '?'}</code>${e.body.note ? html`: ${e.body.note}` : ''}`
  }</td></tr>`,
)}</tbody></table>`;
}

export interface BreakerRow {
  kind: string;
  id: string;
  head: StreamHead | undefined;
}

export function breakersView(ctx: PageContext, rows: readonly BreakerRow[]): Html {
  const kinds = AUTHORITY_KINDS.map((k) => html`<option value="${k}">${k}</option>`);
  return html`<h2>Breakers seen</h2>
${
  rows.length === 0
    ? html`<p>No breaker has tripped.</p>`
    : html`<table><thead><tr><th scope="col">Scope</th><th scope="col">Head</th><th scope="col">Action</th></tr></thead><tbody>
${rows.map(
  (r) => html`<tr><td class="id">${r.kind}:${r.id}</td><td>${r.head ? `#${r.head.position} ${r.head.state}` : '—'}</td><td>${
    r.head?.state === 'tripped'
      ? html`<form method="post" action="/console/breakers/reset" class="inline">${csrfField(ctx)}<input type="hidden" name="kind" value="${r.kind}"><input type="hidden" name="id" value="${r.id}">
<label for="rr-${r.id}" class="hint">Reason</label><input id="rr-${r.id}" name="reason" required><button type="submit">Reset</button></form>`
      : ''
  }</td></tr>`,
)}</tbody></table>`
}
<form method="post" action="/console/breakers/trip" class="stack" aria-labelledby="trip-h"><h2 id="trip-h">Trip a breaker</h2>
${csrfField(ctx)}
<label for="trip-kind">Scope kind</label><select id="trip-kind" name="kind">${kinds}</select>
<label for="trip-id">Scope id</label><input id="trip-id" name="id" required spellcheck="false">
<label for="trip-trigger">Trigger</label><select id="trip-trigger" name="trigger">${BREAKER_TRIGGERS.map((t) => html`<option${t === 'operator' ? html` selected` : ''}>${t}</option>`)}</select>
<label for="trip-reason">Reason</label><input id="trip-reason" name="reason" required maxlength="2048">
<button type="submit" class="danger">Trip</button></form>
<form method="post" action="/console/breakers/reset" class="stack" aria-labelledby="reset-h"><h2 id="reset-h">Reset a breaker</h2>
${csrfField(ctx)}
<label for="reset-kind">Scope kind</label><select id="reset-kind" name="kind">${kinds}</select>
<label for="reset-id">Scope id</label><input id="reset-id" name="id" required spellcheck="false">
<label for="reset-reason">Reason</label><input id="reset-reason" name="reason" required maxlength="2048">
<button type="submit">Reset</button></form>`;
}

const STATUSES = ['dead', 'pending', 'delivering', 'delivered'] as const;

export function pushView(ctx: PageContext, status: string | undefined, rows: readonly Omit<DeliveryRow, 'body'>[], now: number): Html {
  return html`<nav aria-label="Filter deliveries"><ul class="legend">${[undefined, ...STATUSES].map((s) => html`<li><a href="/console/push${s ? `?status=${s}` : ''}"${s === status ? html` aria-current="page"` : ''}>${s ?? 'all'}</a></li>`)}</ul></nav>
${
  rows.length === 0
    ? html`<p>No deliveries${status ? ` ${status}` : ''}.</p>`
    : html`<table><thead><tr><th scope="col">Delivery</th><th scope="col">Task</th><th scope="col">Status</th><th scope="col">Tries</th><th scope="col">Last error</th><th scope="col">Created</th><th scope="col">Action</th></tr></thead><tbody>
${rows.map(
  (d) => html`<tr data-delivery="${d.delivery_id}"><td class="id">${d.delivery_id}</td><td class="id">${d.task_id}</td><td>${d.status === 'dead' ? html`<strong>dead letter</strong>` : d.status}</td><td>${d.attempts}</td><td>${d.last_error ?? ''}</td><td>${ago(d.created_at, now)} ago</td>
<td>${d.status === 'dead' ? html`<form method="post" action="/console/push/deliveries/${d.delivery_id}/requeue" class="inline">${csrfField(ctx)}<button type="submit">Requeue</button></form>` : ''}</td></tr>`,
)}</tbody></table>`
}`;
}

export function auditView(report: AuditReport | undefined): Html {
  const run = html`<form method="get" action="/console/audit" class="inline"><input type="hidden" name="run" value="1"><button type="submit">Run audit verify</button></form>`;
  if (!report) return html`<p>Re-verifies every record digest, revision chain and control-event chain in the store (the same check as <code>baton audit verify</code>).</p>${run}`;
  const ok = report.break_count === 0;
  return html`${run}
<p class="${ok ? 'flash' : 'error'}" role="status">${ok ? 'No breaks: every chain verifies.' : `${report.break_count} break(s) found.`}</p>
<table><tbody>
<tr><th scope="row">Records checked</th><td>${report.records_checked}</td></tr>
<tr><th scope="row">Record heads checked</th><td>${report.record_heads_checked}</td></tr>
<tr><th scope="row">Control events checked</th><td>${report.events_checked}</td></tr>
<tr><th scope="row">Streams checked</th><td>${report.streams_checked}</td></tr>
<tr><th scope="row">Control heads checked</th><td>${report.control_heads_checked}</td></tr>
</tbody></table>
${
  report.breaks.length > 0
    ? html`<h2>Breaks</h2><table><thead><tr><th scope="col">Kind</th><th scope="col">Where</th><th scope="col">Detail</th></tr></thead><tbody>
${report.breaks.map((b) => html`<tr><td>${b.kind}</td><td class="id">${Object.entries(b.where).map(([k, v]) => `${k}=${String(v)}`).join(' ')}</td><td>${b.detail}</td></tr>`)}</tbody></table>`
    : ''
}`;
}
