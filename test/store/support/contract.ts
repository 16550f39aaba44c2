/**
 * The store contract: one suite, run against SQLite (always) and PostgreSQL
 * (when BATON_TEST_PG is set). Every assertion here is a rule of RW-003 §1.2
 * or ADR-0014 that both adapters must keep.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { streamKey, streamOf } from '../../../src/control/scope.ts';
import { randomIds } from '../../../src/records/ids.ts';
import { refOf, sealRecord } from '../../../src/records/envelope.ts';
import { systemClock } from '../../../src/records/time.ts';
import type { LedgerLimits } from '../../../src/ledger/types.ts';
import type { Store } from '../../../src/store/port.ts';
import { recordAt } from '../../../src/store/record-at.ts';
import { expectCodeAsync } from '../../helpers/errors.ts';
import { actor, admission, agentScope, attemptScope, chain, delegationScope, FAR, freshSpace, NOW, publishAgent } from './fixtures.ts';

const evidence = () => ({ object_id: 'vr_1', revision_id: randomIds.next('rev'), content_digest: `sha256:${'b'.repeat(64)}` });

export type MakeStore = (limits?: Partial<LedgerLimits>) => Promise<Store>;

export function storeContract(name: string, make: MakeStore): void {
  describe(`${name}: control streams`, () => {
    it('assigns consecutive positions per stream, independently across streams, as a hash chain', async () => {
      const store = await make();
      const space = freshSpace();
      const a = agentScope(space, 'a');
      const b = agentScope(space, 'b');
      const e1 = await store.control.appendControl({ event_type: 'rw003.agent_card.published', control_scope_ref: a, actor_ref: actor });
      const e2 = await store.control.appendControl({ event_type: 'rw003.agent_card.lifecycle_changed', control_scope_ref: a, actor_ref: actor, payload: { lifecycle: 'suspended' } });
      const f1 = await store.control.appendControl({ event_type: 'rw003.agent_card.published', control_scope_ref: b, actor_ref: actor });
      expect([e1.position, e2.position, f1.position]).toEqual([1, 2, 1]);
      expect(e1).toMatchObject({ project_id: `rw-control:${space}`, branch_id: 'agent:a', event_schema_ref: 'rw-agent-delegation/0.1.1#control_event', prev_event_digest: null });
      expect(e2.prev_event_digest).toBe(e1.event_digest);
      expect(await store.control.readStream(streamOf(a))).toStrictEqual([e1, e2]);
      expect((await store.control.head(a))?.state).toBe('suspended');
      expect((await store.control.head(b))?.state).toBe('active');
      await store.close();
    });

    it('reads several heads together: the same heads one by one would give, absent streams left out', async () => {
      const store = await make();
      const space = freshSpace();
      const a = agentScope(space, 'a');
      const b = agentScope(space, 'b');
      await store.control.appendControl({ event_type: 'rw003.agent_card.published', control_scope_ref: a, actor_ref: actor });
      await store.control.appendControl({ event_type: 'rw003.agent_card.published', control_scope_ref: b, actor_ref: actor });
      await store.control.appendControl({ event_type: 'rw003.agent_card.lifecycle_changed', control_scope_ref: b, actor_ref: actor, payload: { lifecycle: 'suspended' } });
      const heads = await store.control.heads([streamOf(a), streamOf(agentScope(space, 'none')), streamOf(b)]);
      expect([...heads.keys()].sort()).toEqual([streamKey(streamOf(a)), streamKey(streamOf(b))].sort());
      expect(heads.get(streamKey(streamOf(a)))).toStrictEqual(await store.control.head(a));
      expect(heads.get(streamKey(streamOf(b)))).toMatchObject({ position: 2, state: 'suspended' });
      expect(await store.control.heads([])).toEqual(new Map());
      await store.close();
    });

    it('places events only on their stream kind, and fails closed on an unknown type', async () => {
      const store = await make();
      const space = freshSpace();
      await expectCodeAsync(
        store.control.appendControl({ event_type: 'rw003.delegation.revoked', control_scope_ref: agentScope(space), actor_ref: actor }),
        'invalid_request',
      );
      await expectCodeAsync(
        store.control.appendControl({ event_type: 'rw003.execution.started', control_scope_ref: delegationScope(space, 'd'), actor_ref: actor }),
        'invalid_request',
      );
      await expectCodeAsync(
        store.control.appendControl({ event_type: 'rw004.made.up' as never, control_scope_ref: agentScope(space), actor_ref: actor }),
        'invalid_request',
      );
      await store.close();
    });

    it('deduplicates by idempotency key and refuses the key with other content', async () => {
      const store = await make();
      const scope = agentScope(freshSpace());
      const input = { event_type: 'rw003.agent_card.published' as const, control_scope_ref: scope, actor_ref: actor, idempotency_key: 'k1' };
      const first = await store.control.appendControl(input);
      expect(await store.control.appendControl(input)).toStrictEqual(first);
      await expectCodeAsync(store.control.appendControl({ ...input, payload: { other: 1 } }), 'invalid_request');
      expect((await store.control.head(scope))?.position).toBe(1);
      await store.close();
    });

    it('refuses an append whose expected head moved', async () => {
      const store = await make();
      const scope = agentScope(freshSpace());
      const e1 = await store.control.appendControl({ event_type: 'rw003.agent_card.published', control_scope_ref: scope, actor_ref: actor });
      await store.control.appendControl({ event_type: 'rw003.agent_card.lifecycle_changed', control_scope_ref: scope, actor_ref: actor, payload: { lifecycle: 'active' } });
      await expectCodeAsync(
        store.control.appendControl(
          { event_type: 'rw003.agent_card.lifecycle_changed', control_scope_ref: scope, actor_ref: actor, payload: { lifecycle: 'suspended' } },
          { expectedHead: { position: e1.position, event_id: e1.event_id }, at: NOW() },
        ),
        'context_invalidated',
      );
      await store.close();
    });

    it('revocation is terminal and attempt streams never enter a fence set', async () => {
      const store = await make();
      const space = freshSpace();
      const { root } = await chain(store, space);
      await store.control.appendControl({ event_type: 'rw003.delegation.revoked', control_scope_ref: delegationScope(space, root), actor_ref: actor });
      await store.control.appendControl({ event_type: 'rw003.delegation.amended', control_scope_ref: delegationScope(space, root), actor_ref: actor, payload: { lifecycle: 'active' } });
      expect((await store.control.head(delegationScope(space, root)))?.state).toBe('revoked');
      await store.control.appendControl({ event_type: 'rw003.execution.started', control_scope_ref: attemptScope(space, 'att1'), actor_ref: actor });
      const fence = await store.control.fenceSet([attemptScope(space, 'att1'), delegationScope(space, root), agentScope(space)]);
      expect(fence.map((b) => b.branch_id)).toEqual([`delegation:${root}`]);
      await store.close();
    });
  });

  describe(`${name}: records`, () => {
    it('lists current revisions of one schema newest first, page by page', async () => {
      const store = await make();
      const marker = randomIds.next('m');
      const deps = { ids: randomIds, clock: systemClock };
      const first = sealRecord({ type: 'delegation_checkpoint', body: { marker, n: 0 }, issuedBy: actor, lifecycle: 'recorded' }, deps);
      await store.putRecord(first);
      for (let n = 1; n < 5; n++) await store.putRecord(sealRecord({ type: 'delegation_checkpoint', body: { marker, n }, issuedBy: actor, lifecycle: 'recorded' }, deps));
      await store.putRecord(sealRecord({ type: 'delegation_checkpoint', body: { marker, n: 9 }, issuedBy: actor, lifecycle: 'recorded', recordId: first.record_id, prior: refOf(first) }, deps));
      const seen: number[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.listCurrent('rw-agent-delegation/0.1.1#delegation_checkpoint', { limit: 2, ...(cursor ? { cursor } : {}) });
        seen.push(...page.records.filter((r) => r.body.marker === marker).map((r) => r.body.n as number));
        cursor = page.cursor;
      } while (cursor);
      expect(seen).toEqual([9, 4, 3, 2, 1]); // the revised record counts once, at its newest revision
      await expectCodeAsync(store.listCurrent('x', { limit: 2, cursor: 'drop table' }), 'invalid_request');
      await store.close();
    });
  });

  describe(`${name}: budget nodes`, () => {
    it('opens a chain atomically with its issued events, depth by depth', async () => {
      const store = await make();
      const space = freshSpace();
      const { root, child, leaf } = await chain(store, space);
      expect(await store.ledger.node(leaf)).toMatchObject({ root_id: root, parent_id: child, depth: 2 });
      expect((await store.control.head(delegationScope(space, leaf)))?.state).toBe('active');
      const tree = await store.ledger.tree(root);
      expect(tree?.children[0]?.children[0]?.node_id).toBe(leaf);
      expect(tree?.balances).toContainEqual({ dimension: 'units', ceiling: '10', consumed: '0', reserved: '0' });
      await store.close();
    });

    it('refuses a child wider than its parent on every failing dimension', async () => {
      const store = await make();
      const space = freshSpace();
      const root = randomIds.next('dlg');
      const base = { space_id: space, owner_namespace: 'ns', actor_ref: actor, at: NOW() };
      await store.ledger.openBudget({ ...base, node_id: root, not_after: FAR, dimensions: [{ name: 'units', unit: 'admission', ceiling: 5n }] });
      const err = await expectCodeAsync(
        store.ledger.openBudget({
          ...base,
          node_id: randomIds.next('dlg'),
          parent_id: root,
          not_after: FAR,
          dimensions: [
            { name: 'units', unit: 'admission', ceiling: 6n },
            { name: 'spend_usd', unit: 'usd_cents', ceiling: 1n },
          ],
        }),
        'deny',
      );
      expect(err.details.failures).toEqual([
        { dimension: 'units', reason: 'wider_than_parent' },
        { dimension: 'spend_usd', reason: 'parent_lacks_dimension' },
      ]);
      await expectCodeAsync(
        store.ledger.openBudget({ ...base, node_id: randomIds.next('dlg'), parent_id: root, not_after: '2100-01-01T00:00:00.000Z', dimensions: [{ name: 'units', unit: 'admission', ceiling: 1n }] }),
        'deny',
      );
      await store.close();
    });

    it('enforces depth, descendants, active roots and retained records', async () => {
      const store = await make({ maxDepth: 2, maxDescendants: 3, maxActiveRoots: 2, maxRetainedRecords: 6 });
      const space = freshSpace();
      const ns = `ns-${space}`;
      const base = { space_id: space, owner_namespace: ns, actor_ref: actor, at: NOW(), not_after: FAR, dimensions: [{ name: 'units', unit: 'admission', ceiling: 5n }] };
      const r = randomIds.next('dlg');
      await store.ledger.openBudget({ ...base, node_id: r });
      const c = randomIds.next('dlg');
      await store.ledger.openBudget({ ...base, node_id: c, parent_id: r });
      const g = randomIds.next('dlg');
      await store.ledger.openBudget({ ...base, node_id: g, parent_id: c });
      await expectCodeAsync(store.ledger.openBudget({ ...base, node_id: randomIds.next('dlg'), parent_id: g }), 'limit_exceeded');
      await store.ledger.openBudget({ ...base, node_id: randomIds.next('dlg'), parent_id: r });
      await expectCodeAsync(store.ledger.openBudget({ ...base, node_id: randomIds.next('dlg'), parent_id: r }), 'limit_exceeded');
      await store.ledger.openBudget({ ...base, node_id: randomIds.next('dlg') });
      await expectCodeAsync(store.ledger.openBudget({ ...base, node_id: randomIds.next('dlg') }), 'limit_exceeded');
      await store.close();
    });

    it('settled work stops holding capacity; unresolved work keeps holding it', async () => {
      const store = await make({ maxActiveRoots: 1, maxRetainedRecords: 3 });
      const space = freshSpace();
      await publishAgent(store, space);
      const ns = `ns-${space}`;
      const open = async () => {
        const id = randomIds.next('dlg');
        await store.ledger.openBudget({ space_id: space, owner_namespace: ns, actor_ref: actor, at: NOW(), node_id: id, not_after: FAR, dimensions: [{ name: 'units', unit: 'admission', ceiling: 5n }] });
        return id;
      };
      const r1 = await open();
      await expectCodeAsync(open(), 'limit_exceeded'); // r1 has no reservation yet: it is active
      const a1 = await admission(store, space, [r1], r1);
      await store.ledger.admit(a1);
      await expectCodeAsync(open(), 'limit_exceeded'); // held reservation: still active
      await store.ledger.settle({ reservation_id: a1.reservation_id, outcome: { kind: 'measured', actual: new Map([['units', 1n]]) }, at: NOW() });
      const r2 = await open(); // r1 is fully settled: it no longer counts
      const a2 = await admission(store, space, [r2], r2);
      await store.ledger.admit(a2);
      await store.ledger.settle({ reservation_id: a2.reservation_id, outcome: { kind: 'unknown' }, at: NOW() });
      await expectCodeAsync(open(), 'limit_exceeded'); // unknown never releases capacity
      // Nor do expiry or revocation (ADR-0014: uncertainty holds capacity until reconciliation).
      const later = '2099-06-01T00:00:00.000Z'; // after r2's not_after
      const openLater = () =>
        store.ledger.openBudget({ space_id: space, owner_namespace: ns, actor_ref: actor, at: later, node_id: randomIds.next('dlg'), not_after: '2100-01-01T00:00:00.000Z', dimensions: [{ name: 'units', unit: 'admission', ceiling: 5n }] });
      await expectCodeAsync(openLater(), 'limit_exceeded');
      await store.control.appendControl({ event_type: 'rw003.delegation.revoked', control_scope_ref: delegationScope(space, r2), actor_ref: actor });
      await expectCodeAsync(open(), 'limit_exceeded');
      await store.close();
    });

    it('narrows ceilings: never raised, never below consumed + reserved, and admission honours them', async () => {
      const store = await make();
      const space = freshSpace();
      await publishAgent(store, space);
      const c = await chain(store, space, { root: 10n });
      await store.ledger.admit(await admission(store, space, [c.root, c.child, c.leaf], c.leaf, { units: 3n }));
      expect(await store.ledger.narrow(c.leaf, new Map([['units', 1n], ['tokens', 5000n]]))).toEqual(new Map([['units', 3n], ['tokens', 1000n]]));
      const leaf = (await store.ledger.tree(c.root))!.children[0]!.children[0]!;
      expect(leaf.balances.find((b) => b.dimension === 'units')).toMatchObject({ ceiling: '3', reserved: '3' });
      await expectCodeAsync(async () => store.ledger.admit(await admission(store, space, [c.root, c.child, c.leaf], c.leaf)), 'limit_exceeded');
      await expectCodeAsync(store.ledger.narrow('dlg_missing', new Map()), 'invalid_request');
      expect(await store.ledger.balanceAudit(c.root)).toSatisfy((rows: Array<{ consistent: boolean }>) => rows.every((r) => r.consistent));
      await store.close();
    });

    it('refuses children of a revoked parent and is idempotent per node id', async () => {
      const store = await make();
      const space = freshSpace();
      const base = { space_id: space, owner_namespace: 'ns', actor_ref: actor, at: NOW(), not_after: FAR, dimensions: [{ name: 'units', unit: 'admission', ceiling: 5n }] };
      const r = randomIds.next('dlg');
      const first = await store.ledger.openBudget({ ...base, node_id: r });
      expect(await store.ledger.openBudget({ ...base, node_id: r })).toStrictEqual(first);
      await expectCodeAsync(store.ledger.openBudget({ ...base, node_id: r, not_after: '2098-01-01T00:00:00.000Z' }), 'invalid_request');
      await store.control.appendControl({ event_type: 'rw003.delegation.revoked', control_scope_ref: delegationScope(space, r), actor_ref: actor });
      await expectCodeAsync(store.ledger.openBudget({ ...base, node_id: randomIds.next('dlg'), parent_id: r }), 'context_invalidated');
      await store.close();
    });
  });

  describe(`${name}: admission`, () => {
    it('reserves on root, every ancestor and the leaf in one step, and records the decision', async () => {
      const store = await make();
      const space = freshSpace();
      await publishAgent(store, space);
      const { root, child, leaf } = await chain(store, space, { root: 10n, child: 5n, leaf: 3n });
      const req = await admission(store, space, [root, child, leaf], leaf, { units: 2n, tokens: 50n });
      const receipt = await store.ledger.admit(req);
      expect(receipt).toMatchObject({ chain: [root, child, leaf], status: 'held', replayed: false, amounts: { units: '2', tokens: '50' } });
      const tree = await store.ledger.tree(root);
      for (const n of [tree!, tree!.children[0]!, tree!.children[0]!.children[0]!]) {
        expect(n.balances.find((b) => b.dimension === 'units')).toMatchObject({ reserved: '2', consumed: '0' });
      }
      expect(await recordAt(store, refOf(req.decision))).toStrictEqual(req.decision);
      // Read by revision id, answered only when the stored revision has the ref's digest too.
      expect(await recordAt(store, { ...refOf(req.decision), content_digest: `sha256:${'0'.repeat(64)}` })).toBeUndefined();
      const audit = await store.control.readStream(streamOf(req.attempt_scope));
      expect(audit.map((e) => e.event_type)).toEqual(['rw003.permission.evaluated']);
      await store.close();
    });

    it('commits ride-along records and audit events in the admission transaction, or none of them', async () => {
      const store = await make();
      const space = freshSpace();
      await publishAgent(store, space);
      const { root, child, leaf } = await chain(store, space, { root: 1n });
      const note = (n: number) => sealRecord({ type: 'execution_attempt', body: { n }, issuedBy: actor, lifecycle: 'active' }, { ids: randomIds, clock: systemClock });
      const event = (req: { attempt_scope: ReturnType<typeof attemptScope> }) => ({ event_type: 'rw003.execution.started' as const, control_scope_ref: req.attempt_scope, actor_ref: actor });
      const ok = await admission(store, space, [root, child, leaf], leaf);
      const first = note(1);
      await store.ledger.admit({ ...ok, records: [first], events: [event(ok)] });
      expect(await store.getRecord(first.record_id)).toStrictEqual(first);
      expect((await store.control.readStream(streamOf(ok.attempt_scope))).map((e) => e.event_type)).toEqual(['rw003.permission.evaluated', 'rw003.execution.started']);
      const refused = await admission(store, space, [root, child, leaf], leaf); // the budget is spent
      const second = note(2);
      await expectCodeAsync(store.ledger.admit({ ...refused, records: [second], events: [event(refused)] }), 'limit_exceeded');
      expect(await store.getRecord(second.record_id)).toBeUndefined();
      expect(await store.control.readStream(streamOf(refused.attempt_scope))).toEqual([]);
      const sneaky = await admission(store, space, [root, child, leaf], leaf);
      await expectCodeAsync(
        store.ledger.admit({ ...sneaky, amounts: { tokens: 1n }, events: [{ event_type: 'rw003.delegation.revoked', control_scope_ref: delegationScope(space, root), actor_ref: actor }] }),
        'invalid_request',
      );
      expect((await store.control.head(delegationScope(space, root)))?.state).toBe('active');
      await store.close();
    });

    it('is idempotent by effect id and refuses the same id with other content', async () => {
      const store = await make();
      const space = freshSpace();
      await publishAgent(store, space);
      const { root, child, leaf } = await chain(store, space);
      const req = await admission(store, space, [root, child, leaf], leaf);
      await store.ledger.admit(req);
      expect((await store.ledger.admit(req)).replayed).toBe(true);
      await expectCodeAsync(store.ledger.admit({ ...req, amounts: { units: 2n } }), 'invalid_request');
      expect((await store.ledger.tree(root))?.balances.find((b) => b.dimension === 'units')?.reserved).toBe('1');
      await store.close();
    });

    it('refuses a reused reservation id, unrepresentable amounts and ceilings', async () => {
      const store = await make();
      const space = freshSpace();
      await publishAgent(store, space);
      const { root, child, leaf } = await chain(store, space);
      const first = await admission(store, space, [root, child, leaf], leaf);
      await store.ledger.admit(first);
      const reuse = await admission(store, space, [root, child, leaf], leaf);
      await expectCodeAsync(store.ledger.admit({ ...reuse, reservation_id: first.reservation_id }), 'invalid_request');
      await expectCodeAsync(store.ledger.admit(await admission(store, space, [root, child, leaf], leaf, { units: 1n << 62n })), 'invalid_request');
      await expectCodeAsync(store.ledger.admit(await admission(store, space, [root, child, leaf], leaf, { units: 0n })), 'invalid_request');
      await expectCodeAsync(
        store.ledger.openBudget({ space_id: space, owner_namespace: 'ns', actor_ref: actor, at: NOW(), node_id: randomIds.next('dlg'), not_after: FAR, dimensions: [{ name: 'units', unit: 'admission', ceiling: 1n << 62n }] }),
        'limit_exceeded',
      );
      expect((await store.ledger.tree(root))?.balances.find((b) => b.dimension === 'units')?.reserved).toBe('1');
      await store.close();
    });

    it('siblings share the root allowance; exhaustion names the node and changes nothing', async () => {
      const store = await make();
      const space = freshSpace();
      await publishAgent(store, space);
      const { root, child, leaf } = await chain(store, space, { root: 3n });
      const sibling = randomIds.next('dlg');
      await store.ledger.openBudget({ space_id: space, owner_namespace: `ns-${space}`, actor_ref: actor, at: NOW(), node_id: sibling, parent_id: root, not_after: FAR, dimensions: [{ name: 'units', unit: 'admission', ceiling: 3n }] });
      await store.ledger.admit(await admission(store, space, [root, child, leaf], leaf, { units: 2n }));
      const err = await expectCodeAsync(store.ledger.admit(await admission(store, space, [root, sibling], sibling, { units: 2n })), 'limit_exceeded');
      expect(err.details.failures).toEqual([{ node_id: root, dimension: 'units', requested: '2', available: '1' }]);
      await store.ledger.admit(await admission(store, space, [root, sibling], sibling, { units: 1n }));
      expect((await store.ledger.tree(root))?.balances.find((b) => b.dimension === 'units')).toMatchObject({ reserved: '3' });
      await store.close();
    });

    it('fails closed on a stale, missing or non-permitting fence', async () => {
      const store = await make();
      const space = freshSpace();
      await publishAgent(store, space);
      const { root, child, leaf } = await chain(store, space);
      const stale = await admission(store, space, [root, child, leaf], leaf);
      await store.control.appendControl({ event_type: 'rw003.delegation.amended', control_scope_ref: delegationScope(space, root), actor_ref: actor });
      const e1 = await expectCodeAsync(store.ledger.admit(stale), 'context_invalidated');
      expect(e1.details.failures).toEqual([{ branch_id: `delegation:${root}`, reason: 'head_moved' }]);

      const missing = await admission(store, space, [child, leaf], leaf); // root left out by the caller
      const e2 = await expectCodeAsync(store.ledger.admit(missing), 'context_invalidated');
      expect(e2.details.failures).toContainEqual({ branch_id: `delegation:${root}`, reason: 'missing_from_fence_set' });

      await store.control.appendControl({ event_type: 'rw003.agent_card.lifecycle_changed', control_scope_ref: agentScope(space), actor_ref: actor, payload: { lifecycle: 'suspended' } });
      const suspended = await admission(store, space, [root, child, leaf], leaf);
      const e3 = await expectCodeAsync(store.ledger.admit(suspended), 'context_invalidated');
      expect(e3.details.failures).toEqual([{ branch_id: 'agent:agent_x', reason: 'not_permitting', state: 'suspended' }]);
      expect((await store.ledger.tree(root))?.balances.every((b) => b.reserved === '0' && b.consumed === '0')).toBe(true);
      expect(await store.ledger.reservation(stale.reservation_id)).toBeUndefined();
      await store.close();
    });

    it('a parent revocation blocks every descendant', async () => {
      const store = await make();
      const space = freshSpace();
      await publishAgent(store, space);
      const { root, child, leaf } = await chain(store, space);
      await store.control.appendControl({ event_type: 'rw003.delegation.revoked', control_scope_ref: delegationScope(space, child), actor_ref: actor });
      const err = await expectCodeAsync(store.ledger.admit(await admission(store, space, [root, child, leaf], leaf)), 'context_invalidated');
      expect(err.details.failures).toEqual([{ branch_id: `delegation:${child}`, reason: 'not_permitting', state: 'revoked' }]);
      await store.close();
    });

    it('refuses admission past expiry and in a dimension the root never granted', async () => {
      const store = await make();
      const space = freshSpace();
      await publishAgent(store, space);
      const r = randomIds.next('dlg');
      await store.ledger.openBudget({ space_id: space, owner_namespace: 'ns', actor_ref: actor, at: NOW(), node_id: r, not_after: '2026-01-01T00:00:00.000Z', dimensions: [{ name: 'units', unit: 'admission', ceiling: 5n }] });
      const req = await admission(store, space, [r], r);
      await expectCodeAsync(store.ledger.admit(req), 'context_invalidated');
      const { root, child, leaf } = await chain(store, space);
      await expectCodeAsync(store.ledger.admit(await admission(store, space, [root, child, leaf], leaf, { spend_usd: 1n })), 'deny');
      await store.close();
    });
  });

  describe(`${name}: settlement`, () => {
    async function held(store: Store, amounts: Record<string, bigint> = { units: 3n, tokens: 100n }) {
      const space = freshSpace();
      await publishAgent(store, space);
      const c = await chain(store, space);
      const req = await admission(store, space, [c.root, c.child, c.leaf], c.leaf, amounts);
      await store.ledger.admit(req);
      const units = async () => (await store.ledger.tree(c.root))!.balances.find((b) => b.dimension === 'units')!;
      return { ...c, req, units };
    }

    it('not_dispatched releases everything; measured releases only the proven unused part', async () => {
      const store = await make();
      const a = await held(store);
      await store.ledger.settle({ reservation_id: a.req.reservation_id, outcome: { kind: 'not_dispatched' }, at: NOW() });
      expect(await a.units()).toMatchObject({ reserved: '0', consumed: '0' });
      const b = await held(store);
      const r = await store.ledger.settle({ reservation_id: b.req.reservation_id, outcome: { kind: 'measured', actual: new Map([['units', 2n]]) }, at: NOW() });
      expect(r.status).toBe('settled');
      expect(await b.units()).toMatchObject({ reserved: '0', consumed: '2' });
      await store.close();
    });

    it('unknown keeps the reservation held until reconciled with evidence', async () => {
      const store = await make();
      const a = await held(store);
      expect((await store.ledger.settle({ reservation_id: a.req.reservation_id, outcome: { kind: 'unknown' }, at: NOW() })).status).toBe('unknown');
      expect(await a.units()).toMatchObject({ reserved: '3', consumed: '0' });
      expect((await store.ledger.unresolved(1000)).map((r) => r.reservation_id)).toContain(a.req.reservation_id);
      await expectCodeAsync(store.ledger.settle({ reservation_id: a.req.reservation_id, outcome: { kind: 'not_dispatched' }, at: NOW() }), 'invalid_request');
      await store.ledger.settle({ reservation_id: a.req.reservation_id, outcome: { kind: 'measured', actual: new Map([['units', 3n]]) }, evidence: evidence(), at: NOW() });
      expect(await a.units()).toMatchObject({ reserved: '0', consumed: '3' });
      await store.close();
    });

    it('resolves once, refuses over-measurement and settling a consumed admission', async () => {
      const store = await make();
      const a = await held(store);
      await expectCodeAsync(store.ledger.settle({ reservation_id: a.req.reservation_id, outcome: { kind: 'measured', actual: new Map([['units', 4n]]) }, at: NOW() }), 'invalid_request');
      const outcome = { kind: 'measured' as const, actual: new Map([['units', 1n]]) };
      await store.ledger.settle({ reservation_id: a.req.reservation_id, outcome, at: NOW() });
      expect((await store.ledger.settle({ reservation_id: a.req.reservation_id, outcome, at: NOW() })).status).toBe('settled');
      await expectCodeAsync(store.ledger.settle({ reservation_id: a.req.reservation_id, outcome: { kind: 'not_dispatched' }, at: NOW() }), 'invalid_request');
      expect(await a.units()).toMatchObject({ reserved: '0', consumed: '1' });

      const space = freshSpace();
      await publishAgent(store, space);
      const c = await chain(store, space);
      const consumed = await admission(store, space, [c.root, c.child, c.leaf], c.leaf, { units: 1n }, 'consume');
      expect((await store.ledger.admit(consumed)).status).toBe('consumed');
      await expectCodeAsync(store.ledger.settle({ reservation_id: consumed.reservation_id, outcome: { kind: 'not_dispatched' }, at: NOW() }), 'invalid_request');
      await store.close();
    });

    it('held_only settles a held reservation, and refuses any other with conflict not_held, writing nothing of the request', async () => {
      const store = await make();
      const a = await held(store);
      const receipt = (tag: string) =>
        sealRecord({ type: 'verification_receipt', issuedBy: actor, lifecycle: 'recorded', body: { tag } }, { ids: randomIds, clock: systemClock });
      const first = receipt('first');
      const outcome = { kind: 'measured' as const, actual: new Map([['units', 3n]]) };
      expect((await store.ledger.settle({ reservation_id: a.req.reservation_id, outcome, at: NOW(), records: [first], held_only: true })).status).toBe('settled');
      expect(await store.getRecord(first.record_id, first.revision_id)).toBeDefined();
      // Settled now: the same settlement again (a replay without held_only is a no-op) is refused, and its record not kept.
      const late = receipt('late');
      const err = await expectCodeAsync(store.ledger.settle({ reservation_id: a.req.reservation_id, outcome, at: NOW(), records: [late], held_only: true }), 'invalid_request');
      expect(err.details).toMatchObject({ conflict: 'not_held', reservation_id: a.req.reservation_id });
      expect(err.message).toBe('reservation is no longer held');
      expect(await store.getRecord(late.record_id, late.revision_id)).toBeUndefined();
      // Unknown is not held either: only reconciliation leaves it (ADR-0014).
      const b = await held(store);
      await store.ledger.settle({ reservation_id: b.req.reservation_id, outcome: { kind: 'unknown' }, at: NOW() });
      const e2 = await expectCodeAsync(store.ledger.settle({ reservation_id: b.req.reservation_id, outcome, evidence: evidence(), at: NOW(), held_only: true }), 'invalid_request');
      expect(e2.details.conflict).toBe('not_held');
      expect((await store.ledger.reservation(b.req.reservation_id))?.status).toBe('unknown');
      expect(await b.units()).toMatchObject({ reserved: '3', consumed: '0' });
      await store.close();
    });

    it('fences: settles while they hold; once a fenced head moved it refuses with conflict fences_moved, writing nothing (RW-003 §1.2)', async () => {
      const store = await make();
      const terminal = (req: { attempt_scope: ReturnType<typeof attemptScope> }) => ({ event_type: 'rw003.execution.terminal' as const, control_scope_ref: req.attempt_scope, actor_ref: actor });
      const note = (n: number) => sealRecord({ type: 'verification_receipt', body: { n }, issuedBy: actor, lifecycle: 'recorded' }, { ids: randomIds, clock: systemClock });
      const outcome = { kind: 'measured' as const, actual: new Map([['units', 3n]]) };
      const a = await held(store);
      const first = note(1);
      const settled = await store.ledger.settle({ reservation_id: a.req.reservation_id, outcome, at: NOW(), records: [first], events: [terminal(a.req)], fences: { fence_set: a.req.fence_set, scopes: a.req.scopes } });
      expect(settled.status).toBe('settled');
      expect(await store.getRecord(first.record_id)).toBeDefined();
      expect((await store.control.readStream(streamOf(a.req.attempt_scope))).map((e) => e.event_type)).toEqual(['rw003.permission.evaluated', 'rw003.execution.terminal']);
      // Fences with no audit event riding along.
      const c = await held(store);
      expect((await store.ledger.settle({ reservation_id: c.req.reservation_id, outcome, at: NOW(), fences: { fence_set: c.req.fence_set, scopes: c.req.scopes } })).status).toBe('settled');

      const b = await held(store);
      // The agent's stream moves after admission (a card event): the fence b was admitted under is stale.
      await store.control.appendControl({ event_type: 'rw003.agent_card.published', control_scope_ref: b.req.scopes[0]!, actor_ref: actor });
      const second = note(2);
      const err = await expectCodeAsync(
        store.ledger.settle({ reservation_id: b.req.reservation_id, outcome, at: NOW(), records: [second], events: [terminal(b.req)], fences: { fence_set: b.req.fence_set, scopes: b.req.scopes } }),
        'context_invalidated',
      );
      expect(err.details).toMatchObject({ conflict: 'fences_moved', failures: [{ branch_id: streamOf(b.req.scopes[0]!).branch_id, reason: 'head_moved' }] });
      expect(err.message).toBe('a control fence moved before the verdict committed');
      expect(await store.getRecord(second.record_id)).toBeUndefined();
      expect((await store.control.readStream(streamOf(b.req.attempt_scope))).map((e) => e.event_type)).toEqual(['rw003.permission.evaluated']);
      expect((await store.ledger.reservation(b.req.reservation_id))?.status).toBe('held');
      expect(await b.units()).toMatchObject({ reserved: '3', consumed: '0' });
      await store.close();
    });
  });

  describe(`${name}: ledger invariants (model-based)`, () => {
    it('balances stay in [0, ceiling], match the model, and each reservation resolves once', async () => {
      const store = await make();
      const op = fc.oneof(
        fc.record({ t: fc.constant('admit' as const), node: fc.constantFrom(0 as const, 1 as const, 2 as const), n: fc.integer({ min: 1, max: 4 }), consume: fc.boolean() }),
        fc.record({ t: fc.constant('settle' as const), pick: fc.nat(), how: fc.constantFrom('released' as const, 'measured' as const, 'unknown' as const), frac: fc.integer({ min: 0, max: 100 }) }),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 25 }), async (ops) => {
          const space = freshSpace();
          await publishAgent(store, space);
          const c = await chain(store, space, { root: 8n, child: 6n, leaf: 4n });
          const ids = [c.root, c.child, c.leaf];
          const ceil = [8, 6, 4];
          const model = { consumed: [0, 0, 0], reserved: [0, 0, 0] };
          const open: Array<{ id: string; upto: number; n: number; unknown: boolean }> = [];
          for (const o of ops) {
            if (o.t === 'admit') {
              const fits = ids.slice(0, o.node + 1).every((_, i) => model.consumed[i]! + model.reserved[i]! + o.n <= ceil[i]!);
              const req = await admission(store, space, ids.slice(0, o.node + 1), ids[o.node]!, { units: BigInt(o.n) }, o.consume ? 'consume' : 'reserve');
              if (!fits) {
                await expectCodeAsync(store.ledger.admit(req), 'limit_exceeded');
                continue;
              }
              await store.ledger.admit(req);
              for (let i = 0; i <= o.node; i++) (o.consume ? model.consumed : model.reserved)[i]! += o.n;
              if (!o.consume) open.push({ id: req.reservation_id, upto: o.node, n: o.n, unknown: false });
            } else if (open.length > 0) {
              const r = open[o.pick % open.length]!;
              const actual = Math.floor((r.n * o.frac) / 100);
              const outcome = o.how === 'released' ? { kind: 'not_dispatched' as const } : o.how === 'unknown' ? { kind: 'unknown' as const } : { kind: 'measured' as const, actual: new Map([['units', BigInt(actual)]]) };
              if (r.unknown && o.how !== 'unknown') {
                await expectCodeAsync(store.ledger.settle({ reservation_id: r.id, outcome, at: NOW() }), 'invalid_request');
                continue;
              }
              await store.ledger.settle({ reservation_id: r.id, outcome, at: NOW() });
              if (o.how === 'unknown') {
                r.unknown = true;
                continue;
              }
              for (let i = 0; i <= r.upto; i++) {
                model.reserved[i]! -= r.n;
                if (o.how === 'measured') model.consumed[i]! += actual;
              }
              open.splice(open.indexOf(r), 1);
              // The same settlement again is a no-op; any other one is refused.
              await store.ledger.settle({ reservation_id: r.id, outcome, at: NOW() });
              const other = o.how === 'released' ? { kind: 'measured' as const, actual: new Map([['units', 0n]]) } : { kind: 'not_dispatched' as const };
              await expectCodeAsync(store.ledger.settle({ reservation_id: r.id, outcome: other, evidence: evidence(), at: NOW() }), 'invalid_request');
            }
          }
          let node = await store.ledger.tree(c.root);
          for (let i = 0; i < 3; i++) {
            const units = node!.balances.find((b) => b.dimension === 'units')!;
            expect({ consumed: Number(units.consumed), reserved: Number(units.reserved) }).toEqual({ consumed: model.consumed[i], reserved: model.reserved[i] });
            expect(Number(units.consumed) + Number(units.reserved)).toBeLessThanOrEqual(ceil[i]!);
            node = node!.children[0];
          }
        }),
        { numRuns: 15 },
      );
      await store.close();
    });
  });
}

