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
  attempts: Array<{ attempt_id: string; delegation_id: string; state: string; outcome?: string; delegatee_id: string }>;
}

const headText = (h: StreamHead | undefined) => (h ? html`<span class="badge">head #${h.position} · ${h.state}</span>` : html`<span class="badge">no stream</span>`);

function node(n: LedgerTreeNode, t: TreeView): Html {
  const attempts = t.attempts.filter((a) => a.delegation_id === n.node_id);
  return html`<li><div class="node">
<a class="id" href="/console/delegations/${n.node_id}">${n.node_id}</a> ${headText(t.heads.get(n.node_id))} <span class="hint">depth ${n.depth}, until ${n.not_after}</span><br>
${n.balances.map((b) => budgetBar(b.dimension, b))}
${attempts.length > 0 ? html`<br><span class="hint">attempts:</span> ${attempts.slice(0, 8).map((a) => html`<span class="badge">${a.delegatee_id} ${a.state}${a.outcome ? ` ${a.outcome}` : ''}</span> `)}${attempts.length > 8 ? html`<span class="hint">+${attempts.length - 8}</span>` : ''}` : ''}
</div>${n.children.length > 0 ? html`<ul>${n.children.map((c) => node(c, t))}</ul>` : ''}</li>`;
}

export function treesView(trees: readonly TreeView[]): Html {
  if (trees.length === 0) return html`<p>No delegation trees yet.</p>`;
  return html`<p class="hint">Bars: <span class="badge">blue</span> consumed, <span class="badge">orange</span> reserved, grey what is left of the ceiling. The head is the delegation's control stream position and state (the fence every effect takes).</p>
${trees.map((t) => html`<section class="tree" aria-labelledby="t-${t.root}"><h2 id="t-${t.root}">Root <code>${t.root}</code></h2>${t.tree ? html`<ul>${node(t.tree, t)}</ul>` : html`<p>No ledger for this root.</p>`}</section>`)}`;
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
