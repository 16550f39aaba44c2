/**
 * The ledger's atomic operations (ADR-0014 "Shared budgets and final
 * admission") as transaction programs. Each runs entirely inside one durable
 * transaction: either every check passed and every row was written before
 * dispatch, or nothing changed. Opening nodes is ./open.ts, settling and
 * narrowing ./settle.ts; all three lock in the same order (nodes, balances,
 * heads) and write through one set-oriented batch per transaction
 * (src/store/tx/batch.ts: one statement per table, issue #24).
 */
import { assertFences, streamsToRead } from '../control/fence.ts';
import { streamOf } from '../control/scope.ts';
import { contextInvalidated, invalidRequest, limitExceeded } from '../errors.ts';
import { planCharge } from './rules.ts';
import { LEDGER_LIMITS, type AdmissionReceipt, type AdmissionRequest, type LedgerLimits, type TaskAdmissionRequest } from './types.ts';
import { refOf } from '../records/envelope.ts';
import type { IdSource } from '../records/ids.ts';
import { TxBatch } from '../store/tx/batch.ts';
import { tx, type NodeRow, type Program, type ReservationRow } from '../store/tx/ops.ts';
import { delegationScope, openNode, retainedIn } from './open.ts';
import { appendAudit, applyAndJournal, deltaJson } from './settle.ts';
import { admissionDigest, admissionEvents, stringAmounts, type Prepared } from './prepare.ts';
import { storedJson, StoredAmounts, StoredChain, StoredReceipt } from './stored.ts';

export { nodeOf, openBudget } from './open.ts';
export { narrow, reservationOf, settle } from './settle.ts';

/**
 * The receipt of an admission replayed: its row's columns, its stored
 * decision ref (stored.ts StoredReceipt), and the fence set of the request
 * replaying it, which is the admitted one (the request digests are equal).
 */
function replayedReceipt(row: ReservationRow, req: AdmissionRequest): AdmissionReceipt {
  return {
    effect_id: row.effect_id,
    reservation_id: row.reservation_id,
    chain: storedJson(StoredChain, row.chain, 'chain'),
    kind: row.kind as AdmissionReceipt['kind'],
    amounts: storedJson(StoredAmounts, row.amounts, 'amounts'),
    status: row.status as AdmissionReceipt['status'],
    fence_set: req.fence_set,
    decision_ref: storedJson(StoredReceipt, row.receipt, 'receipt').decision_ref,
    replayed: true,
  };
}

/**
 * The chain from the root down to `leafId`, root first, through trusted rows:
 * nodes this transaction opened from the batch, the first stored one with all
 * its stored ancestors in one statement (issue #24: one read per node before).
 */
function* chainOf(batch: TxBatch, leafId: string, maxDepth: number): Program<NodeRow[]> {
  const chain: NodeRow[] = [];
  let id: string | null = leafId;
  while (id !== null) {
    const known = batch.nodes.get(id);
    // A chain of more than maxDepth + 1 nodes is longer than any allowed: one more is all it takes to tell.
    const rows: NodeRow[] = known ? [known] : yield* tx('lineage', id, maxDepth + 2 - chain.length, 'share');
    if (rows.length === 0) throw invalidRequest(chain.length === 0 ? 'delegation is unknown' : 'delegation lineage is broken', { node_id: id });
    for (const row of rows) {
      // `chain` holds the nodes below this one.
      if (chain.length > maxDepth) throw invalidRequest('delegation lineage is too long');
      chain.unshift(row);
      id = row.parent_id;
    }
  }
  return chain;
}

/** `prep`: what ledger/prepare.ts computed before the transaction (absent: computed here). */
export function* admit(req: AdmissionRequest, ids: IdSource, limits: LedgerLimits = LEDGER_LIMITS, prep: Prepared = {}): Program<AdmissionReceipt> {
  const batch = new TxBatch(ids);
  const receipt = yield* admitIn(batch, req, limits, prep);
  yield* batch.flush();
  return receipt;
}

function* admitIn(batch: TxBatch, req: AdmissionRequest, limits: LedgerLimits, prep: Prepared): Program<AdmissionReceipt> {
  const digest = prep.admission ?? admissionDigest(req);
  // Read unless a new root's capacity statement already found neither id held (admitTask).
  const claimed = batch.claimsFree(req) ? [] : yield* tx('reservationsClaiming', req.effect_id, req.reservation_id);
  const prior = claimed.find((r) => r.effect_id === req.effect_id);
  if (prior) {
    if (prior.request_digest !== digest) throw invalidRequest('effect id reused with different content', { effect_id: req.effect_id });
    return replayedReceipt(prior, req);
  }
  if (claimed.length > 0) throw invalidRequest('reservation id already used', { reservation_id: req.reservation_id });

  const chain = yield* chainOf(batch, req.node_id, limits.maxDepth);
  const root = chain[0]!;
  if ((yield* retainedIn(batch, root.owner_namespace, req.at)) >= limits.maxRetainedRecords) {
    throw limitExceeded('owner namespace holds the maximum number of retained records', { max: limits.maxRetainedRecords });
  }
  // The chain's balances are locked before the fence heads are share-locked:
  // admissions on one chain then queue on the balances holding nothing else,
  // and only the one admitting holds the heads. The other order let queued
  // admissions keep a head share-locked without a gap, so a revocation's
  // FOR UPDATE waited for as long as they kept coming (PostgreSQL, four racers).
  const nodeIds = chain.map((n) => n.node_id);
  // A chain this transaction opened is known as it stands (no other transaction sees it yet): not read again.
  const rows = batch.newBalances(nodeIds) ?? (yield* batch.storedBalances(nodeIds, 'update'));
  const balances = rows.map((b) => ({ ...{}, ...b, ceiling: BigInt(b.ceiling), consumed: BigInt(b.consumed), reserved: BigInt(b.reserved) }));
  // Fences: every ancestor delegation stream plus the caller-named authority scopes, read in one statement.
  const required = [...chain.map((n) => delegationScope(n.space_id, n.node_id)), ...req.scopes];
  const toRead = streamsToRead(req.fence_set, required);
  // Where writers are serial nothing is locked: the audit stream this admission appends to is read with the fence's (one statement, issue #24).
  const audit = (yield* tx('serialWriters')) ? [streamOf(req.attempt_scope)] : [];
  yield* batch.load([...toRead, ...audit], 'share');
  assertFences(req.fence_set, required, batch.known(toRead));
  for (const n of chain) {
    if (Date.parse(n.not_after) <= Date.parse(req.at)) throw contextInvalidated('a delegation in the chain has expired', { reason: 'expired', node_id: n.node_id });
  }

  const amounts = new Map(Object.entries(req.amounts));
  const deltas = planCharge(nodeIds, balances, amounts, req.kind);

  batch.put(req.decision, req.at);
  const status = req.kind === 'consume' ? 'consumed' : 'held';
  const receipt: AdmissionReceipt = {
    effect_id: req.effect_id,
    reservation_id: req.reservation_id,
    chain: nodeIds,
    kind: req.kind,
    amounts: stringAmounts(req.amounts),
    status,
    fence_set: req.fence_set,
    decision_ref: refOf(req.decision),
    replayed: false,
  };
  batch.reserve({
    reservation_id: req.reservation_id,
    effect_id: req.effect_id,
    root_id: root.node_id,
    owner_namespace: root.owner_namespace,
    chain: JSON.stringify(nodeIds),
    kind: req.kind,
    amounts: JSON.stringify(receipt.amounts),
    charged: JSON.stringify(deltas.map(deltaJson)),
    status,
    request_digest: digest,
    receipt: JSON.stringify({ decision_ref: receipt.decision_ref }),
    settlement: null,
    created_at: req.at,
    settled_at: null,
  });
  yield* applyAndJournal(batch, req.reservation_id, deltas, 'admit', req.at);
  // The permission observation, then what rides along, go to the attempt audit stream, which no fence reads.
  for (const record of req.records ?? []) batch.put(record, req.at);
  yield* appendAudit(batch, admissionEvents(req), req.at, prep.events);
  if (req.follow) {
    const { attempt_id, lease_owner, lease_until, deadline, gateway_id } = req.follow;
    batch.follow({ effect_id: req.effect_id, attempt_id, reservation_id: req.reservation_id, lease_owner, lease_until, tries: 0, deadline, created_at: req.at, gateway_id: gateway_id ?? null });
  }
  return receipt;
}

/**
 * A task's whole admission (TaskAdmissionRequest): budget nodes first, then
 * the admission, planned before the transaction over a fence set that holds
 * the heads the new nodes' streams get here (plan.ts): the fence check below
 * finds them as planned, or refuses. Any refusal rolls all of it back, so a
 * refused send holds no root, no child and no preset capacity.
 */
export function* admitTask(req: TaskAdmissionRequest, ids: IdSource, limits: LedgerLimits = LEDGER_LIMITS, prep: Prepared = {}): Program<AdmissionReceipt> {
  const batch = new TxBatch(ids);
  const admission = req.admission;
  // What this admission reads about its own new nodes, streams and attempt, each in one statement.
  // Only new nodes' streams (and the task's attempt stream) are read ahead: they have no rows yet, so
  // nothing is locked out of the order below (balances, then heads). Where writers are serial no read
  // locks anything, and the fence's streams join them: admitIn then finds them known (issue #24).
  yield* batch.loadNodes(req.budgets.map((b) => b.node_id), 'none');
  const fresh = req.budgets.filter((b) => batch.nodes.get(b.node_id) === null);
  if (fresh.length > 0) {
    const fence = (yield* tx('serialWriters')) ? admission.fence_set : [];
    yield* batch.load([...fresh.map((b) => streamOf(delegationScope(b.space_id, b.node_id))), streamOf(admission.attempt_scope), ...fence], 'update');
  }
  batch.expectClaims(admission);
  // The retained-records count is the admission's below: within one transaction it only grows.
  for (const b of req.budgets) yield* openNode(b, batch, limits, false, prep.opens?.get(b.node_id));
  const receipt = yield* admitIn(batch, admission, limits, prep);
  yield* batch.flush();
  return receipt;
}