/**
 * What the ledger's programs leave in the store beyond their return values
 * (ADR-0014): the journal reason of every balance change, a second `unknown`
 * that changes nothing, a root whose only work was consumed outright freeing
 * its active-root slot, the live-root prune margin, the depth bound on a
 * stored lineage, and the records that ride along a settlement through the
 * set-oriented batch (src/store/tx/batch.ts: head checks, riders). Real SQLite.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fenceSetOf } from '../../src/control/fence.ts';
import { LEDGER_LIMITS, type LedgerLimits, type TaskAdmissionRequest } from '../../src/ledger/types.ts';
import { detachedOf, ride } from '../../src/records/detached.ts';
import { refOf, sealRecord, type Envelope } from '../../src/records/envelope.ts';
import { randomIds } from '../../src/records/ids.ts';
import { systemClock } from '../../src/records/time.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { expectCodeAsync } from '../helpers/errors.ts';
import { countSqlite, type SqlTally } from '../helpers/sql-tally.ts';
import { actor, admission, agentScope, chain, delegationScope, FAR, freshSpace, NOW, publishAgent, taskAdmission } from '../store/support/fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-effects-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = () => join(dir, `e${++n}.db`);
const open = (limits: Partial<LedgerLimits> = {}, path = file()) => SqliteStore.open(path, { create: true, limits: { ...LEDGER_LIMITS, ...limits } });
const units = (ceiling: bigint) => [{ name: 'units', unit: 'admission', ceiling }];

async function held(limits: Partial<LedgerLimits> = {}) {
  const store = open(limits);
  const space = freshSpace();
  await publishAgent(store, space);
  const c = await chain(store, space);
  const req = await admission(store, space, [c.root, c.child, c.leaf], c.leaf, { units: 2n });
  await store.ledger.admit(req);
  return { store, space, c, id: req.reservation_id };
}

/** A store with a published agent and a stored root of 5 units, the fence on the agent and the root; `child` builds a child of it. */
async function storedRoot(limits: Partial<LedgerLimits> = {}) {
  const store = open(limits);
  const space = freshSpace();
  await publishAgent(store, space);
  const base = { space_id: space, owner_namespace: `ns-${space}`, actor_ref: actor, at: NOW() };
  const rootReq = { ...base, node_id: randomIds.next('dlg'), not_after: FAR, dimensions: units(5n) };
  await store.ledger.openBudget(rootReq);
  const fence = [...(await store.control.fenceSet([agentScope(space), delegationScope(space, rootReq.node_id)]))];
  const child = (ceiling: bigint) => ({ ...base, node_id: randomIds.next('dlg'), parent_id: rootReq.node_id, not_after: FAR, dimensions: units(ceiling) });
  return { store, space, rootReq, fence, child };
}

const entries = (store: SqliteStore, id: string) =>
  store.handle.prepare('SELECT node_id, dimension, d_consumed, d_reserved, reason FROM ledger_entries WHERE reservation_id = ? ORDER BY seq').all(id) as {
    node_id: string;
    dimension: string;
    d_consumed: number | bigint;
    d_reserved: number | bigint;
    reason: string;
  }[];

describe('the journal', () => {
  it('names every balance change by what made it: admit, then settle:<outcome>', async () => {
    const { store, c, id } = await held();
    await store.ledger.settle({ reservation_id: id, outcome: { kind: 'measured', actual: new Map([['units', 1n]]) }, at: NOW() });
    const rows = entries(store, id).map((e) => [e.reason, e.node_id, e.dimension, Number(e.d_consumed), Number(e.d_reserved)]);
    expect(rows).toStrictEqual([
      ['admit', c.root, 'units', 0, 2],
      ['admit', c.child, 'units', 0, 2],
      ['admit', c.leaf, 'units', 0, 2],
      ['settle:measured', c.root, 'units', 1, -2],
      ['settle:measured', c.child, 'units', 1, -2],
      ['settle:measured', c.leaf, 'units', 1, -2],
    ]);
    await store.close();
  });
});

describe('the reservation row', () => {
  it('keeps of the admission receipt only its decision ref: the rest is in its columns or fixed by the request (issue #24)', async () => {
    const store = open();
    const space = freshSpace();
    await publishAgent(store, space);
    const c = await chain(store, space);
    const req = await admission(store, space, [c.root, c.child, c.leaf], c.leaf, { units: 2n });
    const receipt = await store.ledger.admit(req);
    const row = store.handle.prepare('SELECT chain, amounts, kind, status, receipt FROM ledger_reservations WHERE reservation_id = ?').get(req.reservation_id) as Record<string, string>;
    expect(JSON.parse(row.receipt!)).toStrictEqual({ decision_ref: receipt.decision_ref });
    expect({ chain: JSON.parse(row.chain!), amounts: JSON.parse(row.amounts!), kind: row.kind, status: row.status }).toStrictEqual({
      chain: receipt.chain,
      amounts: receipt.amounts,
      kind: receipt.kind,
      status: receipt.status,
    });
    await store.close();
  });
});

describe('unknown, again', () => {
  it('a second unknown with other evidence changes nothing: the first settlement stays recorded', async () => {
    const { store, id } = await held();
    const evidence = (e: string) => ({ object_id: `rcpt_${e}`, revision_id: `rev_${e}`, content_digest: `sha256:${e.repeat(64)}` });
    const settlement = () => (store.handle.prepare('SELECT settlement FROM ledger_reservations WHERE reservation_id = ?').get(id) as { settlement: string }).settlement;
    await store.ledger.settle({ reservation_id: id, outcome: { kind: 'unknown' }, evidence: evidence('a'), at: NOW() });
    const first = settlement();
    expect(JSON.parse(first)).toStrictEqual({ outcome: 'unknown', evidence: evidence('a') });
    expect(await store.ledger.settle({ reservation_id: id, outcome: { kind: 'unknown' }, evidence: evidence('b'), at: NOW() })).toMatchObject({ status: 'unknown', settled_at: null });
    expect(settlement()).toBe(first);
    expect(entries(store, id).map((e) => e.reason)).toStrictEqual(['admit', 'admit', 'admit']);
    await store.close();
  });
});

describe('active roots', () => {
  it('a root whose only admission was consumed outright stops holding an active-root slot; a held one keeps it', async () => {
    for (const kind of ['consume', 'reserve'] as const) {
      const store = open({ maxActiveRoots: 1 });
      const space = freshSpace();
      await publishAgent(store, space);
      const base = { space_id: space, owner_namespace: `ns-${space}`, actor_ref: actor, at: NOW() };
      const root = randomIds.next('dlg');
      await store.ledger.openBudget({ ...base, node_id: root, not_after: FAR, dimensions: units(5n) });
      await expect(store.ledger.admit(await admission(store, space, [root], root, { units: 1n }, kind))).resolves.toMatchObject({ status: kind === 'consume' ? 'consumed' : 'held' });
      const next = store.ledger.openBudget({ ...base, node_id: randomIds.next('dlg'), not_after: FAR, dimensions: units(5n) });
      if (kind === 'consume') await expect(next).resolves.toMatchObject({ depth: 0 });
      else expect((await expectCodeAsync(next, 'limit_exceeded')).details).toStrictEqual({ max: 1 });
      await store.close();
    }
  });

  it('a never-reserved root is pruned only a margin after it expired: one still unexpired keeps its slot', async () => {
    const store = open({ maxActiveRoots: 1 });
    const space = freshSpace();
    const base = { space_id: space, owner_namespace: `ns-${space}`, actor_ref: actor, at: '2030-01-01T00:00:00.000Z' };
    await store.ledger.openBudget({ ...base, node_id: randomIds.next('dlg'), not_after: '2030-01-01T00:00:30.000Z', dimensions: units(5n) });
    const another = (at: string) => store.ledger.openBudget({ ...base, at, node_id: randomIds.next('dlg'), not_after: FAR, dimensions: units(5n) });
    expect((await expectCodeAsync(another('2030-01-01T00:00:00.000Z'), 'limit_exceeded')).details).toStrictEqual({ max: 1 });
    await expect(another('2030-01-01T00:00:30.000Z')).resolves.toMatchObject({ depth: 0 });
    await store.close();
  });
});

describe('fences over a stream with no events yet', () => {
  it('a fence naming a head its stream never had is refused as unresolved, not a crash', async () => {
    const store = open();
    const space = freshSpace();
    const c = await chain(store, space);
    const req = await admission(store, space, [c.root, c.child, c.leaf], c.leaf);
    // The agent scope was never published: its stream has no head to match the boundary the caller names.
    const ghost = { project_id: `rw-control:${space}`, branch_id: 'agent:agent_x', position: 1, event_id: 'evt_ghost', event_digest: `sha256:${'0'.repeat(64)}` };
    const err = await expectCodeAsync(store.ledger.admit({ ...req, fence_set: [...fenceSetOf([...req.fence_set, ghost])] }), 'context_invalidated');
    expect(err.details).toStrictEqual({ failures: [{ branch_id: 'agent:agent_x', reason: 'unresolved' }] });
    expect(await store.ledger.reservation(req.reservation_id)).toBeUndefined();
    await store.close();
  });
});

describe('a task admission over an existing root', () => {
  it('the existing root is fenced by the caller\'s boundary, not completed from the transaction; a stale one refuses and leaves no child', async () => {
    const { store, space, rootReq, fence, child } = await storedRoot();
    const task = (fence_set: typeof fence) => {
      const childReq = child(2n);
      return { child: childReq.node_id, run: taskAdmission(store, space, [rootReq, childReq], fence_set, childReq.node_id).then((r) => store.ledger.admitTask(r)) };
    };
    const rootBranch = `delegation:${rootReq.node_id}`;
    const stale = fence.map((b) => (b.branch_id === rootBranch ? { ...b, event_digest: `sha256:${'0'.repeat(64)}` } : b));
    const refused = task(stale);
    expect((await expectCodeAsync(refused.run, 'context_invalidated')).details).toStrictEqual({ failures: [{ branch_id: rootBranch, reason: 'head_moved' }] });
    expect(await store.ledger.tree(refused.child)).toBeUndefined();
    const admitted = task(fence);
    const receipt = await admitted.run;
    expect(receipt.fence_set.map((b) => b.branch_id).sort()).toStrictEqual(['agent:agent_x', `delegation:${admitted.child}`, rootBranch].sort());
    await store.close();
  });
});

describe('the balances of nodes a task admission opens', () => {
  const balance = (store: SqliteStore, node: string, dimension = 'units') =>
    store.handle.prepare('SELECT consumed, reserved FROM ledger_balances WHERE node_id = ? AND dimension = ?').get(node, dimension) as { consumed: bigint; reserved: bigint };
  /**
   * Admits `req`; its receipt, and the nodes whose balance rows it updated after they were
   * stored, by whatever statement (an UPDATE of its own, or a journal entry's charge:
   * sqlite/appends.ts), seen by a trigger on this connection only.
   */
  async function admitCounting(store: SqliteStore, req: TaskAdmissionRequest) {
    store.handle.exec(`CREATE TEMP TABLE IF NOT EXISTS balance_updates(node_id TEXT);
      CREATE TEMP TRIGGER IF NOT EXISTS balance_updated AFTER UPDATE ON main.ledger_balances BEGIN INSERT INTO balance_updates VALUES (NEW.node_id); END;
      DELETE FROM balance_updates;`);
    const receipt = await store.ledger.admitTask(req);
    return { receipt, updates: (store.handle.prepare('SELECT node_id FROM balance_updates').all() as { node_id: string }[]).map((r) => r.node_id) };
  }

  it('are inserted charged, never updated after: the charge is journalled all the same (issue #24)', async () => {
    const store = open();
    const space = freshSpace();
    await publishAgent(store, space);
    // One instant for the nodes and the admission, as the gateway plans a turn: the admission's retained count is
    // then the capacity statement's, and nothing reads the nodes before the batch writes them.
    const at = NOW();
    const base = { space_id: space, owner_namespace: `ns-${space}`, actor_ref: actor, at };
    // Two dimensions, both charged: each charge lands on its own row.
    const dims = (n: bigint) => [{ name: 'tokens', unit: 'token', ceiling: n * 100n }, ...units(n)];
    const rootReq = { ...base, node_id: randomIds.next('dlg'), not_after: FAR, dimensions: dims(5n), preset: { preset_id: 'standard', max_active_roots: 8, max_per_minute: 100 } };
    const childReq = { ...base, node_id: randomIds.next('dlg'), parent_id: rootReq.node_id, not_after: FAR, dimensions: dims(2n) };
    const fence = [...(await store.control.fenceSet([agentScope(space)]))];
    const req = await taskAdmission(store, space, [rootReq, childReq], fence, childReq.node_id, { amounts: { units: 2n, tokens: 30n }, at });
    const { receipt, updates } = await admitCounting(store, req);
    expect(receipt).toMatchObject({ status: 'held', chain: [rootReq.node_id, childReq.node_id] });
    expect(updates).toStrictEqual([]);
    const nodes = [rootReq.node_id, childReq.node_id];
    expect([...nodes.map((n) => balance(store, n)), ...nodes.map((n) => balance(store, n, 'tokens'))]).toStrictEqual([
      { consumed: 0n, reserved: 2n },
      { consumed: 0n, reserved: 2n },
      { consumed: 0n, reserved: 30n },
      { consumed: 0n, reserved: 30n },
    ]);
    const journalled = entries(store, req.admission.reservation_id).map((e) => [e.reason, e.node_id, e.dimension, Number(e.d_reserved)]);
    expect(journalled.sort()).toStrictEqual(
      [
        ['admit', rootReq.node_id, 'units', 2],
        ['admit', rootReq.node_id, 'tokens', 30],
        ['admit', childReq.node_id, 'units', 2],
        ['admit', childReq.node_id, 'tokens', 30],
      ].sort(),
    );
    await store.close();
  });

  it('under a stored root: the chain\'s balances are read from the store, so the child is written before its charge, and both rows are charged', async () => {
    const { store, space, rootReq, fence, child } = await storedRoot();
    const childReq = child(2n);
    const req = await taskAdmission(store, space, [rootReq, childReq], fence, childReq.node_id, { amounts: { units: 2n } });
    // Reading the stored root's balances writes the opened child first (TxBatch.storedBalances); each row is then
    // charged once, by its journal entry's statement (sqlite/appends.ts), with no UPDATE of its own.
    expect((await admitCounting(store, req)).updates.sort()).toStrictEqual([rootReq.node_id, childReq.node_id].sort());
    expect([rootReq.node_id, childReq.node_id].map((n) => balance(store, n).reserved)).toStrictEqual([2n, 2n]);
    await store.close();
  });
});

describe('a task admission at the retained-records limit', () => {
  it('a node it opens is refused for what is wrong with it first; the retained count is the admission\'s, after every open', async () => {
    const { store, space, rootReq, fence, child } = await storedRoot({ maxRetainedRecords: 1 });
    const task = (ceiling: bigint) => {
      const childReq = child(ceiling);
      return taskAdmission(store, space, [rootReq, childReq], fence, childReq.node_id).then((r) => store.ledger.admitTask(r));
    };
    expect((await expectCodeAsync(task(6n), 'deny')).details).toStrictEqual({ failures: [{ dimension: 'units', reason: 'wider_than_parent' }] });
    const full = await expectCodeAsync(task(2n), 'limit_exceeded');
    expect([full.message, full.details]).toStrictEqual(['owner namespace holds the maximum number of retained records', { max: 1 }]);
    await store.close();
  });
});

describe('the depth bound on a stored lineage', () => {
  it('a lineage deeper than maxDepth (opened under a larger limit) is refused, not admitted', async () => {
    const path = file();
    const roomy = open({ maxDepth: 3 }, path);
    const space = freshSpace();
    await publishAgent(roomy, space);
    const c = await chain(roomy, space);
    const base = { space_id: space, owner_namespace: `ns-${space}`, actor_ref: actor, at: NOW() };
    const deeper = randomIds.next('dlg');
    await roomy.ledger.openBudget({ ...base, node_id: deeper, parent_id: c.leaf, not_after: FAR, dimensions: units(1n) });
    await roomy.close();
    const tight = open({ maxDepth: 2 }, path);
    const err = await expectCodeAsync(tight.ledger.admit(await admission(tight, space, [c.root, c.child, c.leaf, deeper], deeper)), 'invalid_request');
    expect([err.message, err.details]).toStrictEqual(['delegation lineage is too long', {}]);
    // The chain exactly maxDepth deep still admits.
    await expect(tight.ledger.admit(await admission(tight, space, [c.root, c.child, c.leaf], c.leaf))).resolves.toMatchObject({ status: 'held' });
    await tight.close();
  });
});

describe('records riding along a settlement (the batch)', () => {
  const note = (body: Record<string, unknown>, over: { prior?: Envelope; recordId?: string; ids?: typeof randomIds } = {}) =>
    sealRecord(
      { type: 'permission_decision', body, issuedBy: actor, lifecycle: 'recorded', ...(over.prior ? { prior: refOf(over.prior), recordId: over.prior.record_id } : {}) },
      { ids: over.ids ?? randomIds, clock: systemClock },
    );
  const INSERT_RECORDS = 'INSERT INTO records(record_id, revision_id, content_digest, schema_ref, prior_revision, document, stored_at)';
  const APPEND_RECORDS = 'INSERT INTO record_appends(';
  /** Executions of the statements whose text starts with `prefix`. */
  const ran = (tally: SqlTally, prefix: string) => [...tally.byText].filter(([sql]) => sql.startsWith(prefix)).reduce((n, [, k]) => n + k, 0);
  const head = (store: SqliteStore, recordId: string) =>
    (store.handle.prepare('SELECT revision_id FROM record_heads WHERE record_id = ?').get(recordId) as { revision_id: string } | undefined)?.revision_id;

  it('a record and its next revision in one batch; a replay; the next revision later; content riding with it', async () => {
    const { store, id } = await held();
    const r1 = note({ effect_id: 'eff_1', decision: 'allow' });
    const r2 = note({ effect_id: 'eff_1', decision: 'deny' }, { prior: r1 });
    const counting = countSqlite();
    try {
      await store.ledger.settle({ reservation_id: id, outcome: { kind: 'unknown' }, at: NOW(), records: [r1, r2] });
    } finally {
      counting.restore();
    }
    // r1 in the batch's insert; r2, its record's second revision here, alone by the single-row rules after it.
    expect(ran(counting.tally, APPEND_RECORDS)).toBe(1);
    expect(ran(counting.tally, `${INSERT_RECORDS} VALUES (@`)).toBe(1);
    expect(head(store, r1.record_id)).toBe(r2.revision_id);
    expect(await store.getRecord(r1.record_id)).toStrictEqual(r2);
    // The settlement replayed with its records: nothing new, nothing refused.
    await store.ledger.settle({ reservation_id: id, outcome: { kind: 'unknown' }, at: NOW(), records: [r1, r2] });
    const input = detachedOf('task_input', { text: 'hello' });
    const r3 = ride(note({ effect_id: 'eff_1', decision: 'allow', input: input.digest }, { prior: r2 }), [input]);
    await store.ledger.settle({ reservation_id: id, outcome: { kind: 'unknown' }, at: NOW(), records: [r3] });
    expect(head(store, r1.record_id)).toBe(r3.revision_id);
    expect(store.handle.prepare('SELECT kind, document FROM content WHERE digest = ?').get(input.digest)).toStrictEqual({ kind: 'task_input', document: input.document });
    expect(Number((store.handle.prepare('SELECT count(*) AS n FROM records WHERE record_id = ?').get(r1.record_id) as { n: number | bigint }).n)).toBe(3);
    await store.close();
  });

  it('plain revisions are written by the batch alone, in one insert per batch, none row by row', async () => {
    const { store, id } = await held();
    const a1 = note({ effect_id: 'eff_3', decision: 'allow' });
    const b1 = note({ effect_id: 'eff_3', decision: 'deny' });
    const a2 = note({ effect_id: 'eff_3', decision: 'allow, again' }, { prior: a1 });
    const b2 = note({ effect_id: 'eff_3', decision: 'deny, again' }, { prior: b1 });
    const counting = countSqlite();
    try {
      // Two first revisions, then their next revisions, each pair riding on one settlement.
      await store.ledger.settle({ reservation_id: id, outcome: { kind: 'unknown' }, at: NOW(), records: [a1, b1] });
      await store.ledger.settle({ reservation_id: id, outcome: { kind: 'unknown' }, at: NOW(), records: [a2, b2] });
    } finally {
      counting.restore();
    }
    const { tally } = counting;
    // Per batch: every revision in one insert, which checks and moves the heads itself (sqlite/appends.ts); no head read first.
    expect(ran(tally, APPEND_RECORDS)).toBe(2);
    expect(ran(tally, 'SELECT h.record_id, h.revision_id, r.content_digest FROM (VALUES')).toBe(0);
    expect(ran(tally, `${INSERT_RECORDS} VALUES (?`)).toBe(0);
    // The single-row rules (records/put.ts) never ran: no revision or head read alone, no row inserted alone.
    expect(ran(tally, 'SELECT * FROM records WHERE revision_id')).toBe(0);
    expect(ran(tally, 'SELECT revision_id FROM record_heads')).toBe(0);
    expect(ran(tally, `${INSERT_RECORDS} VALUES (@`)).toBe(0);
    expect([head(store, a1.record_id), head(store, b1.record_id)]).toStrictEqual([a2.revision_id, b2.revision_id]);
    expect(await store.getRecord(b1.record_id)).toStrictEqual(b2);
    await store.close();
  });

  it('a head whose stored digest is damaged is storage_error where the batch reads it, naming the column, and nothing is written', async () => {
    const { store, id } = await held();
    const r1 = note({ effect_id: 'eff_4', decision: 'allow' });
    await store.ledger.settle({ reservation_id: id, outcome: { kind: 'unknown' }, at: NOW(), records: [r1] });
    // Edited outside Baton, past the immutability trigger.
    store.handle.exec('DROP TRIGGER records_immutable_u');
    store.handle.prepare("UPDATE records SET content_digest = 'sha256:damaged' WHERE revision_id = ?").run(r1.revision_id);
    const r2 = note({ effect_id: 'eff_4', decision: 'deny' }, { prior: r1 });
    const err = await expectCodeAsync(store.ledger.settle({ reservation_id: id, outcome: { kind: 'unknown' }, at: NOW(), records: [r2] }), 'storage_error');
    expect(err.details).toMatchObject({ read: 'recordHeads', column: 'content_digest' });
    expect(JSON.stringify(err.details)).not.toContain('damaged');
    expect(head(store, r1.record_id)).toBe(r1.revision_id);
    await store.close();
  });

  it('a revision that does not name the current head exactly takes the single-row rules and is refused by them', async () => {
    const { store, id } = await held();
    const r1 = note({ effect_id: 'eff_2', decision: 'allow' });
    const r2 = note({ effect_id: 'eff_2', decision: 'deny' }, { prior: r1 });
    await store.ledger.settle({ reservation_id: id, outcome: { kind: 'unknown' }, at: NOW(), records: [r1, r2] });
    const refused = async (record: Envelope) => {
      const err = await expectCodeAsync(store.ledger.settle({ reservation_id: id, outcome: { kind: 'unknown' }, at: NOW(), records: [record] }), 'invalid_request');
      expect(head(store, r1.record_id)).toBe(r2.revision_id);
      return [err.message, err.details];
    };
    // A fork from the old head.
    const fork = note({ effect_id: 'eff_2', decision: 'fork' }, { prior: r1 });
    expect(await refused(fork)).toStrictEqual(['a new revision must name the current head as its prior revision', { record_id: r1.record_id, conflict: 'head_moved' }]);
    // The head's digest under another revision id, and the head's revision id with another digest.
    const base = { type: 'permission_decision' as const, body: { effect_id: 'eff_2', decision: 'x' }, issuedBy: actor, lifecycle: 'recorded' as const, recordId: r1.record_id };
    const wrongRev = sealRecord({ ...base, prior: { ...refOf(r2), revision_id: r1.revision_id, content_digest: r2.content_digest } }, { ids: randomIds, clock: systemClock });
    expect(await refused(wrongRev)).toStrictEqual(['a new revision must name the current head as its prior revision', { record_id: r1.record_id, conflict: 'head_moved' }]);
    const wrongDigest = sealRecord({ ...base, prior: { ...refOf(r2), content_digest: r1.content_digest } }, { ids: randomIds, clock: systemClock });
    expect(await refused(wrongDigest)).toStrictEqual(['prior revision digest does not match the current head', { record_id: r1.record_id }]);
    // A first revision of a record that already has one (no prior named).
    let first = true;
    const sameId = { next: (prefix: string) => (first ? ((first = false), r1.record_id) : randomIds.next(prefix)) };
    const noPrior = note({ effect_id: 'eff_2', decision: 'again' }, { ids: sameId as typeof randomIds });
    expect(noPrior.record_id).toBe(r1.record_id);
    expect(await refused(noPrior)).toStrictEqual(['a new revision must name the current head as its prior revision', { record_id: r1.record_id, conflict: 'head_moved' }]);
    // A new record naming a prior revision that never existed.
    const orphan = sealRecord({ ...base, recordId: 'dec_never', prior: { object_id: 'dec_never', revision_id: 'rev_never', content_digest: r1.content_digest } }, { ids: randomIds, clock: systemClock });
    const err = await expectCodeAsync(store.ledger.settle({ reservation_id: id, outcome: { kind: 'unknown' }, at: NOW(), records: [orphan] }), 'invalid_request');
    expect([err.message, err.details]).toStrictEqual(['prior revision is unknown', { record_id: 'dec_never' }]);
    expect(head(store, 'dec_never')).toBeUndefined();
    await store.close();
  });
});
