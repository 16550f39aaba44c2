/**
 * Opening a budget node (ADR-0014: a delegation record and its budget commit
 * together) as a transaction program, over the set-oriented batch of the
 * transaction it runs in (src/store/tx/batch.ts).
 */
import { boundaryOf } from '../control/event.ts';
import type { ControlBoundaryRef } from '../control/fence.ts';
import { streamOf } from '../control/scope.ts';
import { permitsEffects, type AuthorityState } from '../control/state.ts';
import { contextInvalidated, deny, invalidRequest, limitExceeded } from '../errors.ts';
import type { IdSource } from '../records/ids.ts';
import { TxBatch } from '../store/tx/batch.ts';
import { tx, type NodeRow, type Program, type RootCapacity } from '../store/tx/ops.ts';
import { checkAmount } from './amount.ts';
import { delegationScope, issuedEventInput } from './plan.ts';
import { openDigest } from './prepare.ts';
import { checkChildCeilings } from './rules.ts';
import { storedBoundary } from './stored.ts';
import { LEDGER_LIMITS, LIVE_ROOT_PRUNE_MARGIN_S, type BudgetNode, type LedgerLimits, type OpenBudgetRequest, type PresetIssuance } from './types.ts';

export { delegationScope } from './plan.ts';

/** The domain view of a node row (shared with the adapters' plain reads); `issued`: the boundary just written, not read back. */
export function nodeOf(row: NodeRow, issued?: ControlBoundaryRef): BudgetNode {
  return {
    node_id: row.node_id,
    parent_id: row.parent_id,
    root_id: row.root_id,
    depth: Number(row.depth),
    space_id: row.space_id,
    owner_namespace: row.owner_namespace,
    not_after: row.not_after,
    issued_event: issued ?? storedBoundary(row.issued_event),
  };
}

/**
 * ADR-0014 preset limits, from the store's own rows inside the issuing
 * transaction: shared by every process and kept across restarts (process
 * memory is never authority). The lock makes concurrent issuers from one
 * preset take turns where writers are not already serial; the counts are
 * read after it, so each issuer sees the roots the one before it committed.
 */
function checkPreset(preset: PresetIssuance, capacity: RootCapacity): void {
  if (capacity.preset_active >= preset.max_active_roots) {
    throw limitExceeded('preset has reached its active-root limit', { bound: 'active_roots', preset: preset.preset_id });
  }
  if (capacity.preset_issued >= preset.max_per_minute) {
    throw limitExceeded('preset has reached its issuance rate', { bound: 'issuance_rate', preset: preset.preset_id });
  }
}

/** Never-reserved roots that expired a margin before `at` leave the live-root table (store/capacity.ts pruneLiveRootsSql). */
const liveRootPruneHorizon = (at: string): string => new Date(Date.parse(at) - LIVE_ROOT_PRUNE_MARGIN_S * 1000).toISOString();

/** A node by id: one this transaction created, else the stored row. */
function* nodeIn(batch: TxBatch, id: string, lock: 'none' | 'share' | 'update'): Program<NodeRow | undefined> {
  const known = batch.nodes.get(id);
  if (known !== undefined) return known ?? undefined;
  return yield* tx('node', id, lock);
}

export function* openBudget(req: OpenBudgetRequest, ids: IdSource, limits: LedgerLimits = LEDGER_LIMITS): Program<BudgetNode> {
  const batch = new TxBatch(ids);
  const node = yield* openNode(req, batch, limits, true);
  yield* batch.flush();
  return node;
}

/**
 * Opens one node inside `batch`'s transaction; an identical node already
 * there is returned as it is, nothing written. `checkRetained` false
 * leaves the retained-records count to the admission that follows in the
 * same transaction: counts only grow within it, so the admission's count is
 * the largest and refuses whenever an earlier one would have.
 */
export function* openNode(req: OpenBudgetRequest, batch: TxBatch, limits: LedgerLimits, checkRetained: boolean, digest = openDigest(req)): Program<BudgetNode> {
  const existing = yield* nodeIn(batch, req.node_id, 'none');
  if (existing) {
    if (existing.request_digest === digest) return nodeOf(existing);
    throw invalidRequest('budget node already exists with other content', { node_id: req.node_id });
  }
  if (req.dimensions.length === 0 || req.dimensions.length > 16) throw limitExceeded('a budget has 1 to 16 dimensions');
  if (new Set(req.dimensions.map((d) => d.name)).size !== req.dimensions.length) throw invalidRequest('duplicate budget dimension');
  for (const d of req.dimensions) checkAmount(d.ceiling, `ceiling of ${d.name}`);
  if (checkRetained && (yield* retainedIn(batch, req.owner_namespace, req.at)) >= limits.maxRetainedRecords) {
    throw limitExceeded('owner namespace holds the maximum number of retained records', { max: limits.maxRetainedRecords });
  }
  const placed = req.parent_id === undefined ? yield* placeRoot(req, batch, limits) : yield* placeChild(req, req.parent_id, batch, limits);

  if (req.record) batch.put(req.record, req.at);
  // The event id the plan fixed, so the stream's head is the one the admission's fence already names (plan.ts).
  // As the plan composed it (plan.ts), where the plan placed the node and its stream is still new; else composed here.
  const planned = req.planned_issue;
  const fromPlan = planned && planned.placed.root_id === placed.root_id && planned.placed.depth === placed.depth ? yield* batch.appendPlanned([planned.composed], undefined) : undefined;
  const event = fromPlan?.[0] ?? (yield* batch.append(issuedEventInput(req, placed), req.at, req.issued_event_id));
  const issued = boundaryOf(event);
  const row: NodeRow = {
    node_id: req.node_id,
    parent_id: req.parent_id ?? null,
    preset_id: req.parent_id === undefined ? (req.preset?.preset_id ?? null) : null,
    ...placed,
    space_id: req.space_id,
    owner_namespace: req.owner_namespace,
    not_after: req.not_after,
    request_digest: digest,
    issued_event: JSON.stringify(issued),
    created_at: req.at,
  };
  // Written with the other nodes this transaction opens, one statement per table (TxBatch.writeNodes).
  batch.open(row, req.dimensions.map((d) => ({ node_id: req.node_id, dimension: d.name, unit: d.unit, ceiling: d.ceiling, consumed: 0n, reserved: 0n })));
  return nodeOf(row, issued);
}

/**
 * Retained records of a namespace, counting every node this transaction
 * opened (capacity.ts retainedSql): from the count its root's capacity
 * statement read when it can be carried forward (TxBatch.retainedNow), else
 * counted again.
 */
export function* retainedIn(batch: TxBatch, ownerNamespace: string, at: string): Program<number> {
  const known = batch.retainedNow(ownerNamespace, at);
  if (known !== undefined) return known;
  yield* batch.writeNodes();
  return yield* tx('countRetained', ownerNamespace, at);
}

/** A root's descendants: counted in memory for a root this transaction opened (none stored), else in the store. */
function* descendantsIn(batch: TxBatch, rootId: string): Program<number> {
  const known = batch.descendantsOfNew(rootId);
  if (known !== undefined) return known;
  yield* batch.writeNodes();
  return yield* tx('countDescendants', rootId);
}

/** ADR-0014 capacity for a new root: active roots per namespace, and its preset's limits. */
function* placeRoot(req: OpenBudgetRequest, batch: TxBatch, limits: LedgerLimits): Program<{ root_id: string; depth: number }> {
  // The counts below read the nodes and live roots: those this transaction opened are written first.
  yield* batch.writeNodes();
  const since = new Date(Date.parse(req.at) - 60_000).toISOString();
  if (req.preset) {
    const { preset_id, max_active_roots, max_per_minute } = req.preset;
    yield* tx('lockPreset', { preset_id, at: req.at, since, max_active_roots, max_per_minute });
  }
  // Every count in one statement (issue #24), read after the preset's lock (on PostgreSQL's planned path before it,
  // and checked again under it: TxOps.lockPreset), with the prune of the namespace's live roots.
  // The admission's claims ride along (admitTask): its own read of them is then one statement saved.
  const claims = batch.claimsToCount();
  const capacity = yield* tx('rootCapacity', req.owner_namespace, req.at, liveRootPruneHorizon(req.at), req.preset ? { preset_id: req.preset.preset_id, since } : undefined, claims);
  batch.noteRetained(req.owner_namespace, req.at, capacity.retained);
  if (claims) batch.noteClaimed(claims, capacity.claimed);
  if (capacity.active_roots >= limits.maxActiveRoots) {
    throw limitExceeded('owner namespace has the maximum number of active roots', { max: limits.maxActiveRoots });
  }
  if (req.preset) checkPreset(req.preset, capacity);
  return { root_id: req.node_id, depth: 0 };
}

/** A child under an active, unexpired parent, within its ceilings, depth and the root's descendant limit. */
function* placeChild(req: OpenBudgetRequest, parentId: string, batch: TxBatch, limits: LedgerLimits): Program<{ root_id: string; depth: number }> {
  const parent = yield* nodeIn(batch, parentId, 'share');
  if (!parent) throw invalidRequest('parent delegation is unknown', { parent_id: parentId });
  if (parent.space_id !== req.space_id || parent.owner_namespace !== req.owner_namespace) {
    throw invalidRequest('a child cannot change space or owner namespace');
  }
  const head = yield* batch.head(streamOf(delegationScope(parent.space_id, parent.node_id)), 'share');
  if (!head || !permitsEffects(head.state as AuthorityState)) {
    throw contextInvalidated('parent delegation does not permit new children', { parent_id: parent.node_id, state: head?.state ?? 'unresolved' });
  }
  if (Date.parse(req.not_after) > Date.parse(parent.not_after)) throw deny('child expiry is later than its parent', { failures: [{ dimension: 'expiry' }] });
  if (Date.parse(parent.not_after) <= Date.parse(req.at)) throw contextInvalidated('parent delegation has expired', { reason: 'expired', parent_id: parent.node_id });
  const depth = Number(parent.depth) + 1;
  if (depth > limits.maxDepth) throw limitExceeded('delegation depth limit reached', { max: limits.maxDepth });
  if ((yield* descendantsIn(batch, parent.root_id)) >= limits.maxDescendants) {
    throw limitExceeded('root has the maximum number of descendants', { max: limits.maxDescendants });
  }
  const rows = batch.balances.get(parent.node_id) ?? (yield* batch.storedBalances([parent.node_id], 'none'));
  const failures = checkChildCeilings(rows.map((b) => ({ name: b.dimension, unit: b.unit, ceiling: BigInt(b.ceiling) })), req.dimensions);
  if (failures.length > 0) throw deny('child budget is wider than its parent', { failures });
  return { root_id: parent.root_id, depth };
}
