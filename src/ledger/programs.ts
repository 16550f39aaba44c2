/**
 * The ledger's atomic operations (ADR-0014 "Shared budgets and final
 * admission") as transaction programs. Each runs entirely inside one durable
 * transaction: either every check passed and every row was written before
 * dispatch, or nothing changed.
 *
 * One module (~380 lines) on purpose: open, admit, settle and narrow share
 * the chain read and the journal write, and must lock in the same order;
 * split apart, that one rule would be spread over files.
 */
import { boundaryOf } from '../control/event.ts';
import { assertFences, fenceSetOf, streamsToRead, type ControlBoundaryRef, type StreamHead } from '../control/fence.ts';
import { streamKey, streamOf, type ControlScopeRef } from '../control/scope.ts';
import { permitsEffects, type AuthorityState } from '../control/state.ts';
import { contextInvalidated, deny, invalidRequest, limitExceeded } from '../errors.ts';
import { checkAmount } from './amount.ts';
import { checkChildCeilings, nextReservationStatus, planCharge, planSettlement, type BalanceDelta } from './rules.ts';
import {
  LEDGER_LIMITS,
  type AdmissionReceipt,
  type AdmissionRequest,
  type BudgetNode,
  type LedgerLimits,
  type OpenBudgetRequest,
  type PresetIssuance,
  type Reservation,
  type SettlementRequest,
  type TaskAdmissionRequest,
} from './types.ts';
import { digestOf } from '../records/digest.ts';
import { refOf, type Envelope } from '../records/envelope.ts';
import type { ControlEventInput } from '../control/event.ts';
import type { IdSource } from '../records/ids.ts';
import { appendControl, headOf, parseEventInput } from '../control/append.ts';
import { tx, type NodeRow, type Program, type ReservationRow } from '../store/tx/ops.ts';
import { putRecord } from '../records/put.ts';

const delegationScope = (space_id: string, node_id: string): ControlScopeRef => ({ space_id, scope_kind: 'delegation', scope_id: node_id });

/** The domain view of a node row (shared with the adapters' plain reads). */
export function nodeOf(row: NodeRow): BudgetNode {
  return {
    node_id: row.node_id,
    parent_id: row.parent_id,
    root_id: row.root_id,
    depth: Number(row.depth),
    space_id: row.space_id,
    owner_namespace: row.owner_namespace,
    not_after: row.not_after,
    issued_event: JSON.parse(row.issued_event),
  };
}

/**
 * ADR-0014 preset limits, from the store's own rows inside the issuing
 * transaction: shared by every process and kept across restarts (process
 * memory is never authority). The lock makes concurrent issuers from one
 * preset take turns where writers are not already serial.
 */
function* checkPreset(preset: PresetIssuance, at: string): Program<void> {
  yield* tx('lockPreset', preset.preset_id);
  if ((yield* tx('countPresetActiveRoots', preset.preset_id, at)) >= preset.max_active_roots) {
    throw limitExceeded('preset has reached its active-root limit', { bound: 'active_roots', preset: preset.preset_id });
  }
  const since = new Date(Date.parse(at) - 60_000).toISOString();
  if ((yield* tx('countPresetIssuedSince', preset.preset_id, since)) >= preset.max_per_minute) {
    throw limitExceeded('preset has reached its issuance rate', { bound: 'issuance_rate', preset: preset.preset_id });
  }
}

/**
 * Never-reserved roots that expired this long before `at` leave the live-root
 * table (capacity.ts pruneLiveRootsSql). The margin keeps a process whose
 * clock runs a little behind counting a root exactly as the rule says.
 */
const LIVE_ROOT_PRUNE_MARGIN_MS = 60_000;
const liveRootPruneHorizon = (at: string): string => new Date(Date.parse(at) - LIVE_ROOT_PRUNE_MARGIN_MS).toISOString();

function openDigest(req: OpenBudgetRequest): string {
  // The announcer, time and issuing preset are not part of what the node *is*: a
  // second gateway importing the same contract must find the same node (idempotent by content).
  const { at: _at, actor_ref: _actor, record, dimensions, preset: _preset, ...rest } = req;
  return digestOf({
    ...rest,
    record: record?.content_digest ?? null,
    dimensions: dimensions.map((d) => ({ ...d, ceiling: d.ceiling.toString() })),
  });
}

export function* openBudget(req: OpenBudgetRequest, ids: IdSource, limits: LedgerLimits = LEDGER_LIMITS): Program<BudgetNode> {
  const digest = openDigest(req);
  const existing = yield* tx('node', req.node_id, 'none');
  if (existing) {
    if (existing.request_digest === digest) return nodeOf(existing);
    throw invalidRequest('budget node already exists with other content', { node_id: req.node_id });
  }
  if (req.dimensions.length === 0 || req.dimensions.length > 16) throw limitExceeded('a budget has 1 to 16 dimensions');
  if (new Set(req.dimensions.map((d) => d.name)).size !== req.dimensions.length) throw invalidRequest('duplicate budget dimension');
  for (const d of req.dimensions) checkAmount(d.ceiling, `ceiling of ${d.name}`);
  if ((yield* tx('countRetained', req.owner_namespace, req.at)) >= limits.maxRetainedRecords) {
    throw limitExceeded('owner namespace holds the maximum number of retained records', { max: limits.maxRetainedRecords });
  }

  let root_id = req.node_id;
  let depth = 0;
  if (req.parent_id === undefined) {
    yield* tx('pruneLiveRoots', req.owner_namespace, liveRootPruneHorizon(req.at));
    if ((yield* tx('countActiveRoots', req.owner_namespace, req.at)) >= limits.maxActiveRoots) {
      throw limitExceeded('owner namespace has the maximum number of active roots', { max: limits.maxActiveRoots });
    }
    if (req.preset) yield* checkPreset(req.preset, req.at);
  } else {
    const parent = yield* tx('node', req.parent_id, 'share');
    if (!parent) throw invalidRequest('parent delegation is unknown', { parent_id: req.parent_id });
    if (parent.space_id !== req.space_id || parent.owner_namespace !== req.owner_namespace) {
      throw invalidRequest('a child cannot change space or owner namespace');
    }
    const head = yield* tx('streamHead', streamOf(delegationScope(parent.space_id, parent.node_id)), 'share');
    if (!head || !permitsEffects(head.state as AuthorityState)) {
      throw contextInvalidated('parent delegation does not permit new children', { parent_id: parent.node_id, state: head?.state ?? 'unresolved' });
    }
    if (Date.parse(req.not_after) > Date.parse(parent.not_after)) throw deny('child expiry is later than its parent', { failures: [{ dimension: 'expiry' }] });
    if (Date.parse(parent.not_after) <= Date.parse(req.at)) throw contextInvalidated('parent delegation has expired');
    depth = Number(parent.depth) + 1;
    root_id = parent.root_id;
    if (depth > limits.maxDepth) throw limitExceeded('delegation depth limit reached', { max: limits.maxDepth });
    if ((yield* tx('countDescendants', root_id)) >= limits.maxDescendants) {
      throw limitExceeded('root has the maximum number of descendants', { max: limits.maxDescendants });
    }
    const parentDims = (yield* tx('balances', [parent.node_id], 'none')).map((b) => ({ name: b.dimension, unit: b.unit, ceiling: BigInt(b.ceiling) }));
    const failures = checkChildCeilings(parentDims, req.dimensions);
    if (failures.length > 0) throw deny('child budget is wider than its parent', { failures });
  }

  if (req.record) yield* putRecord(req.record, req.at);
  const event = yield* appendControl(
    parseEventInput({
      event_type: 'rw003.delegation.issued',
      control_scope_ref: delegationScope(req.space_id, req.node_id),
      actor_ref: req.actor_ref,
      produced_records: req.record ? [refOf(req.record)] : [],
      idempotency_key: `issue:${req.node_id}`,
      payload: { parent_id: req.parent_id ?? null, root_id, depth },
    }),
    { at: req.at },
    ids,
  );
  const row: NodeRow = {
    node_id: req.node_id,
    parent_id: req.parent_id ?? null,
    preset_id: req.parent_id === undefined ? (req.preset?.preset_id ?? null) : null,
    root_id,
    depth,
    space_id: req.space_id,
    owner_namespace: req.owner_namespace,
    not_after: req.not_after,
    request_digest: digest,
    issued_event: JSON.stringify(boundaryOf(event)),
    created_at: req.at,
  };
  yield* tx('insertNode', row);
  // A new root is live until something under it is admitted and resolved.
  if (row.parent_id === null) yield* tx('refreshLiveRoot', row.node_id);
  for (const d of req.dimensions) {
    yield* tx('insertBalance', { node_id: req.node_id, dimension: d.name, unit: d.unit, ceiling: d.ceiling, consumed: 0n, reserved: 0n });
  }
  return nodeOf(row);
}

function admissionDigest(req: AdmissionRequest): string {
  return digestOf({
    effect_id: req.effect_id,
    reservation_id: req.reservation_id,
    node_id: req.node_id,
    kind: req.kind,
    amounts: stringAmounts(req.amounts),
    fence_set: req.fence_set,
    scopes: req.scopes,
    decision: req.decision.content_digest,
    attempt_scope: req.attempt_scope,
    records: (req.records ?? []).map((r) => r.content_digest),
    follow: req.follow?.attempt_id ?? null,
  });
}

const stringAmounts = (a: Record<string, bigint>): Record<string, string> =>
  Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v.toString()]));

/** Walks from the leaf to the root through trusted rows; returns root first. */
function* chainOf(leafId: string, maxDepth: number): Program<NodeRow[]> {
  const chain: NodeRow[] = [];
  let id: string | null = leafId;
  while (id !== null) {
    const row: NodeRow | undefined = yield* tx('node', id, 'share');
    if (!row) throw invalidRequest(chain.length === 0 ? 'delegation is unknown' : 'delegation lineage is broken', { node_id: id });
    if (chain.length > maxDepth + 1) throw invalidRequest('delegation lineage is too long');
    chain.unshift(row);
    id = row.parent_id;
  }
  return chain;
}

export function* admit(req: AdmissionRequest, ids: IdSource, limits: LedgerLimits = LEDGER_LIMITS): Program<AdmissionReceipt> {
  const digest = admissionDigest(req);
  const prior = yield* tx('reservationByEffect', req.effect_id);
  if (prior) {
    if (prior.request_digest !== digest) throw invalidRequest('effect id reused with different content', { effect_id: req.effect_id });
    return { ...(JSON.parse(prior.receipt) as AdmissionReceipt), status: prior.status as AdmissionReceipt['status'], replayed: true };
  }
  if (yield* tx('reservation', req.reservation_id, 'none')) throw invalidRequest('reservation id already used', { reservation_id: req.reservation_id });

  const chain = yield* chainOf(req.node_id, limits.maxDepth);
  const root = chain[0]!;
  if ((yield* tx('countRetained', root.owner_namespace, req.at)) >= limits.maxRetainedRecords) {
    throw limitExceeded('owner namespace holds the maximum number of retained records', { max: limits.maxRetainedRecords });
  }
  // The chain's balances are locked before the fence heads are share-locked:
  // admissions on one chain then queue on the balances holding nothing else,
  // and only the one admitting holds the heads. The other order let queued
  // admissions keep a head share-locked without a gap, so a revocation's
  // FOR UPDATE waited for as long as they kept coming (PostgreSQL, four racers).
  const nodeIds = chain.map((n) => n.node_id);
  const balances = (yield* tx('balances', nodeIds, 'update')).map((b) => ({ ...b, ceiling: BigInt(b.ceiling), consumed: BigInt(b.consumed), reserved: BigInt(b.reserved) }));
  // Fences: every ancestor delegation stream plus the caller-named authority scopes.
  const required = [...chain.map((n) => delegationScope(n.space_id, n.node_id)), ...req.scopes];
  const heads = new Map<string, StreamHead>();
  for (const s of streamsToRead(req.fence_set, required)) {
    const row = yield* tx('streamHead', s, 'share');
    if (row) heads.set(streamKey(s), headOf(row));
  }
  assertFences(req.fence_set, required, heads);
  for (const n of chain) {
    if (Date.parse(n.not_after) <= Date.parse(req.at)) throw contextInvalidated('a delegation in the chain has expired', { node_id: n.node_id });
  }

  const amounts = new Map(Object.entries(req.amounts));
  const deltas = planCharge(nodeIds, balances, amounts, req.kind);

  yield* putRecord(req.decision, req.at);
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
  yield* tx('insertReservation', {
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
    receipt: JSON.stringify(receipt),
    settlement: null,
    created_at: req.at,
    settled_at: null,
  });
  yield* tx('refreshLiveRoot', root.node_id);
  yield* applyAndJournal(req.reservation_id, deltas, 'admit', req.at);
  // The permission observation goes to the attempt audit stream, which no fence reads.
  yield* appendControl(
    parseEventInput({
      event_type: 'rw003.permission.evaluated',
      control_scope_ref: req.attempt_scope,
      actor_ref: req.actor_ref,
      produced_records: [refOf(req.decision)],
      fence_set: req.fence_set,
      idempotency_key: `admit:${req.effect_id}`,
      payload: { decision: 'allow', reservation_id: req.reservation_id, effect_id: req.effect_id },
    }),
    { at: req.at },
    ids,
  );
  yield* rideAlong(req.records, req.events, req.at, ids);
  if (req.follow) {
    const { attempt_id, lease_owner, lease_until, deadline } = req.follow;
    yield* tx('insertWork', { effect_id: req.effect_id, attempt_id, reservation_id: req.reservation_id, lease_owner, lease_until, tries: 0, deadline, created_at: req.at });
  }
  return receipt;
}

/**
 * A task's whole admission (TaskAdmissionRequest): budget nodes first, then
 * the admission over a fence set completed with the heads of the delegation
 * streams this transaction opened. Any refusal rolls all of it back, so a
 * refused send holds no root, no child and no preset capacity.
 */
export function* admitTask(req: TaskAdmissionRequest, ids: IdSource, limits: LedgerLimits = LEDGER_LIMITS): Program<AdmissionReceipt> {
  const opened: ControlScopeRef[] = [];
  for (const b of req.budgets) {
    const existed = yield* tx('node', b.node_id, 'none');
    yield* openBudget(b, ids, limits);
    if (!existed) opened.push(delegationScope(b.space_id, b.node_id));
  }
  const fresh: ControlBoundaryRef[] = [];
  for (const s of opened) {
    const row = yield* tx('streamHead', streamOf(s), 'share');
    if (row) fresh.push(boundaryOfHead(headOf(row)));
  }
  return yield* admit(req.admission([...fenceSetOf([...req.fence_set, ...fresh])]), ids, limits);
}

const boundaryOfHead = (h: StreamHead): ControlBoundaryRef => ({ project_id: h.project_id, branch_id: h.branch_id, position: h.position, event_id: h.event_id, event_digest: h.event_digest });

function* applyAndJournal(reservationId: string, deltas: readonly BalanceDelta[], reason: string, at: string): Program<void> {
  for (const d of deltas) {
    yield* tx('addToBalance', d.node_id, d.dimension, d.consumed, d.reserved);
    yield* tx('insertEntry', { reservation_id: reservationId, node_id: d.node_id, dimension: d.dimension, d_consumed: d.consumed, d_reserved: d.reserved, reason, at });
  }
}

const deltaJson = (d: BalanceDelta) => ({ node_id: d.node_id, dimension: d.dimension, consumed: d.consumed.toString(), reserved: d.reserved.toString() });
const deltaOf = (j: ReturnType<typeof deltaJson>): BalanceDelta => ({ node_id: j.node_id, dimension: j.dimension, consumed: BigInt(j.consumed), reserved: BigInt(j.reserved) });

export function reservationOf(row: ReservationRow): Reservation {
  return {
    reservation_id: row.reservation_id,
    effect_id: row.effect_id,
    root_id: row.root_id,
    chain: JSON.parse(row.chain),
    kind: row.kind as Reservation['kind'],
    amounts: JSON.parse(row.amounts),
    status: row.status as Reservation['status'],
    decision_ref: (JSON.parse(row.receipt) as AdmissionReceipt).decision_ref,
    created_at: row.created_at,
    settled_at: row.settled_at,
  };
}

export function* settle(req: SettlementRequest, ids: IdSource): Program<Reservation> {
  const result = yield* settleOnly(req);
  yield* rideAlong(req.records, req.events, req.at, ids);
  if (req.ends_follow) yield* tx('deleteWork', req.ends_follow);
  return result;
}

function* settleOnly(req: SettlementRequest): Program<Reservation> {
  const row = yield* tx('reservation', req.reservation_id, 'update');
  if (!row) throw invalidRequest('reservation is unknown', { reservation_id: req.reservation_id });
  const settlement = JSON.stringify({
    outcome: req.outcome.kind,
    actual: req.outcome.kind === 'measured' ? stringAmounts(Object.fromEntries(req.outcome.actual)) : undefined,
    evidence: req.evidence,
  });
  // Resolve-once: the same settlement again is a no-op, a different one an error.
  if (row.settlement !== null && row.status !== 'unknown' && row.settlement === settlement) return reservationOf(row);
  if (row.status === 'unknown' && req.outcome.kind !== 'unknown' && !req.evidence) {
    throw invalidRequest('leaving unknown requires reconciliation evidence', { reservation_id: req.reservation_id });
  }
  if (row.status === 'unknown' && req.outcome.kind === 'unknown') return reservationOf(row);
  const status = nextReservationStatus(row.status as Reservation['status'], req.outcome);
  const chain: string[] = JSON.parse(row.chain);
  const charged = (JSON.parse(row.charged) as ReturnType<typeof deltaJson>[]).map(deltaOf);
  const deltas = planSettlement(chain, charged, req.outcome);
  yield* applyAndJournal(req.reservation_id, deltas, `settle:${req.outcome.kind}`, req.at);
  yield* tx('resolveReservation', req.reservation_id, status, settlement, status === 'unknown' ? null : req.at);
  yield* tx('refreshLiveRoot', row.root_id);
  return { ...reservationOf(row), status, settled_at: status === 'unknown' ? null : req.at };
}

/** Records and audit events that commit with a ledger operation; authority streams never ride along. */
function* rideAlong(records: readonly Envelope[] | undefined, events: readonly ControlEventInput[] | undefined, at: string, ids: IdSource): Program<void> {
  for (const record of records ?? []) yield* putRecord(record, at);
  for (const event of events ?? []) {
    const parsed = parseEventInput(event);
    if (parsed.control_scope_ref.scope_kind !== 'attempt') throw invalidRequest('only audit events may ride along with a ledger operation');
    yield* appendControl(parsed, { at }, ids);
  }
}


/**
 * Narrows a node's ceilings (an amendment that lowers a budget, RW-003 §5:
 * amendments only narrow). A ceiling is never raised and never set below what
 * is already consumed and reserved: uncertain work keeps its hold. Returns
 * the ceilings now in force.
 */
export function* narrow(nodeId: string, ceilings: ReadonlyMap<string, bigint>): Program<Map<string, bigint>> {
  const node = yield* tx('node', nodeId, 'update');
  if (!node) throw invalidRequest('no budget node with that id', { node_id: nodeId });
  const out = new Map<string, bigint>();
  for (const b of yield* tx('balances', [nodeId], 'update')) {
    const wanted = ceilings.get(b.dimension);
    const floor = BigInt(b.consumed) + BigInt(b.reserved);
    const next = wanted === undefined || wanted >= BigInt(b.ceiling) ? BigInt(b.ceiling) : wanted < floor ? floor : wanted;
    if (next < BigInt(b.ceiling)) yield* tx('lowerCeiling', nodeId, b.dimension, next);
    out.set(b.dimension, next);
  }
  return out;
}
