/**
 * Every ADR-0014 refusal of openBudget, admit, settle and narrow as a caller
 * reads it — code, message and details (BatonError.toJSON) — through the real
 * SQLite adapter. The codes and details alone are asserted in
 * programs.test.ts; here the whole refusal is pinned.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../src/errors.ts';
import { MAX_AMOUNT } from '../../src/ledger/amount.ts';
import { LEDGER_LIMITS, type LedgerLimits } from '../../src/ledger/types.ts';
import { randomIds } from '../../src/records/ids.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { expectCodeAsync } from '../helpers/errors.ts';
import { actor, admission, chain, delegationScope, FAR, freshSpace, NOW, publishAgent } from '../store/support/fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-refusals-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const open = (limits: Partial<LedgerLimits> = {}) => SqliteStore.open(join(dir, `r${++n}.db`), { create: true, limits: { ...LEDGER_LIMITS, ...limits } });
const dims = (count: number, ceiling = 10n) => Array.from({ length: count }, (_, i) => ({ name: `d${i}`, unit: 'unit', ceiling }));

/** The refusal as the transport edge serialises it. */
async function refusal(p: Promise<unknown>, code: ErrorCode) {
  return (await expectCodeAsync(p, code)).toJSON();
}

async function world(limits: Partial<LedgerLimits> = {}) {
  const store = open(limits);
  const space = freshSpace();
  const base = { space_id: space, owner_namespace: `ns-${space}`, actor_ref: actor, at: NOW() };
  const root = randomIds.next('dlg');
  await store.ledger.openBudget({ ...base, node_id: root, not_after: FAR, dimensions: [{ name: 'units', unit: 'admission', ceiling: 10n }] });
  const newRoot = (over: Record<string, unknown> = {}) => store.ledger.openBudget({ ...base, node_id: randomIds.next('dlg'), not_after: FAR, dimensions: dims(1), ...over } as never);
  const child = (over: Record<string, unknown> = {}) =>
    store.ledger.openBudget({ ...base, node_id: randomIds.next('dlg'), parent_id: root, not_after: FAR, dimensions: [{ name: 'units', unit: 'admission', ceiling: 5n }], ...over } as never);
  return { store, space, base, root, newRoot, child };
}

describe('openBudget refusals, whole', () => {
  it('the shape of a budget: 1 to 16 distinct, representable dimensions; a node id names one content', async () => {
    const { store, base, newRoot } = await world();
    const shape = { code: 'limit_exceeded', message: 'a budget has 1 to 16 dimensions', details: {} };
    expect(await refusal(newRoot({ dimensions: [] }), 'limit_exceeded')).toStrictEqual(shape);
    expect(await refusal(newRoot({ dimensions: dims(17) }), 'limit_exceeded')).toStrictEqual(shape);
    expect(await refusal(newRoot({ dimensions: [...dims(1), ...dims(1)] }), 'invalid_request')).toStrictEqual({ code: 'invalid_request', message: 'duplicate budget dimension', details: {} });
    expect(await refusal(newRoot({ dimensions: dims(1, MAX_AMOUNT + 1n) }), 'limit_exceeded')).toStrictEqual({
      code: 'limit_exceeded',
      message: 'ceiling of d0 is not representable',
      details: { what: 'ceiling of d0' },
    });
    const id = randomIds.next('dlg');
    await store.ledger.openBudget({ ...base, node_id: id, not_after: FAR, dimensions: dims(1) });
    expect(await refusal(store.ledger.openBudget({ ...base, node_id: id, not_after: FAR, dimensions: dims(2) }), 'invalid_request')).toStrictEqual({
      code: 'invalid_request',
      message: 'budget node already exists with other content',
      details: { node_id: id },
    });
    await store.close();
  });

  it('a parent: known, same space and namespace, permitting children, outliving the child, unexpired', async () => {
    const { store, space, base, root, child } = await world();
    expect(await refusal(child({ parent_id: 'dlg_nope' }), 'invalid_request')).toStrictEqual({ code: 'invalid_request', message: 'parent delegation is unknown', details: { parent_id: 'dlg_nope' } });
    expect(await refusal(child({ owner_namespace: 'ns-other' }), 'invalid_request')).toStrictEqual({ code: 'invalid_request', message: 'a child cannot change space or owner namespace', details: {} });
    expect(await refusal(child({ not_after: '2099-01-01T00:00:00.001Z' }), 'deny')).toStrictEqual({ code: 'deny', message: 'child expiry is later than its parent', details: { failures: [{ dimension: 'expiry' }] } });
    expect(await refusal(child({ dimensions: [{ name: 'units', unit: 'admission', ceiling: 11n }] }), 'deny')).toStrictEqual({
      code: 'deny',
      message: 'child budget is wider than its parent',
      details: { failures: [{ dimension: 'units', reason: 'wider_than_parent' }] },
    });
    // A parent whose expiry has passed (opened back then, a child asked for now).
    const old = randomIds.next('dlg');
    await store.ledger.openBudget({ ...base, node_id: old, not_after: '2030-01-01T00:00:00.000Z', at: '2029-01-01T00:00:00.000Z', dimensions: dims(1) });
    expect(await refusal(child({ parent_id: old, not_after: '2030-01-01T00:00:00.000Z', at: '2030-01-01T00:00:00.000Z', dimensions: dims(1) }), 'context_invalidated')).toStrictEqual({
      code: 'context_invalidated',
      message: 'parent delegation has expired',
      details: { reason: 'expired', parent_id: old },
    });
    // A parent row whose authority stream has no event (only a damaged file holds one): nothing resolves it.
    store.handle
      .prepare(
        `INSERT INTO ledger_nodes(node_id, parent_id, root_id, depth, space_id, owner_namespace, not_after, request_digest, issued_event, created_at)
         VALUES ('dlg_silent', NULL, 'dlg_silent', 0, ?, ?, ?, 'sha256:' || printf('%064d', 0), '{}', ?)`,
      )
      .run(space, base.owner_namespace, FAR, NOW());
    expect(await refusal(child({ parent_id: 'dlg_silent' }), 'context_invalidated')).toStrictEqual({
      code: 'context_invalidated',
      message: 'parent delegation does not permit new children',
      details: { parent_id: 'dlg_silent', state: 'unresolved' },
    });
    await store.control.appendControl({ event_type: 'rw003.circuit_breaker.tripped', control_scope_ref: delegationScope(space, root), actor_ref: actor });
    expect(await refusal(child(), 'context_invalidated')).toStrictEqual({
      code: 'context_invalidated',
      message: 'parent delegation does not permit new children',
      details: { parent_id: root, state: 'tripped' },
    });
    await store.close();
  });

  it('capacity: depth, descendants, active roots, retained records, and a preset\'s roots and rate', async () => {
    const deep = await world({ maxDepth: 1 });
    const one = await deep.child();
    expect(await refusal(deep.child({ parent_id: one.node_id }), 'limit_exceeded')).toStrictEqual({ code: 'limit_exceeded', message: 'delegation depth limit reached', details: { max: 1 } });
    await deep.store.close();

    const wide = await world({ maxDescendants: 1 });
    await wide.child();
    expect(await refusal(wide.child(), 'limit_exceeded')).toStrictEqual({ code: 'limit_exceeded', message: 'root has the maximum number of descendants', details: { max: 1 } });
    await wide.store.close();

    const roots = await world({ maxActiveRoots: 1 });
    expect(await refusal(roots.newRoot(), 'limit_exceeded')).toStrictEqual({ code: 'limit_exceeded', message: 'owner namespace has the maximum number of active roots', details: { max: 1 } });
    await roots.store.close();

    const kept = await world({ maxRetainedRecords: 1 });
    expect(await refusal(kept.child(), 'limit_exceeded')).toStrictEqual({
      code: 'limit_exceeded',
      message: 'owner namespace holds the maximum number of retained records',
      details: { max: 1 },
    });
    await kept.store.close();

    const p = await world();
    const rootsOf = { preset_id: 'preset-r', max_active_roots: 1, max_per_minute: 10 };
    await p.newRoot({ preset: rootsOf });
    expect(await refusal(p.newRoot({ preset: rootsOf }), 'limit_exceeded')).toStrictEqual({
      code: 'limit_exceeded',
      message: 'preset has reached its active-root limit',
      details: { bound: 'active_roots', preset: 'preset-r' },
    });
    const rate = { preset_id: 'preset-m', max_active_roots: 10, max_per_minute: 1 };
    await p.newRoot({ preset: rate });
    expect(await refusal(p.newRoot({ preset: rate }), 'limit_exceeded')).toStrictEqual({
      code: 'limit_exceeded',
      message: 'preset has reached its issuance rate',
      details: { bound: 'issuance_rate', preset: 'preset-m' },
    });
    await p.store.close();
  });
});

describe('admission refusals, whole', () => {
  it('a reused effect id or reservation id, full retained records, an expired chain node', async () => {
    const store = open({ maxRetainedRecords: 4 });
    const space = freshSpace();
    await publishAgent(store, space);
    const c = await chain(store, space);
    const req = await admission(store, space, [c.root, c.child, c.leaf], c.leaf);
    await store.ledger.admit(req);
    expect(await refusal(store.ledger.admit({ ...req, amounts: { units: 2n } }), 'invalid_request')).toStrictEqual({
      code: 'invalid_request',
      message: 'effect id reused with different content',
      details: { effect_id: req.effect_id },
    });
    const other = await admission(store, space, [c.root, c.child, c.leaf], c.leaf);
    expect(await refusal(store.ledger.admit({ ...other, reservation_id: req.reservation_id }), 'invalid_request')).toStrictEqual({
      code: 'invalid_request',
      message: 'reservation id already used',
      details: { reservation_id: req.reservation_id },
    });
    // Three nodes and one held reservation: four retained records.
    expect(await refusal(store.ledger.admit(other), 'limit_exceeded')).toStrictEqual({
      code: 'limit_exceeded',
      message: 'owner namespace holds the maximum number of retained records',
      details: { max: 4 },
    });
    await store.close();

    const s2 = open();
    const sp2 = freshSpace();
    await publishAgent(s2, sp2);
    const root = randomIds.next('dlg');
    await s2.ledger.openBudget({ space_id: sp2, owner_namespace: `ns-${sp2}`, actor_ref: actor, at: '2029-01-01T00:00:00.000Z', node_id: root, not_after: '2030-01-01T00:00:00.000Z', dimensions: dims(1) });
    const at = await admission(s2, sp2, [root], root, { d0: 1n });
    expect(await refusal(s2.ledger.admit({ ...at, at: '2030-01-01T00:00:00.000Z' }), 'context_invalidated')).toStrictEqual({
      code: 'context_invalidated',
      message: 'a delegation in the chain has expired',
      details: { reason: 'expired', node_id: root },
    });
    await s2.close();
  });
});

describe('settle and narrow refusals, whole', () => {
  it('an unknown reservation, leaving unknown without evidence, an authority event riding along, an unknown node', async () => {
    const store = open();
    const space = freshSpace();
    await publishAgent(store, space);
    const c = await chain(store, space);
    const req = await admission(store, space, [c.root, c.child, c.leaf], c.leaf);
    await store.ledger.admit(req);
    const id = req.reservation_id;
    expect(await refusal(store.ledger.settle({ reservation_id: 'res_nope', outcome: { kind: 'not_dispatched' }, at: NOW() }), 'invalid_request')).toStrictEqual({
      code: 'invalid_request',
      message: 'reservation is unknown',
      details: { reservation_id: 'res_nope' },
    });
    const authority = { event_type: 'rw003.circuit_breaker.tripped' as const, control_scope_ref: delegationScope(space, c.leaf), actor_ref: actor };
    expect(await refusal(store.ledger.settle({ reservation_id: id, outcome: { kind: 'not_dispatched' }, at: NOW(), events: [authority] }), 'invalid_request')).toStrictEqual({
      code: 'invalid_request',
      message: 'only audit events may ride along with a ledger operation',
      details: {},
    });
    // The refusal rolled the settlement back: the reservation is still held.
    expect(await store.ledger.reservation(id)).toMatchObject({ status: 'held', settled_at: null });
    await store.ledger.settle({ reservation_id: id, outcome: { kind: 'unknown' }, at: NOW() });
    expect(await refusal(store.ledger.settle({ reservation_id: id, outcome: { kind: 'not_dispatched' }, at: NOW() }), 'invalid_request')).toStrictEqual({
      code: 'invalid_request',
      message: 'leaving unknown requires reconciliation evidence',
      details: { reservation_id: id },
    });
    expect(await refusal(store.ledger.narrow('dlg_missing', new Map([['units', 1n]])), 'invalid_request')).toStrictEqual({
      code: 'invalid_request',
      message: 'no budget node with that id',
      details: { node_id: 'dlg_missing' },
    });
    await store.close();
  });
});
