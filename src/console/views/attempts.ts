/** Live attempts: a table whose body the server re-renders and pushes over SSE. */
import { html, type Html } from '../html.ts';
import type { AttemptRow } from '../reads.ts';
import { ago } from './layout.ts';

export function attemptRows(rows: readonly AttemptRow[], now: number): Html {
  if (rows.length === 0) return html`<tr><td colspan="7">No attempts yet.</td></tr>`;
  return html`${rows.map(
    (r) => html`<tr data-attempt="${r.attempt_id}">
<td class="id"><a href="/console/attempts/${r.attempt_id}">${r.attempt_id}</a></td>
<td class="state-${r.state}">${r.state}</td>
<td class="outcome-${r.outcome ?? 'none'}">${r.outcome ?? '—'}${r.cancel_cause ? html` <span class="badge">${r.cancel_cause}</span>` : ''}</td>
<td>${r.delegatee_id}${r.tool ? html` <span class="badge">tool ${r.tool}</span>` : ''}</td>
<td>${r.caller_id}</td>
<td>${ago(r.admitted_at, now)}</td>
<td class="id"><a href="/console/delegations/${r.delegation_id}">${r.delegation_id}</a></td>
</tr>`,
  )}`;
}

export function attemptsView(rows: readonly AttemptRow[], now: number): Html {
  return html`<p class="hint" id="live-note">Newest first; this table updates by itself (server-sent events).</p>
<div hx-ext="sse" sse-connect="/console/events">
<table aria-describedby="live-note">
<caption class="skip">Attempts</caption>
<thead><tr><th scope="col">Attempt</th><th scope="col">State</th><th scope="col">Outcome</th><th scope="col">Delegatee</th><th scope="col">Caller</th><th scope="col">Age</th><th scope="col">Delegation</th></tr></thead>
<tbody id="attempt-rows" sse-swap="attempts" aria-live="polite" aria-relevant="all">${attemptRows(rows, now)}</tbody>
</table>
</div>`;
}
