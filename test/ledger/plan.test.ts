/**
 * The admission planned outside its transaction (src/ledger/plan.ts, issue
 * #24 item 1): the heads the transaction gives the streams it opens are
 * known before BEGIN, the transaction finds exactly those, and a stream
 * planned as new that is not new by the time the transaction runs makes the
 * admission refuse the fence as stale, writing nothing. Real SQLite.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { streamOf } from '../../src/control/scope.ts';
import { delegationScope, planOpens, unplacedParents } from '../../src/ledger/plan.ts';
import type { OpenBudgetRequest } from '../../src/ledger/types.ts';
import { canonicalText, isCanonicalFrozen, knownText } from '../../src/records/canonical.ts';
import { randomIds } from '../../src/records/ids.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { expectCodeAsync } from '../helpers/errors.ts';
import { actor, agentScope, attemptScope, decision, FAR, freshSpace, NOW, plannedTask, publishAgent } from '../store/support/fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-plan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const units = [{ name: 'units', unit: 'admission', ceiling: 5n }];

async function world() {
  const store = SqliteStore.open(join(dir, `p${++n}.db`), { create: true });
  const space = freshSpace();
  await publishAgent(store, space);
  const base = { space_id: space, owner_namespace: `ns-${space}`, actor_ref: actor, at: NOW(), not_after: FAR, dimensions: units };
  const root = (): OpenBudgetRequest => ({ ...base, node_id: randomIds.next('dlg') });
  const child = (parent: string): OpenBudgetRequest => ({ ...base, node_id: randomIds.next('dlg'), parent_id: parent });
  const scopes = [agentScope(space)];
  const admission = (leaf: string) => (fence_set: Parameters<Parameters<typeof plannedTask>[3]>[0]) => {
    const effect = randomIds.next('eff');
    return { effect_id: effect, reservation_id: randomIds.next('res'), node_id: leaf, kind: 'reserve' as const, amounts: { units: 1n }, fence_set, scopes, decision: decision(effect), attempt_scope: attemptScope(space, randomIds.next('att')), actor_ref: actor, at: NOW() };
  };
  return { store, space, root, child, scopes, admission };
}

const streamOfNode = (b: OpenBudgetRequest) => streamOf(delegationScope(b.space_id, b.node_id));

describe('a task admission planned before its transaction', () => {
  it('the heads planned for a new root and child are the heads the transaction writes', async () => {
    const w = await world();
    const [r] = [w.root()];
    const c = w.child(r.node_id);
    const req = await plannedTask(w.store, [r, c], [...(await w.store.control.fenceSet(w.scopes))], w.admission(c.node_id));
    const receipt = await w.store.ledger.admitTask(req);
    expect(receipt.fence_set).toStrictEqual(req.admission.fence_set);
    for (const b of [r, c]) {
      const planned = req.admission.fence_set.find((f) => f.branch_id === streamOfNode(b).branch_id)!;
      const head = (await w.store.control.streamHead(streamOfNode(b)))!;
      expect({ position: head.position, event_id: head.event_id, event_digest: head.event_digest }).toStrictEqual({ position: 1, event_id: planned.event_id, event_digest: planned.event_digest });
    }
    // The child's issued event records its place, as planned (depth 1 under the new root).
    const [issued] = await w.store.control.readStream(streamOfNode(c));
    expect(issued!.payload).toStrictEqual({ parent_id: r.node_id, root_id: r.node_id, depth: 1 });
    await w.store.close();
  });

  it.each([{ depth: 7 }, { root_id: 'dlg_elsewhere' }])('the transaction appends the issued events the plan composed, as they are; a node placed elsewhere than planned (%o) gets its event composed again', async (elsewhere) => {
    const w = await world();
    const r = w.root();
    const c = w.child(r.node_id);
    const req = await plannedTask(w.store, [r, c], [...(await w.store.control.fenceSet(w.scopes))], w.admission(c.node_id));
    const [planR, planC] = req.budgets.map((b) => b.planned_issue!);
    expect(planR!.placed).toStrictEqual({ root_id: r.node_id, depth: 0 });
    expect(planC!.placed).toStrictEqual({ root_id: r.node_id, depth: 1 });
    // Marked where the transaction could only have taken it from the plan: the stored document is the planned one.
    const marked = (p: typeof planR) => ({ ...p!.composed, row: { ...p!.composed.row, document: p!.composed.row.document.replace('"payload":{', '"payload":{"planned":true,') } });
    const budgets = [
      { ...req.budgets[0]!, planned_issue: { ...planR!, composed: marked(planR) } },
      { ...req.budgets[1]!, planned_issue: { placed: { ...planC!.placed, ...elsewhere }, composed: marked(planC) } },
    ];
    await w.store.ledger.admitTask({ ...req, budgets });
    const [rootIssued] = await w.store.control.readStream(streamOfNode(r));
    expect(rootIssued!.payload).toStrictEqual({ planned: true, parent_id: null, root_id: r.node_id, depth: 0 });
    // The child was planned elsewhere: placed at depth 1 under the root, its event is composed in the transaction (unmarked), with the same id.
    const [childIssued] = await w.store.control.readStream(streamOfNode(c));
    expect(childIssued).toStrictEqual(planC!.composed.event);
    expect(childIssued!.payload).toStrictEqual({ parent_id: r.node_id, root_id: r.node_id, depth: 1 });
    await w.store.close();
  });

  it('a node planned as new that another transaction opened first: the fence is stale, nothing of the task is written', async () => {
    const w = await world();
    const r = w.root();
    const c = w.child(r.node_id);
    const req = await plannedTask(w.store, [r, c], [...(await w.store.control.fenceSet(w.scopes))], w.admission(c.node_id));
    // The same root, opened by someone else between the plan and the commit: its stream's head is not the planned one.
    await w.store.ledger.openBudget(r);
    const err = await expectCodeAsync(w.store.ledger.admitTask(req), 'context_invalidated');
    expect(err.details).toStrictEqual({ failures: [{ branch_id: streamOfNode(r).branch_id, reason: 'head_moved' }] });
    expect(await w.store.ledger.tree(c.node_id)).toBeUndefined();
    expect(await w.store.ledger.reservation(req.admission.reservation_id)).toBeUndefined();
    // Planned again over today's heads, the same task is admitted.
    const again = await plannedTask(w.store, [r, c], [...(await w.store.control.fenceSet([...w.scopes, delegationScope(w.space, r.node_id)]))], w.admission(c.node_id));
    await expect(w.store.ledger.admitTask(again)).resolves.toMatchObject({ status: 'held', chain: [r.node_id, c.node_id] });
    await w.store.close();
  });

  it("a new node's stream that gained a head before the commit (an event on a node not yet opened): the fence is stale, the planned event is not appended", async () => {
    const w = await world();
    const r = w.root();
    const req = await plannedTask(w.store, [r], [...(await w.store.control.fenceSet(w.scopes))], w.admission(r.node_id));
    await w.store.control.appendControl({ event_type: 'rw003.delegation.revoked', control_scope_ref: delegationScope(w.space, r.node_id), actor_ref: actor });
    const err = await expectCodeAsync(w.store.ledger.admitTask(req), 'context_invalidated');
    expect(err.details).toStrictEqual({ failures: [{ branch_id: streamOfNode(r).branch_id, reason: 'head_moved' }] });
    expect((await w.store.control.readStream(streamOfNode(r))).map((e) => e.event_type)).toStrictEqual(['rw003.delegation.revoked']);
    await w.store.close();
  });

  it('a child under a stored parent is placed from the parent the caller read; without it no head is planned and the admission refuses', async () => {
    const w = await world();
    const r = w.root();
    await w.store.ledger.openBudget(r);
    const fence = [...(await w.store.control.fenceSet([...w.scopes, delegationScope(w.space, r.node_id)]))];
    const c = w.child(r.node_id);
    expect(unplacedParents([r, c], fence)).toStrictEqual([r.node_id]);
    const unplaced = planOpens([r, c], fence, randomIds);
    expect(unplaced.budgets.map((b) => b.issued_event_id)).toStrictEqual([undefined, undefined]);
    expect(unplaced.fence_set).toStrictEqual(fence);
    const err = await expectCodeAsync(w.store.ledger.admitTask({ budgets: unplaced.budgets, admission: w.admission(c.node_id)(unplaced.fence_set) }), 'context_invalidated');
    expect(err.details).toStrictEqual({ failures: [{ branch_id: streamOfNode(c).branch_id, reason: 'missing_from_fence_set' }] });
    const placed = await plannedTask(w.store, [r, c], fence, w.admission(c.node_id));
    expect(placed.budgets[1]!.issued_event_id).toMatch(/^evt_/);
    await expect(w.store.ledger.admitTask(placed)).resolves.toMatchObject({ status: 'held', chain: [r.node_id, c.node_id] });
    const [issued] = await w.store.control.readStream(streamOfNode(c));
    expect(issued!.payload).toStrictEqual({ parent_id: r.node_id, root_id: r.node_id, depth: 1 });
    await w.store.close();
  });

  it('hands back the fence set deep-frozen, as a copy: written once for every place that binds it, the heads it was given stay theirs', () => {
    const space = freshSpace();
    const head = { project_id: `rw-control:${space}`, branch_id: 'agent:a', position: 3, event_id: 'evt_1', event_digest: `sha-256:${'a'.repeat(64)}` };
    const base = { space_id: space, owner_namespace: `ns-${space}`, actor_ref: actor, at: NOW(), not_after: FAR, dimensions: units };
    const opens = planOpens([{ ...base, node_id: randomIds.next('dlg') }], [head], randomIds);
    expect(opens.fence_set).toHaveLength(2);
    expect(opens.fence_set).toContainEqual(head);
    expect(isCanonicalFrozen(opens.fence_set)).toBe(true);
    expect(Object.isFrozen(head)).toBe(false);
    // Written once as a member of whatever carries it (the admission's digest, the events), then known.
    expect(knownText(opens.fence_set)).toBeUndefined();
    const text = JSON.stringify(JSON.parse(canonicalText({ fence_set: opens.fence_set })).fence_set);
    expect(knownText(opens.fence_set)).toBe(text);
  });
});
