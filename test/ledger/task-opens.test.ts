/**
 * A task admission writes the nodes it opens together, one statement per
 * table, at the first read that needs them (src/store/tx/batch.ts
 * writeNodes, issue #24) — and every ADR-0014 bound still counts each node
 * the same transaction opened before it: the descendants of a root opened
 * here (counted in memory), a second root's active-root count, the
 * admission's retained-records count, and the balances of a chain opened
 * here (known, not read again). Real SQLite.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LEDGER_LIMITS, type LedgerLimits, type OpenBudgetRequest } from '../../src/ledger/types.ts';
import { randomIds } from '../../src/records/ids.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { expectCodeAsync } from '../helpers/errors.ts';
import { actor, agentScope, FAR, freshSpace, NOW, publishAgent, taskAdmission } from '../store/support/fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-opens-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const open = (limits: Partial<LedgerLimits> = {}) => SqliteStore.open(join(dir, `o${++n}.db`), { create: true, limits: { ...LEDGER_LIMITS, ...limits } });
const units = (ceiling: bigint) => [{ name: 'units', unit: 'admission', ceiling }];

async function world(limits: Partial<LedgerLimits>) {
  const store = open(limits);
  const space = freshSpace();
  await publishAgent(store, space);
  const base = { space_id: space, owner_namespace: `ns-${space}`, actor_ref: actor, at: NOW(), not_after: FAR };
  /** One admission transaction opening `budgets`, reserving `amount` on `leaf`. */
  const task = async (budgets: OpenBudgetRequest[], leaf: string, amount = 1n, at = NOW(), kind: 'reserve' | 'consume' = 'reserve') => {
    const fence = [...(await store.control.fenceSet([agentScope(space)]))];
    return taskAdmission(store, space, budgets, fence, leaf, { amounts: { units: amount }, at, kind }).then((r) => store.ledger.admitTask(r));
  };
  const root = (ceiling = 5n): OpenBudgetRequest => ({ ...base, node_id: randomIds.next('dlg'), dimensions: units(ceiling) });
  const child = (parent: string, ceiling = 2n): OpenBudgetRequest => ({ ...base, node_id: randomIds.next('dlg'), parent_id: parent, dimensions: units(ceiling) });
  return { store, base, task, root, child };
}

describe('nodes a task admission opens', () => {
  it('a root opened in the transaction counts the children opened under it there: the second child over maxDescendants 1 is refused, nothing stays', async () => {
    const w = await world({ maxDescendants: 1 });
    const r = w.root();
    const [a, b] = [w.child(r.node_id), w.child(r.node_id)];
    const err = await expectCodeAsync(w.task([r, a, b], b.node_id), 'limit_exceeded');
    expect([err.message, err.details]).toStrictEqual(['root has the maximum number of descendants', { max: 1 }]);
    for (const id of [r.node_id, a.node_id, b.node_id]) expect(await w.store.ledger.tree(id)).toBeUndefined();
    // One child is within the bound: admitted, both nodes and their balances written.
    const r2 = w.root();
    const c2 = w.child(r2.node_id);
    await expect(w.task([r2, c2], c2.node_id)).resolves.toMatchObject({ status: 'held', chain: [r2.node_id, c2.node_id] });
    expect((await w.store.ledger.tree(r2.node_id))?.balances).toStrictEqual([{ dimension: 'units', ceiling: '5', consumed: '0', reserved: '1' }]);
    await w.store.close();
  });

  it('a second root opened in the same transaction counts the first against maxActiveRoots', async () => {
    const w = await world({ maxActiveRoots: 1 });
    const [first, second] = [w.root(), w.root()];
    const err = await expectCodeAsync(w.task([first, second], second.node_id), 'limit_exceeded');
    expect([err.message, err.details]).toStrictEqual(['owner namespace has the maximum number of active roots', { max: 1 }]);
    await w.store.close();
  });

  it('the retained-records count of the admission includes the nodes the transaction opened', async () => {
    const tight = await world({ maxRetainedRecords: 2 });
    const r = tight.root();
    const c = tight.child(r.node_id);
    const err = await expectCodeAsync(tight.task([r, c], c.node_id), 'limit_exceeded');
    expect([err.message, err.details]).toStrictEqual(['owner namespace holds the maximum number of retained records', { max: 2 }]);
    await tight.store.close();
    const room = await world({ maxRetainedRecords: 3 });
    const r3 = room.root();
    const c3 = room.child(r3.node_id);
    await expect(room.task([r3, c3], c3.node_id)).resolves.toMatchObject({ status: 'held' });
    await room.store.close();
  });

  it('the retained count adds only the unexpired nodes of new roots in the admission\'s namespace, each once', async () => {
    // Another namespace's new root, opened after this chain (its own count wrote this chain's live-root row first).
    const w = await world({ maxRetainedRecords: 3 });
    const r = w.root();
    const c = w.child(r.node_id);
    const elsewhere = { ...w.root(), owner_namespace: 'ns-elsewhere' };
    await expect(w.task([r, c, elsewhere], c.node_id)).resolves.toMatchObject({ status: 'held' });
    await w.store.close();
    // A child expiring exactly at the admission is not retained: the admission is refused as expired, not as full.
    const x = await world({ maxRetainedRecords: 2 });
    const T = '2030-01-01T00:00:00.000Z';
    const before = { at: '2029-01-01T00:00:00.000Z' };
    const xr = { ...x.root(), ...before };
    const xc = { ...x.child(xr.node_id), ...before, not_after: T };
    expect((await expectCodeAsync(x.task([xr, xc], xc.node_id, 1n, T), 'context_invalidated')).details).toStrictEqual({ reason: 'expired', node_id: xc.node_id });
    await x.store.close();
  });

  it('at one instant for the whole transaction, the root\'s capacity count carries forward to the admission\'s, exact at the bound', async () => {
    // The path opens a task's nodes at the admission's instant (path/admit.ts), and the admission then adds to the
    // count its root's capacity statement read instead of counting again (TxBatch.retainedNow); each case is
    // also run with the nodes opened a moment earlier, where the admission counts again.
    for (const oneInstant of [true, false]) {
      const T = NOW();
      const later = (b: OpenBudgetRequest) => ({ ...b, at: oneInstant ? T : '2026-01-01T00:00:00.000Z' });
      // One task already holds a root, a child and an unresolved reservation (3 retained); a second opens two more: 5.
      for (const [max, admitted] of [[5, false], [6, true]] as const) {
        const w = await world({ maxRetainedRecords: max });
        const r1 = w.root();
        await w.task([r1, w.child(r1.node_id)].map(later), r1.node_id, 1n, T);
        const r = w.root();
        const c = w.child(r.node_id);
        const second = w.task([r, c].map(later), c.node_id, 1n, T);
        if (admitted) await expect(second, `max ${max}, one instant ${oneInstant}`).resolves.toMatchObject({ status: 'held' });
        else expect((await expectCodeAsync(second, 'limit_exceeded')).details, `max ${max}, one instant ${oneInstant}`).toStrictEqual({ max });
        await w.store.close();
      }
      // Nodes of another namespace opened in the same transaction are not counted (its root first, its child last)…
      const w = await world({ maxRetainedRecords: 3 });
      const r = w.root();
      const elsewhere = { ...w.root(), owner_namespace: 'ns-elsewhere' };
      const opened = [elsewhere, r, w.child(r.node_id), { ...w.child(elsewhere.node_id), owner_namespace: 'ns-elsewhere' }];
      await expect(w.task(opened.map(later), r.node_id, 1n, T), `one instant ${oneInstant}`).resolves.toMatchObject({ status: 'held' });
      await w.store.close();
      // …nor a child opened under a stored root that is no longer live (its one effect consumed outright): only the store knows that.
      const s = await world({ maxRetainedRecords: 2 });
      const settled = s.root();
      await s.task([settled].map(later), settled.node_id, 1n, T, 'consume');
      const fresh = s.root();
      const under = s.child(settled.node_id);
      await expect(s.task([fresh, under].map(later), fresh.node_id, 1n, T), `one instant ${oneInstant}`).resolves.toMatchObject({ status: 'held' });
      await s.store.close();
      // A root of the same namespace opened earlier in the transaction is counted once: by the second root's count.
      const twice = await world({ maxRetainedRecords: 4 });
      const r2 = twice.root();
      const c2 = twice.child(r2.node_id);
      await expect(twice.task([twice.root(), r2, c2].map(later), c2.node_id, 1n, T), `one instant ${oneInstant}`).resolves.toMatchObject({ status: 'held' });
      await twice.store.close();
      const x = await world({ maxRetainedRecords: 2 });
      const xr = { ...x.root(), at: T };
      const xc = { ...x.child(xr.node_id), at: T, not_after: T };
      expect((await expectCodeAsync(x.task([xr, xc].map(later), xc.node_id, 1n, T), 'context_invalidated')).details, `one instant ${oneInstant}`).toStrictEqual({ reason: 'expired', node_id: xc.node_id });
      await x.store.close();
    }
  });

  it('a count read at another instant is not carried forward: what expired in between is not counted', async () => {
    // A chain admitted early in 2026 that expires mid-year still holds its unresolved reservation, and nothing else.
    const w = await world({ maxRetainedRecords: 4 });
    const early = '2026-01-01T00:00:00.000Z';
    const r1 = { ...w.root(), at: early, not_after: '2026-06-01T00:00:00.000Z' };
    await w.task([r1, { ...w.child(r1.node_id), at: early, not_after: '2026-06-01T00:00:00.000Z' }], r1.node_id, 1n, early);
    // Nodes opened at the early instant (when the chain was 3 retained records), admitted now (1): 1 + 2 new = 3 < 4.
    const r = { ...w.root(), at: early };
    const c = { ...w.child(r.node_id), at: early };
    await expect(w.task([r, c], c.node_id, 1n, NOW())).resolves.toMatchObject({ status: 'held' });
    await w.store.close();
  });

  it('a new root\'s live-root row is written by its admission: held, the root keeps its active-root slot; consumed outright, it frees it', async () => {
    for (const kind of ['reserve', 'consume'] as const) {
      const w = await world({ maxActiveRoots: 1 });
      const r = w.root();
      await expect(w.task([r], r.node_id, 1n, NOW(), kind)).resolves.toMatchObject({ status: kind === 'reserve' ? 'held' : 'consumed' });
      const next = w.root();
      if (kind === 'reserve') expect((await expectCodeAsync(w.task([next], next.node_id), 'limit_exceeded')).details).toStrictEqual({ max: 1 });
      else await expect(w.task([next], next.node_id)).resolves.toMatchObject({ status: 'held' });
      await w.store.close();
    }
  });

  it('a chain opened in the transaction is charged against the ceilings it was opened with', async () => {
    const w = await world({});
    const r = w.root(5n);
    const c = w.child(r.node_id, 2n);
    const err = await expectCodeAsync(w.task([r, c], c.node_id, 3n), 'limit_exceeded');
    expect(err.details).toStrictEqual({ failures: [{ node_id: c.node_id, dimension: 'units', requested: '3', available: '2' }] });
    await w.store.close();
  });

  it('a root opened in the transaction counts only its own children: another new root\'s child does not fill it (maxDescendants 1)', async () => {
    const w = await world({ maxDescendants: 1 });
    const [ra, rb] = [w.root(), w.root()];
    const [ca, cb] = [w.child(ra.node_id), w.child(rb.node_id)];
    await expect(w.task([ra, ca, rb, cb], cb.node_id)).resolves.toMatchObject({ status: 'held', chain: [rb.node_id, cb.node_id] });
    expect((await w.store.ledger.tree(ra.node_id))?.children.map((c) => c.node_id)).toStrictEqual([ca.node_id]);
    await w.store.close();
  });

  it('a stored root\'s descendants are counted in the store even when the transaction opened another root first', async () => {
    const w = await world({ maxDescendants: 1 });
    const stored = w.root();
    await w.store.ledger.openBudget(stored);
    await w.store.ledger.openBudget(w.child(stored.node_id));
    const fresh = w.root();
    const late = w.child(stored.node_id);
    const err = await expectCodeAsync(w.task([fresh, late], late.node_id), 'limit_exceeded');
    expect([err.message, err.details]).toStrictEqual(['root has the maximum number of descendants', { max: 1 }]);
    for (const id of [fresh.node_id, late.node_id]) expect(await w.store.ledger.tree(id)).toBeUndefined();
    await w.store.close();
  });
});
