/**
 * A readable root → leaf tree of a delegation chain for `baton delegate show`.
 * Pure: takes parsed contracts, returns text. Shows who delegated to whom,
 * under which exact revisions and signer keys, and the authority each hop
 * holds, so an operator can see at a glance where authority narrowed.
 */
import { durationSeconds } from './limits.ts';
import type { DelegationContract } from './model.ts';
import { linkOf } from './attestation-link.ts';
import type { ResourceSelector } from './scope.ts';
import type { RevisionRef } from '../records/revision-ref.ts';

const short = (ref: RevisionRef): string => `${ref.object_id}@${ref.revision_id}`;

function selector(s: ResourceSelector): string {
  if (s.kind === 'project') return `project:${s.project_id}`;
  if (s.kind === 'object') return `${s.project_id}/${s.object_id}`;
  return `${s.project_id}/${s.object_id}@${s.revision_id}`;
}

function describe(c: DelegationContract): string[] {
  const b = c.body;
  const link = linkOf(c);
  const spend = b.limits.spend ? `${b.limits.spend.amount_minor} ${b.limits.spend.currency} (minor units)` : 'none';
  const sub = b.subdelegation_policy;
  return [
    `${c.record_id}@${c.revision_id} [${b.lineage.kind}, depth ${b.lineage.depth}] ${b.autonomy.tier}`,
    `objective: ${b.objective.type}: ${b.objective.text.slice(0, 120)}`,
    `delegator ${short(b.delegator_actor_ref)} -> delegatee ${short(b.delegatee_agent_ref.actor_ref)} (card ${short(b.delegatee_agent_ref.card_ref)}, operator ${short(b.accountable_operator_ref)})`,
    `issued ${c.issued_at} by ${short(c.issued_by_actor_ref)} via ${b.issuer_binding.path}; signed ${link.signers.map((s) => `${s.alg}/${s.kid}`).join(', ') || 'UNSIGNED'}`,
    `operations: ${b.scope.operations.join(', ')}; tools: ${b.scope.tools.join(', ') || 'none'}`,
    `objects: ${b.scope.resources.map(selector).join(', ')}; data: ${b.scope.data_classes.join(', ')}; effects: ${b.scope.effect_classes.join(', ')}`,
    `not_after ${b.limits.not_after}; duration ${durationSeconds(b.limits.max_duration)}s; invocations ${b.limits.max_invocations}; operations ${b.limits.max_protected_operations}; spend ${spend}`,
    `sub-delegation: ${sub.allowed ? `allowed, ${sub.max_remaining_depth} more hop(s), ${sub.max_descendants} descendants` : 'denied'}; ledger ${b.ledger_ref}`,
  ];
}

/** Renders `contracts` (root first) as an indented tree. */
export function renderChainTree(contracts: readonly DelegationContract[]): string {
  const lines: string[] = [];
  contracts.forEach((c, depth) => {
    const indent = '   '.repeat(depth);
    const [head, ...rest] = describe(c);
    lines.push(`${indent}${depth === 0 ? '' : '└─ '}${head}`);
    const pad = `${indent}${depth === 0 ? '' : '   '}   `;
    for (const line of rest) lines.push(`${pad}${line}`);
  });
  return lines.join('\n');
}
