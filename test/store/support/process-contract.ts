/**
 * Races and crashes with real OS processes on one ledger: the ADR-0014
 * confirmation checks, run against SQLite and PostgreSQL alike.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/port.ts';
import { actor, chain, delegationScope, freshSpace, presetTask, publishAgent } from './fixtures.ts';
import { expectCodeAsync } from '../../helpers/errors.ts';
import { runRacers, startRacers, startWorker } from './processes.ts';

export interface Ledger {
  kind: 'sqlite' | 'pg';
  where: string;
  open(): Promise<Store>;
}

/** Upper bound of tries per worker in the revocation race; workers stop soon after the revocation. */
const TRIES = 5000;

const unitsOf = async (store: Store, root: string) => (await store.ledger.tree(root))!.balances.find((b) => b.dimension === 'units')!;

async function expectConsistent(store: Store, root: string): Promise<void> {
  const audit = await store.ledger.balanceAudit(root);
  expect(audit.length).toBeGreaterThan(0);
  expect(audit.filter((a) => !a.consistent)).toEqual([]);
}

export function processContract(name: string, setup: () => Promise<Ledger>): void {
  describe(`${name}: several processes on one ledger`, () => {
    it('4 processes racing for the last units of one root are granted exactly the budget', async () => {
      const ledger = await setup();
      const store = await ledger.open();
      const space = freshSpace();
      await publishAgent(store, space);
      // Large enough that one process cannot drain it before the others wake from the barrier.
      const c = await chain(store, space, { root: 400n });
      const ids = JSON.stringify([c.root, c.child, c.leaf]);
      const results = await runRacers(4, ['race', ledger.kind, ledger.where, space, ids, '1000']);
      const granted = results.map((r) => r.granted as number);
      expect(granted.reduce((a, b) => a + b, 0)).toBe(400);
      // They really raced: every process was trying while every other one was. (Which of them wins
      // units is SQLite's busy handler's business: a writer in a tight loop may legitimately starve
      // the others, which made "more than one was granted" flaky.)
      const from = Math.max(...results.map((r) => r.from as number));
      const to = Math.min(...results.map((r) => r.to as number));
      expect(from).toBeLessThan(to);
      expect(await unitsOf(store, c.root)).toMatchObject({ reserved: '400', consumed: '0' });
      await expectConsistent(store, c.root);
      await store.close();
    }, 120_000);

    /** 4 processes each opening `tries` tasks under one preset; returns the store, the space and their totals. */
    async function presetRace(over: { max_active_roots: number; max_per_minute: number }, tries: number) {
      const ledger = await setup();
      const store = await ledger.open();
      const space = freshSpace();
      await publishAgent(store, space);
      const preset = { preset_id: `preset-${space}`, ...over };
      const workers = await startRacers(4, ['preset', ledger.kind, ledger.where, space, JSON.stringify(preset), String(tries)]);
      // Each keeps opening tasks until told to stop, which happens once every one of them is opening tasks.
      await Promise.all(workers.map((w) => w.next()));
      for (const w of workers) w.go();
      const results = await Promise.all(workers.map((w) => w.next()));
      const codes = await Promise.all(workers.map((w) => w.exited));
      if (codes.some((c) => c !== 0)) throw new Error(`a racer failed: ${codes.join(', ')}`);
      // They really raced: every process was opening tasks while every other one was.
      expect(Math.max(...results.map((r) => r.from as number))).toBeLessThan(Math.min(...results.map((r) => r.to as number)));
      for (const r of results) expect((r.admitted as number) + (r.refused as number)).toBeGreaterThanOrEqual(tries);
      const admitted = results.reduce((a, r) => a + (r.admitted as number), 0);
      const refused = results.reduce((a, r) => a + (r.refused as number), 0);
      return { ledger, store, space, preset, admitted, refused };
    }

    it('4 processes opening tasks under one preset are admitted exactly its active-root limit, and a restart re-grants nothing', async () => {
      // Many tries each, so every process's contention window is long enough to overlap the others' on a loaded machine.
      const race = await presetRace({ max_active_roots: 5, max_per_minute: 10_000 }, 40);
      expect(race.admitted).toBe(5);
      expect(race.refused).toBeGreaterThanOrEqual(4 * 40 - 5);
      await race.store.close();
      // A restart (a fresh connection, a fresh process memory) still finds the limit reached.
      const again = await race.ledger.open();
      const refused = await expectCodeAsync(presetTask(again, race.space, race.preset).run(), 'limit_exceeded');
      expect(refused.details).toMatchObject({ bound: 'active_roots' });
      await again.close();
    }, 120_000);

    it('4 processes under one preset\'s per-minute rate are admitted exactly that many roots', async () => {
      const race = await presetRace({ max_active_roots: 1000, max_per_minute: 10 }, 30);
      expect(race.admitted).toBe(10);
      const refused = await expectCodeAsync(presetTask(race.store, race.space, race.preset).run(), 'limit_exceeded');
      expect(refused.details).toMatchObject({ bound: 'issuance_rate' });
      await race.store.close();
    }, 120_000);

    it('a revocation appended while processes admit lets no effect commit against the stale fence', async () => {
      const ledger = await setup();
      const store = await ledger.open();
      const space = freshSpace();
      await publishAgent(store, space);
      const c = await chain(store, space, { root: 100_000n });
      const ids = JSON.stringify([c.root, c.child, c.leaf]);
      const workers = await startRacers(4, ['fenced', ledger.kind, ledger.where, space, ids, String(TRIES)]);
      // Every racer reports once it has been granted a few admissions: the revocation lands mid-run.
      expect((await Promise.all(workers.map((w) => w.next()))).every((m) => m.progress === 5)).toBe(true);
      const revoked = await store.control.appendControl({ event_type: 'rw003.delegation.revoked', control_scope_ref: delegationScope(space, c.child), actor_ref: actor });
      const revokedAt = Date.now();
      const results = await Promise.all(workers.map((w) => w.next()));
      const granted = results.reduce((a, r) => a + (r.granted as number), 0);
      const late = results.flatMap((r) => r.starts as number[]).filter((t) => t > revokedAt);
      expect(late).toEqual([]);
      expect(granted).toBeGreaterThan(0);
      expect(granted).toBeLessThan(4 * TRIES); // the revocation, not the bound, ended the run
      expect(Number((await unitsOf(store, c.root)).reserved)).toBe(granted);
      for (const r of await store.ledger.unresolved(10_000)) {
        if (!r.chain.includes(c.child)) continue;
        const stored = await store.ledger.reservation(r.reservation_id);
        expect(stored?.status).toBe('held');
      }
      expect(revoked.position).toBeGreaterThan(1);
      await Promise.all(workers.map((w) => w.exited));
      await expectConsistent(store, c.root);
      await store.close();
    }, 120_000);

    it('kill -9 between reserve and dispatch: the reservation survives, held, nothing released', async () => {
      const ledger = await setup();
      let store = await ledger.open();
      const space = freshSpace();
      await publishAgent(store, space);
      const c = await chain(store, space, { root: 10n });
      const w = startWorker(['hold', ledger.kind, ledger.where, space, JSON.stringify([c.root, c.child, c.leaf])]);
      const { reserved } = (await w.next()) as { reserved: string };
      w.child.kill('SIGKILL');
      expect(await w.exited).toBe('SIGKILL');
      await store.close();
      store = await ledger.open(); // a restarted gateway
      expect((await store.ledger.reservation(reserved))?.status).toBe('held');
      expect(await unitsOf(store, c.root)).toMatchObject({ reserved: '2', consumed: '0' });
      await expectConsistent(store, c.root);
      await store.close();
    }, 60_000);

    it('kill -9 after dispatch: the effect happened once and its reservation stays held', async () => {
      const ledger = await setup();
      let store = await ledger.open();
      const space = freshSpace();
      await publishAgent(store, space);
      const c = await chain(store, space, { root: 10n });
      const seen: string[] = [];
      const receiver = createServer((req, res) => {
        let body = '';
        req.on('data', (d) => (body += d));
        req.on('end', () => (seen.push(body), res.end('ok')));
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/effect`;
      const w = startWorker(['dispatch', ledger.kind, ledger.where, space, JSON.stringify([c.root, c.child, c.leaf]), url]);
      const { reserved, effect } = (await w.next()) as { reserved: string; effect: string };
      await w.next(); // dispatched
      w.child.kill('SIGKILL');
      await w.exited;
      receiver.close();
      await store.close();
      store = await ledger.open();
      expect(seen).toEqual([effect]);
      expect((await store.ledger.reservation(reserved))?.status).toBe('held');
      expect(await unitsOf(store, c.root)).toMatchObject({ reserved: '2' });
      await store.close();
    }, 60_000);

    it('kill -9 in the middle of admit/settle churn leaves balances equal to the journal', async () => {
      const ledger = await setup();
      let store = await ledger.open();
      const space = freshSpace();
      await publishAgent(store, space);
      const c = await chain(store, space, { root: 1_000_000n });
      const w = startWorker(['churn', ledger.kind, ledger.where, space, JSON.stringify([c.root, c.child, c.leaf])]);
      await w.next(); // ready
      expect(await w.next()).toEqual({ settled: 5 }); // the churn is under way; it keeps going until killed
      w.child.kill('SIGKILL');
      await w.exited;
      await store.close();
      store = await ledger.open();
      const units = await unitsOf(store, c.root);
      expect(Number(units.consumed)).toBeGreaterThan(0);
      expect(Number(units.reserved)).toBeLessThanOrEqual(1); // at most the one in flight
      await expectConsistent(store, c.root);
      await store.close();
    }, 60_000);
  });
}
