/**
 * Rows read back from the store are checked with schemas (src/store/tx/rows.ts,
 * src/ledger/stored.ts): a row edited outside Baton is storage_error where it
 * is read, naming the column and never its value, and nothing is written on
 * the strength of it. Run against both stores; `tamper` runs one SQL statement
 * outside Baton, as an operator's hand or a damaged file would.
 */
import { describe, expect, it } from 'vitest';
import { streamOf } from '../../../src/control/scope.ts';
import type { Store } from '../../../src/store/port.ts';
import { expectCodeAsync } from '../../helpers/errors.ts';
import { admission, agentScope, chain, delegationScope, freshSpace, NOW, publishAgent } from './fixtures.ts';

export function rowContract(name: string, make: () => Promise<Store>, tamper: (sql: string) => Promise<void>): void {
  describe(`${name}: rows read back are checked`, () => {
    /** A store with a published agent, a three-node chain and an admission on its leaf, not yet made. */
    async function world(amounts?: Record<string, bigint>) {
      const store = await make();
      const space = freshSpace();
      await publishAgent(store, space);
      const c = await chain(store, space);
      return { store, space, c, req: await admission(store, space, [c.root, c.child, c.leaf], c.leaf, amounts) };
    }

    it('a reservation whose stored charges were edited is storage_error at its settlement, and nothing is settled or charged', async () => {
      const { store, c, req } = await world({ units: 2n });
      await store.ledger.admit(req);
      await tamper(`UPDATE ledger_reservations SET charged = '[{"node_id":"${c.leaf}","dimension":"units","consumed":"0","reserved":"two"}]' WHERE reservation_id = '${req.reservation_id}'`);
      const err = await expectCodeAsync(store.ledger.settle({ reservation_id: req.reservation_id, outcome: { kind: 'measured', actual: new Map([['units', 1n]]) }, at: NOW() }), 'storage_error');
      expect(err.details).toMatchObject({ column: 'charged' });
      expect(JSON.stringify(err.details)).not.toContain('two');
      expect((await store.ledger.reservation(req.reservation_id))?.status).toBe('held');
      expect((await store.ledger.tree(c.root))?.balances.find((b) => b.dimension === 'units')).toMatchObject({ consumed: '0', reserved: '2' });
      await store.close();
    });

    it.each([
      { column: 'chain', text: '"leaf"' },
      { column: 'amounts', text: '{"units":-1}' },
      { column: 'receipt', text: '{"decision_ref":{}}' },
    ])('a reservation whose $column JSON was edited is storage_error naming the column where the reservation is read', async ({ column, text }) => {
      const { store, req } = await world();
      await store.ledger.admit(req);
      await tamper(`UPDATE ledger_reservations SET ${column} = '${text}' WHERE reservation_id = '${req.reservation_id}'`);
      expect((await expectCodeAsync(store.ledger.reservation(req.reservation_id), 'storage_error')).details).toMatchObject({ column });
      await store.close();
    });

    it('a reservation whose chain was edited is storage_error at its settlement, before anything is charged', async () => {
      const { store, c, req } = await world();
      await store.ledger.admit(req);
      await tamper(`UPDATE ledger_reservations SET chain = '[]' WHERE reservation_id = '${req.reservation_id}'`);
      const err = await expectCodeAsync(store.ledger.settle({ reservation_id: req.reservation_id, outcome: { kind: 'not_dispatched' }, at: NOW() }), 'storage_error');
      expect(err.details).toMatchObject({ column: 'chain' });
      expect((await store.ledger.tree(c.root))?.balances.find((b) => b.dimension === 'units')).toMatchObject({ consumed: '0', reserved: '1' });
      await store.close();
    });

    it('a control head whose digest was damaged is storage_error for the fence read and for an admission fenced on it', async () => {
      const { store, space, c, req } = await world();
      const stream = streamOf(agentScope(space));
      await tamper(`UPDATE control_heads SET event_digest = 'sha256:damaged' WHERE project_id = '${stream.project_id}' AND branch_id = '${stream.branch_id}'`);
      const read = await expectCodeAsync(store.control.fenceSet([agentScope(space)]), 'storage_error');
      expect(read.details).toMatchObject({ read: 'heads', column: 'event_digest' });
      // Inside the admission's transaction the same row is read by the program's own primitive.
      const admitted = await expectCodeAsync(store.ledger.admit(req), 'storage_error');
      expect(admitted.details).toMatchObject({ read: 'streamHeads', column: 'event_digest' });
      expect(await store.ledger.reservation(req.reservation_id)).toBeUndefined();
      // Streams nobody damaged still read.
      expect((await store.control.fenceSet([delegationScope(space, c.root)])).length).toBe(1);
      await store.close();
    });

    it('a node whose issued-event boundary was edited is storage_error where the node is read', async () => {
      const store = await make();
      const space = freshSpace();
      const c = await chain(store, space);
      expect((await store.ledger.node(c.root))?.issued_event.position).toBe(1);
      await tamper(`UPDATE ledger_nodes SET issued_event = '{"position":1}' WHERE node_id = '${c.root}'`);
      const err = await expectCodeAsync(store.ledger.node(c.root), 'storage_error');
      expect(err.details).toMatchObject({ column: 'issued_event' });
      await store.close();
    });

    it('a replayed admission rebuilds its receipt from the row and its own request, also from a row an earlier build wrote with the whole receipt', async () => {
      const { store, req } = await world();
      const first = await store.ledger.admit(req);
      expect(first.fence_set.length).toBeGreaterThan(0);
      expect(await store.ledger.admit(req)).toStrictEqual({ ...first, replayed: true });
      // Before issue #24's slim row the column held the whole receipt: such rows replay, and settle, the same.
      await tamper(`UPDATE ledger_reservations SET receipt = '${JSON.stringify(first)}' WHERE reservation_id = '${req.reservation_id}'`);
      expect(await store.ledger.admit(req)).toStrictEqual({ ...first, replayed: true });
      expect((await store.ledger.reservation(req.reservation_id))?.decision_ref).toStrictEqual(first.decision_ref);
      await store.close();
    });

    it.each([
      { column: 'chain', text: '{}' },
      { column: 'amounts', text: '{"units":"one"}' },
    ])('a replayed admission whose stored $column was edited is storage_error naming it, not a receipt built from it', async ({ column, text }) => {
      const { store, req } = await world();
      await store.ledger.admit(req);
      await tamper(`UPDATE ledger_reservations SET ${column} = '${text}' WHERE reservation_id = '${req.reservation_id}'`);
      expect((await expectCodeAsync(store.ledger.admit(req), 'storage_error')).details).toMatchObject({ column });
      await store.close();
    });

    it('a replayed admission whose stored receipt was edited is storage_error, not the edited receipt', async () => {
      const { store, req } = await world();
      const first = await store.ledger.admit(req);
      expect(await store.ledger.admit(req)).toStrictEqual({ ...first, replayed: true });
      await tamper(`UPDATE ledger_reservations SET receipt = '{"effect_id":"${req.effect_id}","decision_ref":null}' WHERE reservation_id = '${req.reservation_id}'`);
      const err = await expectCodeAsync(store.ledger.admit(req), 'storage_error');
      expect(err.details).toMatchObject({ column: 'receipt' });
      await store.close();
    });
  });
}
