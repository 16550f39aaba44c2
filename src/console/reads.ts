/**
 * What the console shows that is not an OperatorService action: fence heads,
 * held reservations, outbox depth, attempt ages. Read-only; every change goes
 * through OperatorService.
 */
import type { StreamHead } from '../control/fence.ts';
import type { ScopeKind } from '../control/scope.ts';
import type { AttemptBody } from '../attempts/record.ts';
import type { LedgerTreeNode } from '../ledger/types.ts';
import type { OperatorService } from '../operator/service.ts';
import type { Store } from '../store/port.ts';

export interface AttemptRow {
  attempt_id: string;
  delegation_id: string;
  state: AttemptBody['state'];
  outcome?: string;
  delegatee_id: string;
  /** An MCP call's tool (`server/name`, issue #26); absent for an A2A send. */
  tool?: string;
  caller_id: string;
  /** When the attempt was admitted (its first revision). */
  admitted_at?: string;
  cancel_cause?: string;
}

export class ConsoleReads {
  // Admission times never change: remembered per attempt, bounded.
  private readonly admitted = new Map<string, string>();

  constructor(private readonly deps: { store: Store; service: OperatorService; spaceId: string }) {}

  async attempts(limit = 50): Promise<AttemptRow[]> {
    const rows: AttemptRow[] = [];
    for (const a of await this.deps.service.attempts(() => true, limit)) {
      const b = a.body;
      rows.push({
        attempt_id: b.attempt_id,
        delegation_id: b.delegation_ref.object_id,
        state: b.state,
        ...(b.outcome ? { outcome: b.outcome } : {}),
        delegatee_id: b.delegatee_id,
        ...(b.tool ? { tool: `${b.tool.server}/${b.tool.name}` } : {}),
        caller_id: b.caller_id,
        ...(b.cancel_cause ? { cancel_cause: b.cancel_cause.cause } : {}),
        admitted_at: await this.admittedAt(a.record_id),
      });
    }
    return rows;
  }

  private async admittedAt(id: string): Promise<string | undefined> {
    const known = this.admitted.get(id);
    if (known) return known;
    const first = (await this.deps.store.listRevisions(id))[0]?.issued_at;
    if (first) {
      if (this.admitted.size >= 5000) this.admitted.delete(this.admitted.keys().next().value!);
      this.admitted.set(id, first);
    }
    return first;
  }

  /** The delegation stream head of every node of a budget tree. */
  async headsOf(tree: LedgerTreeNode | undefined): Promise<Map<string, StreamHead | undefined>> {
    const heads = new Map<string, StreamHead | undefined>();
    const walk = async (n: LedgerTreeNode): Promise<void> => {
      heads.set(n.node_id, await this.head('delegation', n.node_id));
      for (const c of n.children) await walk(c);
    };
    if (tree) await walk(tree);
    return heads;
  }

  head(kind: ScopeKind, id: string): Promise<StreamHead | undefined> {
    return this.deps.store.control.head({ space_id: this.deps.spaceId, scope_kind: kind, scope_id: id });
  }

  /** Reservations held or unknown (bounded), and their amounts summed per dimension. */
  async held(): Promise<{ count: number; byDimension: Map<string, bigint> }> {
    const open = await this.deps.store.ledger.unresolved(1000);
    const byDimension = new Map<string, bigint>();
    for (const r of open) for (const [dim, amount] of Object.entries(r.amounts)) byDimension.set(dim, (byDimension.get(dim) ?? 0n) + BigInt(amount));
    return { count: open.length, byDimension };
  }

  /** Notifications waiting in the push outbox (pending or being delivered), bounded at 1000. */
  async outboxDepth(): Promise<number> {
    const pending = await this.deps.service.deliveries({ status: 'pending', limit: 1000 });
    const delivering = await this.deps.service.deliveries({ status: 'delivering', limit: 1000 });
    return pending.length + delivering.length;
  }
}
