/**
 * The task-admission contract (both adapters): a new task's budget nodes and
 * its admission commit in one transaction or not at all; the preset limits
 * are counted from the store; and the attempt work queue leases what an
 * admission inserted until its verdict deletes it.
 */
import { describe, expect, it } from 'vitest';
import { randomIds } from '../../../src/records/ids.ts';
import type { Store } from '../../../src/store/port.ts';
import { expectCodeAsync } from '../../helpers/errors.ts';
import { actor, agentScope, FAR, freshSpace, NOW, presetTask, publishAgent, taskAdmission } from './fixtures.ts';
import type { MakeStore } from './contract.ts';

const preset = (over: Partial<{ max_active_roots: number; max_per_minute: number }> = {}) => ({ preset_id: randomIds.next('preset'), max_active_roots: 100, max_per_minute: 1000, ...over });

async function space(store: Store): Promise<string> {
  const s = freshSpace();
  await publishAgent(store, s);
  return s;
}

export function taskContract(name: string, make: MakeStore): void {
  describe(`${name}: task admission in one transaction`, () => {
    it('a refused admission (stale fence) leaves no root, no node and no preset capacity taken', async () => {
      const store = await make();
      const s = await space(store);
      const p = preset({ max_active_roots: 1 });
      const stale = presetTask(store, s, p, { staleFence: true });
      await expectCodeAsync(stale.run(), 'context_invalidated');
      expect(await store.ledger.node(stale.root)).toBeUndefined();
      expect(await store.getRecord(stale.root)).toBeUndefined();
      // The one slot of this preset is still free.
      const ok = presetTask(store, s, p);
      await expect(ok.run()).resolves.toMatchObject({ status: 'held' });
      expect(await store.ledger.node(ok.root)).toMatchObject({ node_id: ok.root, depth: 0 });
      await store.close();
    });

    it('counts a preset\'s active roots from the store; a settled root gives its slot back', async () => {
      const store = await make();
      const s = await space(store);
      const p = preset({ max_active_roots: 2 });
      const a = presetTask(store, s, p);
      const ra = await a.run();
      await presetTask(store, s, p).run();
      const refused = await expectCodeAsync(presetTask(store, s, p).run(), 'limit_exceeded');
      expect(refused.details).toMatchObject({ bound: 'active_roots', preset: p.preset_id });
      await store.ledger.settle({ reservation_id: ra.reservation_id, outcome: { kind: 'not_dispatched' }, at: NOW(), ends_follow: a.effect });
      await expect(presetTask(store, s, p).run()).resolves.toMatchObject({ status: 'held' });
      // Another preset is counted on its own.
      await expect(presetTask(store, s, preset({ max_active_roots: 1 })).run()).resolves.toMatchObject({ status: 'held' });
      await store.close();
    });

    it('counts a preset\'s issuance per minute from the store, settled roots included', async () => {
      const store = await make();
      const s = await space(store);
      const p = preset({ max_per_minute: 3 });
      for (let i = 0; i < 3; i++) {
        const t = presetTask(store, s, p);
        const r = await t.run();
        await store.ledger.settle({ reservation_id: r.reservation_id, outcome: { kind: 'not_dispatched' }, at: NOW(), ends_follow: t.effect });
      }
      const refused = await expectCodeAsync(presetTask(store, s, p).run(), 'limit_exceeded');
      expect(refused.details).toMatchObject({ bound: 'issuance_rate' });
      await store.close();
    });
  });

  describe(`${name}: a new task's claims, counted with its root's capacity`, () => {
    // The capacity statement of the new root also counts the reservations holding the admission's ids
    // (capacity.ts rootCapacitySql, issue #24): a taken id is still refused by name, and nothing is left.
    it('an effect id or a reservation id already taken is refused by name, and the new root is not kept', async () => {
      const store = await make();
      const s = await space(store);
      const first = presetTask(store, s, preset());
      const admitted = await first.run();
      const fence = [...(await store.control.fenceSet([agentScope(s)]))];
      const fresh = () => ({ space_id: s, owner_namespace: `ns-${s}`, actor_ref: actor, at: NOW(), node_id: randomIds.next('dlg'), not_after: FAR, dimensions: [{ name: 'units', unit: 'admission', ceiling: 5n }], preset: preset() });
      const sameEffect = fresh();
      const reused = await expectCodeAsync(store.ledger.admitTask(await taskAdmission(store, s, [sameEffect], fence, sameEffect.node_id, { effect: first.effect })), 'invalid_request');
      expect([reused.message, reused.details]).toStrictEqual(['effect id reused with different content', { effect_id: first.effect }]);
      const sameReservation = fresh();
      const req = await taskAdmission(store, s, [sameReservation], fence, sameReservation.node_id);
      const taken = await expectCodeAsync(store.ledger.admitTask({ ...req, admission: { ...req.admission, reservation_id: admitted.reservation_id } }), 'invalid_request');
      expect([taken.message, taken.details]).toStrictEqual(['reservation id already used', { reservation_id: admitted.reservation_id }]);
      expect([await store.ledger.node(sameEffect.node_id), await store.ledger.node(sameReservation.node_id)]).toStrictEqual([undefined, undefined]);
      // Neither id taken: admitted.
      const ok = fresh();
      await expect(store.ledger.admitTask(await taskAdmission(store, s, [ok], fence, ok.node_id))).resolves.toMatchObject({ status: 'held', replayed: false });
      await store.close();
    });
  });

  describe(`${name}: the attempt work queue`, () => {
    it('an admission inserts its follow-up leased to its node; the verdict\'s settlement deletes it', async () => {
      const store = await make();
      const s = await space(store);
      const t = presetTask(store, s, preset());
      const r = await t.run();
      const row = await store.work.get(t.effect);
      expect(row).toMatchObject({ effect_id: t.effect, reservation_id: r.reservation_id, lease_owner: 'node_test', tries: 0 });
      await store.ledger.settle({ reservation_id: r.reservation_id, outcome: { kind: 'not_dispatched' }, at: NOW(), ends_follow: t.effect });
      expect(await store.work.get(t.effect)).toBeUndefined();
      await store.close();
    });

    it('a reservation leaving held ends its follow-up in the statement that resolves it (migration 20), unknown included', async () => {
      const store = await make();
      const s = await space(store);
      for (const kind of ['not_dispatched', 'unknown'] as const) {
        const t = presetTask(store, s, preset());
        const r = await t.run();
        const other = presetTask(store, s, preset());
        await other.run();
        // No ends_follow: the resolution alone ends it; another effect's follow-up is left as it is.
        await store.ledger.settle({ reservation_id: r.reservation_id, outcome: { kind }, at: NOW() });
        expect(await store.work.get(t.effect), kind).toBeUndefined();
        expect(await store.work.get(other.effect), kind).toMatchObject({ effect_id: other.effect });
      }
      await store.close();
    });

    it('a lapsed lease is claimed by exactly one node, renewed only by its owner, and handed back due later', async () => {
      const store = await make();
      const s = await space(store);
      const t = presetTask(store, s, preset());
      await t.run(); // leased until "now": lapsed at once
      const later = new Date(Date.now() + 60_000).toISOString();
      const claims = await Promise.all(['node_a', 'node_b', 'node_c'].map((n) => store.work.claim(n, NOW(), later, 100, 'actor_gw')));
      const mine = claims.flat().filter((w) => w.effect_id === t.effect);
      expect(mine).toHaveLength(1);
      const owner = mine[0]!.lease_owner!;
      expect(mine[0]!.tries).toBe(1);
      expect(await store.work.renew(t.effect, 'someone_else', later)).toBe(false);
      expect(await store.work.renew(t.effect, owner, later)).toBe(true);
      // Held: nobody else can claim it, not even as idle.
      expect((await store.work.claim('node_d', NOW(), later, 100, 'actor_gw')).some((w) => w.effect_id === t.effect)).toBe(false);
      expect(await store.work.claimIdle(t.effect, 'node_d', later)).toBeUndefined();
      // Handed back due in a minute: not claimable by time yet, but a wake-up may take it at once.
      expect(await store.work.release(t.effect, owner, later)).toBe(true);
      expect((await store.work.claim('node_d', NOW(), later, 100, 'actor_gw')).some((w) => w.effect_id === t.effect)).toBe(false);
      expect(await store.work.claimIdle(t.effect, 'node_d', later)).toMatchObject({ lease_owner: 'node_d', tries: 2 });
      await store.close();
    });

    it("gateways sharing the store follow and sweep only their own gateway's turns (and rows that name none)", async () => {
      const store = await make();
      const s = await space(store);
      const a = presetTask(store, s, preset(), { gateway: 'actor_baton_a' });
      const legacy = presetTask(store, s, preset());
      await a.run();
      await legacy.run();
      const later = new Date(Date.now() + 60_000).toISOString();
      const ids = (rows: Array<{ effect_id: string }>) => rows.map((w) => w.effect_id).filter((e) => e === a.effect || e === legacy.effect).sort();
      expect(ids(await store.work.list(100, 'actor_baton_b'))).toEqual([legacy.effect]);
      expect(ids(await store.work.claim('node_b', NOW(), later, 100, 'actor_baton_b'))).toEqual([legacy.effect]);
      expect(await store.work.get(a.effect)).toMatchObject({ gateway_id: 'actor_baton_a', lease_owner: 'node_test' });
      expect(ids(await store.work.list(100, 'actor_baton_a'))).toEqual([a.effect, legacy.effect].sort());
      expect(ids(await store.work.claim('node_a', NOW(), later, 100, 'actor_baton_a'))).toEqual([a.effect]);
      await store.close();
    });
  });
}
