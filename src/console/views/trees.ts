/** Delegation trees with budget bars and fence heads, and one delegation's controls (typed confirmation). */
import type { StreamHead } from '../../control/fence.ts';
import type { LedgerTreeNode } from '../../ledger/types.ts';
import { budgetBar } from '../charts.ts';
import { html, type Html } from '../html.ts';
import { csrfField, type PageContext } from './layout.ts';

export interface TreeView {
  root: string;
  tree?: LedgerTreeNode;
  heads: Map<string, StreamHead | undefined>;
  attempts: Array<{ attempt_id: string; delegation_id: string; state: string; outcome?: string; delegatee_id: string; tool?: string }>;
}

const headText = (h: StreamHead | undefined) => (h ? html`<span class="badge">head #${h.position} · ${h.state}</span>` : html`<span class="badge">no stream</span>`);

function node(n: LedgerTreeNode, t: TreeView): Html {
  const attempts = t.attempts.filter((a) => a.delegation_id === n.node_id);
  return html`<li><div class="node">
<a class="id" href="/console/delegations/${n.node_id}">${n.node_id}</a> ${headText(t.heads.get(n.node_id))} <span class="hint">depth ${n.depth}, until ${n.not_after}</span><br>
${n.balances.map((b) => budgetBar(b.dimension, b))}
${attempts.length > 0 ? html`<br><span class="hint">attempts:</span> ${attempts.slice(0, 8).map((a) => html`<span class="badge">${a.tool ?? a.delegatee_id} ${a.state}${a.outcome ? ` ${a.outcome}` : ''}</span> `)}${attempts.length > 8 ? html`<span class="hint">+${attempts.length - 8}</span>` : ''}` : ''}
</div>${n.children.length > 0 ? html`<ul>${n.children.map((c) => node(c, t))}</ul>` : ''}</li>`;
}

/** The filter as the operator typed it (already validated), the next page's cursor, and how many attempts were read. */
export interface TreePageView {
  filter: Partial<Record<FilterField, string>>;
  next?: string;
  scanned: number;
  states: readonly string[];
}

type FilterField = 'caller' | 'delegatee' | 'state' | 'since' | 'until' | 'limit';
const FIELDS: Array<[FilterField, string, string]> = [
  ['caller', 'Caller', 'a caller id'],
  ['delegatee', 'Delegatee', 'a delegatee id'],
  ['since', 'Active from', 'ISO 8601, UTC unless a zone is given: 2026-12-01 or 2026-12-01T09:00Z'],
  ['until', 'Active before', 'same form; the attempt’s last change is before this'],
  ['limit', 'Roots per page', '1 to 50 (default 20)'],
];

const query = (f: TreePageView['filter'], cursor?: string) => {
  const q = new URLSearchParams(Object.entries(f).filter(([, v]) => v !== undefined && v !== '') as Array<[string, string]>);
  if (cursor) q.set('cursor', cursor);
  const s = q.toString();
  return `/console/trees${s ? `?${s}` : ''}`;
};

function filterForm(p: TreePageView): Html {
  const field = ([name, label, hint]: (typeof FIELDS)[number]) =>
    html`<div><label for="f-${name}">${label}</label><br><input id="f-${name}" name="${name}" value="${p.filter[name] ?? ''}" aria-describedby="f-${name}-hint"${name === 'limit' ? html` type="number" min="1" max="50"` : ''}><br><span id="f-${name}-hint" class="hint">${hint}</span></div>`;
  return html`<form method="get" action="/console/trees" class="filters" role="search" aria-label="Filter delegations">
${FIELDS.slice(0, 2).map(field)}
<div><label for="f-state">State or outcome</label><br><select id="f-state" name="state"><option value="">any</option>${p.states.map((s) => html`<option value="${s}"${p.filter.state === s ? html` selected` : ''}>${s}</option>`)}</select></div>
${FIELDS.slice(2).map(field)}
<div><button type="submit">Filter</button> <a href="/console/trees">Clear</a></div>
</form>`;
}

export function treesView(trees: readonly TreeView[], p: TreePageView): Html {
  const filtered = Object.values(p.filter).some((v) => v);
  const pager = html`<nav aria-label="Pages" class="pager"><a href="${query(p.filter)}">First page</a>${p.next ? html` · <a rel="next" href="${query(p.filter, p.next)}">Next page</a>` : html` · <span class="hint">last page</span>`}</nav>`;
  const list =
    trees.length === 0
      ? html`<p>${filtered ? 'No delegations match this filter on this page.' : 'No delegation trees yet.'}</p>`
      : html`<p class="hint">Bars: <span class="badge">blue</span> consumed, <span class="badge">orange</span> reserved, grey what is left of the ceiling. The head is the delegation's control stream position and state (the fence every effect takes). Newest activity first; a root whose attempts span pages shows on each.</p>
${trees.map((t) => html`<section class="tree" aria-labelledby="t-${t.root}"><h2 id="t-${t.root}">Root <code>${t.root}</code>${t.tree && t.tree.node_id !== t.root ? html` <span class="hint">(upstream root; this ledger starts at the imported leaf)</span>` : ''}</h2>${t.tree ? html`<ul>${node(t.tree, t)}</ul>` : html`<p>No ledger for this root.</p>`}</section>`)}`;
  return html`${filterForm(p)}
<p class="hint" role="status">${trees.length} root${trees.length === 1 ? '' : 's'} on this page; ${p.scanned} attempt${p.scanned === 1 ? '' : 's'} read.${p.next && trees.length === 0 ? ' Nothing matched within the bounded read: the next page reads on.' : ''}</p>
${list}
${pager}`;
}

const ACTIONS = [
  ['revoke', 'Revoke', 'Ends the delegation for good: running attempts under it are cancelled, new ones refused.'],
  ['suspend', 'Suspend', 'Stops new effects until resumed; running attempts under it are cancelled.'],
  ['resume', 'Resume', 'Lets a suspended delegation permit effects again.'],
] as const;

/** One delegation's head and its control actions; each needs the id typed back (RW-003 §1.2 effects are final). */
export function delegationView(ctx: PageContext, id: string, head: StreamHead | undefined, balances: LedgerTreeNode['balances']): Html {
  return html`<p>Delegation <code>${id}</code> ${headText(head)}</p>
<p>${balances.map((b) => budgetBar(b.dimension, b))}</p>
${ACTIONS.map(
  ([action, label, what]) => html`<form method="post" action="/console/delegations/${id}/${action}" class="stack" aria-labelledby="h-${action}">
<h2 id="h-${action}">${label}</h2><p class="hint">${what}</p>
${csrfField(ctx)}
<label for="${action}-reason">Reason</label><input id="${action}-reason" name="reason" required maxlength="2048">
<label for="${action}-confirm">Type the delegation id to confirm</label><input id="${action}-confirm" name="confirm" required autocomplete="off" spellcheck="false" aria-describedby="${action}-cd"><span id="${action}-cd" class="hint">${id}</span>
<button type="submit" class="${action === 'resume' ? '' : 'danger'}">${label} delegation</button>
</form>`,
)}`;
}
