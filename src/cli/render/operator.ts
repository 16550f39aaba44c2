/** People-facing renderings of operator data: trees, escalations, deliveries, an attempt's audit. */
import type { LedgerTreeNode } from '../../ledger/types.ts';
import type { Escalation } from '../../operator/escalation.ts';
import type { OperatorService } from '../../operator/service.ts';
import { BAR_LEGEND, renderBudgetTree } from './ledger.ts';
import { table } from './table.ts';

type Trees = Awaited<ReturnType<OperatorService['trees']>>;

export function renderTrees(trees: Trees): string {
  if (trees.length === 0) return 'no delegation trees yet';
  const blocks = trees.map((t) => {
    const node = t.tree as LedgerTreeNode | undefined;
    // Under an upstream's chain (separate stores) the local ledger starts at the imported leaf.
    const imported = node && node.node_id !== t.root ? `${t.root}  (upstream root; local ledger from the imported leaf)\n` : '';
    const tree = node ? `${imported}${renderBudgetTree(node)}` : `${t.root}  (no budget node)`;
    // A TOOL column only where an MCP call is listed (issue #26): an A2A-only tree reads as before.
    const tools = t.attempts.some((a) => a.tool !== undefined);
    const rows = t.attempts.map((a) => [a.attempt_id, a.delegation_id, a.delegatee_id, ...(tools ? [a.tool ?? '-'] : []), a.caller_id, a.state, a.outcome ?? '-']);
    return `${tree}\n\n${indent(table(['ATTEMPT', 'DELEGATION', 'DELEGATEE', ...(tools ? ['TOOL'] : []), 'CALLER', 'STATE', 'OUTCOME'], rows))}`;
  });
  return [...blocks, BAR_LEGEND].join('\n\n');
}

export function renderEscalations(list: readonly Escalation[]): string {
  if (list.length === 0) return 'no escalations';
  const subject = (s: Escalation['body']['subject']) => [s.attempt_id && `attempt ${s.attempt_id}`, s.delegation_id && `delegation ${s.delegation_id}`, s.scope && `scope ${s.scope}`].filter(Boolean).join(', ') || '-';
  return table(
    ['ESCALATION', 'STATE', 'KIND', 'RAISED', 'SUBJECT', 'REASONS'],
    list.map((e) => [e.record_id, e.body.state, e.body.kind, e.body.raised_at, subject(e.body.subject), e.body.reasons.join('; ')]),
  );
}

/** The audit trail as sections: scalars as `key: value`, lists as counts with one line per entry's identifying fields. */
export function renderAudit(audit: unknown): string {
  const out: string[] = [];
  for (const [key, value] of Object.entries((audit ?? {}) as Record<string, unknown>)) {
    if (Array.isArray(value)) {
      out.push(`${key} (${value.length})`);
      for (const v of value) out.push(`  ${summary(v)}`);
    } else if (value && typeof value === 'object') {
      out.push(`${key}: ${summary(value)}`);
      if (key === 'attempt') out.push(...attemptFacts(value));
    }
    else out.push(`${key}: ${value === undefined ? '-' : String(value)}`);
  }
  return out.join('\n');
}

/**
 * What the attempt called and how its outcome was established: the adapter (RW-003 §10.2),
 * an MCP call's tool and arguments digest (issue #26), and `observed` when no read route verified it.
 */
function attemptFacts(attempt: object): string[] {
  const b = ((attempt as { body?: unknown }).body ?? {}) as { remote?: { protocol?: string; binding?: string; endpoint?: string }; tool?: { server: string; name: string; arguments_digest: string }; verification?: string };
  const out = b.remote ? [`  remote ${b.remote.protocol ?? '?'} ${b.remote.binding ?? '?'} ${b.remote.endpoint ?? '?'}`] : [];
  if (b.tool) out.push(`  tool ${b.tool.server}/${b.tool.name}  arguments ${b.tool.arguments_digest}`);
  if (b.verification) out.push(`  verification ${b.verification}`);
  return out;
}

const ID_FIELDS = ['record_id', 'revision_id', 'event_type', 'position', 'branch_id', 'head_position', 'status', 'state', 'outcome', 'profile', 'readback', 'created_at'];

/** The identifying scalar fields of a record (top level and its body), never the payload. */
function summary(v: unknown): string {
  if (!v || typeof v !== 'object') return String(v);
  const o = v as Record<string, unknown>;
  const body = (o.body ?? {}) as Record<string, unknown>;
  const parts = ID_FIELDS.flatMap((f) => (isScalar(o[f]) ? [`${f} ${o[f]}`] : isScalar(body[f]) ? [`${f} ${body[f]}`] : []));
  return parts.length > 0 ? parts.join('  ') : `{${Object.keys(o).slice(0, 6).join(', ')}}`;
}

const isScalar = (x: unknown): x is string | number | boolean => ['string', 'number', 'boolean'].includes(typeof x);
const indent = (s: string) => s.split('\n').map((l) => `  ${l}`).join('\n');
