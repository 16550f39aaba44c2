/**
 * The ledger's transaction programs (src/ledger/programs.ts) at the edges the
 * store contract suite does not reach: every refusal of openBudget with its
 * ADR-0014 code, settlement's resolve-once rules, and narrow's floor and
 * ceiling. Run on a real SQLite file, as the adapter runs them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { streamOf } from '../../src/control/scope.ts';
import { LEDGER_LIMITS, type LedgerLimits } from '../../src/ledger/types.ts';
import { refOf } from '../../src/records/envelope.ts';
import { randomIds } from '../../src/records/ids.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { expectCodeAsync } from '../helpers/errors.ts';
import { countSqlite, type SqlTally } from '../helpers/sql-tally.ts';
import { actor, admission, chain, decision, delegationScope, FAR, freshSpace, NOW, publishAgent } from '../store/support/fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-programs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const open = (limits: Partial<LedgerLimits> = {}) => SqliteStore.open(join(dir, `p${++n}.db`), { create: true, limits: { ...LEDGER_LIMITS, ...limits } });

const dims = (count: number) => Array.from({ length: count }, (_, i) => ({ name: `d${i}`, unit: 'unit', ceiling: 10n }));

async function world(limits: Partial<LedgerLimits> = {}) {
  const store = open(limits);
  const space = freshSpace();
  const base = { space_id: space, owner_namespace: `ns-${space}`, actor_ref: actor, at: NOW() };
  const root = randomIds.next('dlg');
  await store.ledger.openBudget({ ...base, node_id: root, not_after: FAR, dimensions: [{ name: 'units', unit: 'admission', ceiling: 10n }] });
  const child = (over: Record<string, unknown> = {}) =>
    store.ledger.openBudget({ ...base, node_id: randomIds.next('dlg'), parent_id: root, not_after: FAR, dimensions: [{ name: 'units', unit: 'admission', ceiling: 5n }], ...over } as never);
  return { store, space, base, root, child };
}

describe('openBudget refusals', () => {
  it('a budget has 1 to 16 distinct dimensions', async () => {
    const { store, base } = await world();
    const root = (dimensions: unknown) => store.ledger.openBudget({ ...base, node_id: randomIds.next('dlg'), not_after: FAR, dimensions } as never);
    await expectCodeAsync(root([]), 'limit_exceeded');
    await expectCodeAsync(root(dims(17)), 'limit_exceeded');
    const sixteen = await root(dims(16));
    expect((await store.ledger.tree(sixteen.node_id))!.balances).toHaveLength(16);
    await expectCodeAsync(root([...dims(1), ...dims(1)]), 'invalid_request');
    // The same node id with other content is refused, naming it.
    const id = randomIds.next('dlg');
    await store.ledger.openBudget({ ...base, node_id: id, not_after: FAR, dimensions: dims(1) });
    expect((await expectCodeAsync(store.ledger.openBudget({ ...base, node_id: id, not_after: FAR, dimensions: dims(2) }), 'invalid_request')).details).toEqual({ node_id: id });
    await store.close();
  });

  it('a parent must exist, share space and namespace, permit children and outlive the child', async () => {
    const { store, space, root, child } = await world();
    expect((await expectCodeAsync(child({ parent_id: 'dlg_nope' }), 'invalid_request')).details).toEqual({ parent_id: 'dlg_nope' });
    await expectCodeAsync(child({ space_id: freshSpace() }), 'invalid_request');
    await expectCodeAsync(child({ owner_namespace: 'ns-other' }), 'invalid_request');
    expect((await expectCodeAsync(child({ not_after: '2099-01-01T00:00:00.001Z' }), 'deny')).details).toEqual({ failures: [{ dimension: 'expiry' }] });
    await expect(child({ not_after: FAR })).resolves.toMatchObject({ depth: 1, root_id: root });
    await store.control.appendControl({ event_type: 'rw003.circuit_breaker.tripped', control_scope_ref: delegationScope(space, root), actor_ref: actor });
    expect((await expectCodeAsync(child(), 'context_invalidated')).details).toEqual({ parent_id: root, state: 'tripped' });
    await store.close();
  });

  it('a parent whose expiry is exactly now has expired', async () => {
    const { store, base } = await world();
    const at = '2030-01-01T00:00:00.000Z';
    const parent = randomIds.next('dlg');
    await store.ledger.openBudget({ ...base, node_id: parent, not_after: at, at: '2029-01-01T00:00:00.000Z', dimensions: dims(1) });
    const kid = (when: string) => store.ledger.openBudget({ ...base, node_id: randomIds.next('dlg'), parent_id: parent, not_after: at, at: when, dimensions: dims(1) });
    await expectCodeAsync(kid(at), 'context_invalidated');
    await expect(kid('2029-12-31T23:59:59.999Z')).resolves.toMatchObject({ depth: 1 });
    await store.close();
  });

  it('depth, descendants and retained records are bounded at exactly the limit', async () => {
    const deep = await world({ maxDepth: 1 });
    const one = await deep.child();
    const err = await expectCodeAsync(deep.child({ parent_id: one.node_id }), 'limit_exceeded');
    expect(err.details).toEqual({ max: 1 });
    await deep.store.close();

    const wide = await world({ maxDescendants: 2 });
    await wide.child();
    await wide.child();
    expect((await expectCodeAsync(wide.child(), 'limit_exceeded')).details).toEqual({ max: 2 });
    await wide.store.close();

    const roots = await world({ maxActiveRoots: 1 });
    expect((await expectCodeAsync(roots.store.ledger.openBudget({ ...roots.base, node_id: randomIds.next('dlg'), not_after: FAR, dimensions: dims(1) }), 'limit_exceeded')).details).toEqual({ max: 1 });
    await roots.store.close();

    const kept = await world({ maxRetainedRecords: 2 });
    await kept.child(); // root + child = 2 retained
    expect((await expectCodeAsync(kept.child(), 'limit_exceeded')).details).toEqual({ max: 2 });
    await kept.store.close();
  });
});

describe('admission bounds', () => {
  it('a chain node expiring exactly at admission time refuses it; retained records bound admission too', async () => {
    const store = open({ maxRetainedRecords: 3 });
    const space = freshSpace();
    await publishAgent(store, space);
    const c = await chain(store, space);
    const req = await admission(store, space, [c.root, c.child, c.leaf], c.leaf);
    // root, child, leaf: three retained records already.
    expect((await expectCodeAsync(store.ledger.admit(req), 'limit_exceeded')).details).toEqual({ max: 3 });
    await store.close();

    const s2 = open();
    const sp2 = freshSpace();
    await publishAgent(s2, sp2);
    const base = { space_id: sp2, owner_namespace: `ns-${sp2}`, actor_ref: actor, at: '2029-01-01T00:00:00.000Z' };
    const root = randomIds.next('dlg');
    await s2.ledger.openBudget({ ...base, node_id: root, not_after: '2030-01-01T00:00:00.000Z', dimensions: [{ name: 'units', unit: 'admission', ceiling: 5n }] });
    const at = await admission(s2, sp2, [root], root);
    expect((await expectCodeAsync(s2.ledger.admit({ ...at, at: '2030-01-01T00:00:00.000Z' }), 'context_invalidated')).details).toEqual({ reason: 'expired', node_id: root });
    await expect(s2.ledger.admit({ ...at, at: '2029-12-31T23:59:59.999Z' })).resolves.toMatchObject({ status: 'held' });
    await s2.close();
  });
});

describe('admission idempotency', () => {
  it('a reused effect id with other content, or a reused reservation id, is refused naming it', async () => {
    const store = open();
    const space = freshSpace();
    await publishAgent(store, space);
    const c = await chain(store, space);
    const req = await admission(store, space, [c.root, c.child, c.leaf], c.leaf);
    await store.ledger.admit(req);
    expect((await expectCodeAsync(store.ledger.admit({ ...req, amounts: { units: 2n } }), 'invalid_request')).details).toEqual({ effect_id: req.effect_id });
    const other = await admission(store, space, [c.root, c.child, c.leaf], c.leaf);
    expect((await expectCodeAsync(store.ledger.admit({ ...other, reservation_id: req.reservation_id }), 'invalid_request')).details).toEqual({ reservation_id: req.reservation_id });
    await store.close();
  });
});

describe('settle', () => {
  async function held() {
    const store = open();
    const space = freshSpace();
    await publishAgent(store, space);
    const c = await chain(store, space);
    const req = await admission(store, space, [c.root, c.child, c.leaf], c.leaf, { units: 2n });
    await store.ledger.admit(req);
    return { store, c, id: req.reservation_id };
  }
  const evidence = { object_id: 'rcpt_1', revision_id: 'rev_rcpt_1', content_digest: `sha256:${'e'.repeat(64)}` };

  it('an unknown reservation id is invalid_request naming it', async () => {
    const { store } = await held();
    expect((await expectCodeAsync(store.ledger.settle({ reservation_id: 'res_nope', outcome: { kind: 'not_dispatched' }, at: NOW() }), 'invalid_request')).details).toEqual({ reservation_id: 'res_nope' });
    await store.close();
  });

  it('unknown stays held with no settled_at; unknown again changes nothing; leaving it needs evidence', async () => {
    const { store, c, id } = await held();
    const first = await store.ledger.settle({ reservation_id: id, outcome: { kind: 'unknown' }, at: NOW() });
    expect(first).toMatchObject({ status: 'unknown', settled_at: null });
    expect(await store.ledger.settle({ reservation_id: id, outcome: { kind: 'unknown' }, at: NOW() })).toMatchObject({ status: 'unknown', settled_at: null });
    expect((await store.ledger.reservation(id))!.settled_at).toBeNull();
    expect((await expectCodeAsync(store.ledger.settle({ reservation_id: id, outcome: { kind: 'not_dispatched' }, at: NOW() }), 'invalid_request')).details).toEqual({ reservation_id: id });
    const at = NOW();
    expect(await store.ledger.settle({ reservation_id: id, outcome: { kind: 'measured', actual: new Map([['units', 1n]]) }, evidence, at })).toMatchObject({ status: 'settled', settled_at: at });
    const tree = await store.ledger.tree(c.root);
    expect(tree!.balances.find((b) => b.dimension === 'units')).toMatchObject({ consumed: '1', reserved: '0' });
    await store.close();
  });

  it('the same settlement again is a no-op; a different one is refused', async () => {
    const { store, c, id } = await held();
    const at = NOW();
    const done = await store.ledger.settle({ reservation_id: id, outcome: { kind: 'measured', actual: new Map([['units', 2n]]) }, at });
    expect(done).toMatchObject({ status: 'settled', settled_at: at });
    expect(await store.ledger.settle({ reservation_id: id, outcome: { kind: 'measured', actual: new Map([['units', 2n]]) }, at: NOW() })).toMatchObject({ status: 'settled', settled_at: at });
    await expectCodeAsync(store.ledger.settle({ reservation_id: id, outcome: { kind: 'measured', actual: new Map([['units', 1n]]) }, at: NOW() }), 'invalid_request');
    await expectCodeAsync(store.ledger.settle({ reservation_id: id, outcome: { kind: 'not_dispatched' }, at: NOW() }), 'invalid_request');
    expect((await store.ledger.tree(c.root))!.balances.find((b) => b.dimension === 'units')).toMatchObject({ consumed: '2', reserved: '0' });
    await store.close();
  });

  it('leaving unknown with evidence stores settled_at; a resolved row is refused again as resolved, whatever the outcome (no evidence needed to be told)', async () => {
    const { store, id } = await held();
    await store.ledger.settle({ reservation_id: id, outcome: { kind: 'unknown' }, at: NOW() });
    const at = NOW();
    await store.ledger.settle({ reservation_id: id, outcome: { kind: 'not_dispatched' }, evidence, at });
    expect(await store.ledger.reservation(id)).toMatchObject({ status: 'released', settled_at: at });
    for (const outcome of [{ kind: 'unknown' as const }, { kind: 'measured' as const, actual: new Map([['units', 1n]]) }]) {
      const err = await expectCodeAsync(store.ledger.settle({ reservation_id: id, outcome, at: NOW() }), 'invalid_request');
      expect([err.message, err.details]).toStrictEqual(['reservation is already resolved', { status: 'released' }]);
    }
    await store.close();
  });
});

describe('narrow', () => {
  it('lowers to the wanted ceiling, never below consumed + reserved, never above the current ceiling', async () => {
    const store = open();
    const space = freshSpace();
    await publishAgent(store, space);
    const c = await chain(store, space, { root: 10n });
    await store.ledger.admit(await admission(store, space, [c.root, c.child, c.leaf], c.leaf, { units: 3n }));
    // units: ceiling 10, floor 3; tokens: ceiling 1000, floor 0.
    expect(await store.ledger.narrow(c.leaf, new Map([['units', 10n]]))).toEqual(new Map([['units', 10n], ['tokens', 1000n]]));
    expect(await store.ledger.narrow(c.leaf, new Map([['units', 11n], ['tokens', 1000n]]))).toEqual(new Map([['units', 10n], ['tokens', 1000n]]));
    expect(await store.ledger.narrow(c.leaf, new Map([['units', 3n], ['tokens', 999n]]))).toEqual(new Map([['units', 3n], ['tokens', 999n]]));
    expect(await store.ledger.narrow(c.child, new Map([['units', 2n]]))).toEqual(new Map([['units', 3n], ['tokens', 1000n]]));
    expect(await store.ledger.narrow(c.child, new Map([['units', 0n], ['gpu', 1n]]))).toEqual(new Map([['units', 3n], ['tokens', 1000n]]));
    const tree = await store.ledger.tree(c.root);
    const leaf = tree!.children[0]!.children[0]!;
    expect(leaf.balances.map((b) => [b.dimension, b.ceiling])).toEqual(expect.arrayContaining([['units', '3'], ['tokens', '999']]));
    expect((await expectCodeAsync(store.ledger.narrow('dlg_missing', new Map()), 'invalid_request')).details).toEqual({ node_id: 'dlg_missing' });
    await store.close();
  });
});

// Issue #19 mutants: what the authority and audit streams record, and chainOf's guards over the stored lineage.
describe('what openBudget and admit record', () => {
  it('the issued event carries parent, root and depth; a child never counts toward a preset', async () => {
    const { store, space, base, root, child } = await world();
    const kid = await child({ preset: { preset_id: 'preset-x', max_active_roots: 1, max_per_minute: 1 } });
    const issued = async (node: string) => (await store.control.readStream(streamOf(delegationScope(space, node)))).map((e) => [e.event_type, e.payload, e.produced_records]);
    expect(await issued(root)).toStrictEqual([['rw003.delegation.issued', { parent_id: null, root_id: root, depth: 0 }, []]]);
    expect(await issued(kid.node_id)).toStrictEqual([['rw003.delegation.issued', { parent_id: root, root_id: root, depth: 1 }, []]]);
    expect(store.handle.prepare('SELECT preset_id FROM ledger_nodes WHERE node_id = ?').get(kid.node_id)).toStrictEqual({ preset_id: null });
    // The preset's one root is still free for a root.
    await expect(store.ledger.openBudget({ ...base, node_id: randomIds.next('dlg'), not_after: FAR, dimensions: dims(1), preset: { preset_id: 'preset-x', max_active_roots: 1, max_per_minute: 1 } })).resolves.toMatchObject({ depth: 0 });
    await store.close();
  });

  it('the node record commits with it and is named by the issued event; a re-open differing only in a ceiling is refused', async () => {
    const { store, space, base } = await world();
    const record = decision(randomIds.next('eff'));
    const node = randomIds.next('dlg');
    const open1 = { ...base, node_id: node, not_after: FAR, dimensions: dims(1), record };
    await store.ledger.openBudget(open1);
    expect(await store.getRecord(record.record_id)).toStrictEqual(record);
    const [issued] = await store.control.readStream(streamOf(delegationScope(space, node)));
    expect(issued!.produced_records).toStrictEqual([refOf(record)]);
    await expect(store.ledger.openBudget(open1)).resolves.toMatchObject({ node_id: node });
    const other = { ...open1, dimensions: [{ ...dims(1)[0]!, ceiling: 9n }] };
    expect((await expectCodeAsync(store.ledger.openBudget(other), 'invalid_request')).details).toStrictEqual({ node_id: node });
    await store.close();
  });

  it('the evaluated event names the decision record, the reservation and the effect', async () => {
    const store = open();
    const space = freshSpace();
    await publishAgent(store, space);
    const c = await chain(store, space);
    const req = await admission(store, space, [c.root, c.child, c.leaf], c.leaf);
    await store.ledger.admit(req);
    const [evaluated] = await store.control.readStream(streamOf(req.attempt_scope));
    expect(evaluated).toMatchObject({
      event_type: 'rw003.permission.evaluated',
      produced_records: [refOf(req.decision)],
      payload: { decision: 'allow', reservation_id: req.reservation_id, effect_id: req.effect_id },
    });
    await store.close();
  });
});

describe('chainOf: the stored lineage admission walks', () => {
  it('an unknown leaf, and a lineage whose parent row is missing, are named', async () => {
    const store = open();
    const space = freshSpace();
    await publishAgent(store, space);
    const unknown = await admission(store, space, [], 'dlg_nope');
    expect(await refusal(store.ledger.admit(unknown))).toStrictEqual(['delegation is unknown', { node_id: 'dlg_nope' }]);
    // Only a damaged file can hold an orphan: written past the foreign key on purpose.
    store.handle.pragma('foreign_keys = OFF');
    insertNode(store, 'dlg_orphan', 'dlg_gone', 1);
    const orphan = await admission(store, space, [], 'dlg_orphan');
    expect(await refusal(store.ledger.admit(orphan))).toStrictEqual(['delegation lineage is broken', { node_id: 'dlg_gone' }]);
    await store.close();
  });

  it('a chain exactly maxDepth deep admits, read in one statement however deep (issue #24)', async () => {
    const store = open({ maxDepth: 2 });
    const space = freshSpace();
    await publishAgent(store, space);
    const c = await chain(store, space);
    const req = await admission(store, space, [c.root, c.child, c.leaf], c.leaf);
    const counting = countSqlite();
    try {
      await expect(store.ledger.admit(req)).resolves.toMatchObject({ chain: [c.root, c.child, c.leaf] });
    } finally {
      counting.restore();
    }
    expect(walks(counting.tally)).toStrictEqual({ lineage: 1, node: 0 });
    await store.close();
  });

  it('a lineage that loops is refused once it is longer than any allowed chain, not walked forever: one statement reads one node more than any allowed chain holds', async () => {
    const store = open({ maxDepth: 2 });
    const space = freshSpace();
    await publishAgent(store, space);
    insertNode(store, 'dlg_loop', 'dlg_loop', 1);
    const req = await admission(store, space, [], 'dlg_loop');
    const counting = countSqlite();
    try {
      expect(await refusal(store.ledger.admit(req))).toStrictEqual(['delegation lineage is too long', {}]);
    } finally {
      counting.restore();
    }
    expect(walks(counting.tally)).toStrictEqual({ lineage: 1, node: 0 });
    await store.close();
  });

  /** How the admission read its chain: recursive walks, and single-node reads. */
  function walks(tally: SqlTally): { lineage: number; node: number } {
    const ran = (prefix: string) => [...tally.byText].filter(([sql]) => sql.startsWith(prefix)).reduce((n, [, k]) => n + k, 0);
    return { lineage: ran('WITH RECURSIVE up('), node: ran('SELECT * FROM ledger_nodes WHERE node_id = ?') };
  }

  function insertNode(store: SqliteStore, id: string, parent: string, depth: number): void {
    store.handle
      .prepare(
        `INSERT INTO ledger_nodes(node_id, parent_id, root_id, depth, space_id, owner_namespace, not_after, request_digest, issued_event, created_at)
         VALUES (?, ?, ?, ?, 'sp', 'ns', ?, 'sha256:' || printf('%064d', 0), '{}', ?)`,
      )
      .run(id, parent, parent, depth, FAR, NOW());
  }

  async function refusal(p: Promise<unknown>): Promise<[string, unknown]> {
    const err = await expectCodeAsync(p, 'invalid_request');
    return [err.message, err.details];
  }
});
