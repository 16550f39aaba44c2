/**
 * What an operator reads: the attempts that may still be running, current
 * attempts by filter, delegation trees with their budgets, and everything
 * recorded about one attempt. Reads only; nothing here appends.
 */
import type { AttemptBody } from '../attempts/record.ts';
import type { LedgerTreeNode } from '../ledger/types.ts';
import { streamOf } from '../control/scope.ts';
import { invalidRequest } from '../errors.ts';
import { attemptOf } from '../gateway/attempts.ts';
import { inputContentOf } from '../gateway/task-input.ts';
import type { Envelope, SealedRecord } from '../records/envelope.ts';
import { schemaRefFor } from '../records/schema-ref.ts';
import type { JsonValue } from '../records/strict-json.ts';
import { recordAt } from '../store/record-at.ts';
import { currentWhere } from '../store/scan.ts';
import { scopeIn, type OperatorDeps } from './deps.ts';
import { groupAttempts, type TreeQuery } from './tree-page.ts';

type Attempt = SealedRecord<AttemptBody>;

/** A root's budget tree (absent when this ledger holds none) and the attempts admitted under it. */
export interface DelegationTree {
  root: string;
  tree: LedgerTreeNode | undefined;
  /** `tool` (`server/name`): an MCP call's tool (issue #26); absent for an A2A send. */
  attempts: Array<Pick<AttemptBody, 'attempt_id' | 'delegatee_id' | 'state' | 'outcome' | 'caller_id'> & { delegation_id: string; tool?: string }>;
}
type Json = { [key: string]: JsonValue };

const ATTEMPT_SCHEMA = schemaRefFor('execution_attempt');

export class OperatorQueries {
  constructor(private readonly deps: Pick<OperatorDeps, 'store' | 'dispatcher' | 'spaceId'>) {}

  /** Attempts whose reservation is unresolved: the ones that may still be running. */
  async openAttempts(limit = 1000): Promise<Attempt[]> {
    const out: Attempt[] = [];
    for (const r of await this.deps.store.ledger.unresolved(limit)) {
      const a = await this.deps.dispatcher.openAttemptOf(r);
      if (a) out.push(a);
    }
    return out;
  }

  /** Current attempts newest first, filtered; a bounded scan of the attempt records. */
  async attempts(match: (a: AttemptBody) => boolean, limit = 100): Promise<Attempt[]> {
    return currentWhere<Attempt & Envelope>(this.deps.store, ATTEMPT_SCHEMA, (r) => match(r.body), { limit, pages: 50, pageSize: 500 });
  }

  /** Delegation trees with their budgets and the outcomes of the attempts under them, newest roots first. */
  async trees(limit = 20): Promise<DelegationTree[]> {
    return (await this.treePage({}, limit)).trees;
  }

  /**
   * One page of delegation trees whose attempts match `q` (caller, delegatee,
   * state, time), newest first; `next` continues (keyset, src/operator/tree-page.ts).
   */
  async treePage(q: TreeQuery, limit = q.limit ?? 20): Promise<{ trees: DelegationTree[]; next?: string; scanned: number }> {
    const { roots, next, scanned } = await groupAttempts(this.deps.store, ATTEMPT_SCHEMA, q, limit);
    const trees: DelegationTree[] = [];
    for (const [root, attempts] of roots) {
      trees.push({
        root,
        tree: await this.ledgerTree(root, attempts[0]!),
        attempts: attempts.map((a) => ({
          attempt_id: a.body.attempt_id,
          delegation_id: a.body.delegation_ref.object_id,
          delegatee_id: a.body.delegatee_id,
          ...(a.body.tool ? { tool: `${a.body.tool.server}/${a.body.tool.name}` } : {}),
          caller_id: a.body.caller_id,
          state: a.body.state,
          ...(a.body.outcome ? { outcome: a.body.outcome } : {}),
        })),
      });
    }
    return { trees, ...(next ? { next } : {}), scanned };
  }

  /**
   * The budget tree an attempt was admitted under. Mostly its root's; under a
   * chain imported from a separate-store upstream, this ledger is rooted at
   * the imported leaf (the upstream root has no node here), so the tree is
   * found from the attempt's own delegation node (issue 25 item 11).
   */
  private async ledgerTree(root: string, a: Attempt): Promise<LedgerTreeNode | undefined> {
    const tree = await this.deps.store.ledger.tree(root);
    if (tree) return tree;
    const node = await this.deps.store.ledger.node(a.body.delegation_ref.object_id);
    return node ? this.deps.store.ledger.tree(node.root_id) : undefined;
  }

  /** Everything recorded about one attempt: revisions, input, decision, receipts, checkpoints, reservation, events, fenced heads. */
  async attemptAudit(id: string): Promise<Json> {
    const revisions = await this.deps.store.listRevisions(id);
    const latest = attemptOf(revisions[revisions.length - 1]);
    if (!latest) throw invalidRequest('no such attempt', { attempt: id.slice(0, 128) });
    const reservation = await this.deps.store.ledger.reservation(latest.body.reservation_id);
    const events = await this.deps.store.control.readStream(streamOf(scopeIn(this.deps.spaceId, 'attempt', id)), { limit: 1000 });
    const produced = [...new Set(events.flatMap((e) => e.produced_records.map((r) => `${r.object_id}\u0000${r.revision_id}`)))];
    const records = [];
    for (const key of produced) {
      const [objectId, revisionId] = key.split('\u0000') as [string, string];
      const r = await this.deps.store.getRecord(objectId, revisionId);
      if (r && r.record_id !== id) records.push(r);
    }
    const input = latest.body.input_ref ? await this.deps.store.getRecord(latest.body.input_ref.object_id, latest.body.input_ref.revision_id) : undefined;
    const decision = reservation ? await recordAt(this.deps.store, reservation.decision_ref) : undefined;
    const heads = [];
    for (const b of latest.body.fence_set) {
      const h = await this.deps.store.control.streamHead(b);
      heads.push({ branch_id: b.branch_id, fenced_position: b.position, head_position: h?.position ?? null, state: h?.state ?? null, moved: h?.event_id !== b.event_id });
    }
    // Content stored apart (records/detached.ts): say whether it is still held or was purged by retention.
    const inputContent = input ? await inputContentOf(input, this.deps.store.content) : ({ state: 'absent' } as const);
    const inputState = inputContent.state;
    const viewRow = latest.body.view_digest ? await this.deps.store.content.get(latest.body.view_digest) : undefined;
    const viewState = latest.body.view ? 'present' : viewRow?.document ? 'present' : viewRow?.purged_at ? 'purged' : 'absent';
    return {
      attempt: latest as unknown as JsonValue,
      content: { input: inputState, view: viewState },
      revisions: revisions.map((r) => ({ revision_id: r.revision_id, issued_at: r.issued_at, state: attemptOf(r)!.body.state, outcome: attemptOf(r)!.body.outcome ?? null, content_digest: r.content_digest })),
      // The record as stored (it names the message by digest), and the message while retention keeps it.
      input: (input ?? null) as unknown as JsonValue,
      input_message: (inputContent.state === 'present' ? inputContent.message : null) as unknown as JsonValue,
      decision: (decision ?? null) as unknown as JsonValue,
      reservation: (reservation ?? null) as unknown as JsonValue,
      events: events as unknown as JsonValue,
      records: records as unknown as JsonValue,
      fences: heads as unknown as JsonValue,
      // Turns still followed: who holds each, and the task the delegatee named (kept here until the verdict records it).
      following: (await this.deps.store.work.ofAttempt(id)).map((w) => ({ effect_id: w.effect_id, remote_task_id: w.remote_task_id ?? null, lease_owner: w.lease_owner, lease_until: w.lease_until, deadline: w.deadline })) as unknown as JsonValue,
    };
  }
}
