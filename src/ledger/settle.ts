/**
 * Settling a reservation (ADR-0014 resolve-once) and narrowing a node's
 * ceilings, as transaction programs over the set-oriented batch
 * (src/store/tx/batch.ts).
 */
import type { ParsedEventInput } from '../control/event.ts';
import { checkFences, streamsToRead } from '../control/fence.ts';
import { streamOf } from '../control/scope.ts';
import { contextInvalidated, invalidRequest } from '../errors.ts';
import type { IdSource } from '../records/ids.ts';
import { TxBatch } from '../store/tx/batch.ts';
import { tx, type Program, type ReservationRow } from '../store/tx/ops.ts';
import { nextReservationStatus, planSettlement, type BalanceDelta } from './rules.ts';
import { storedCharges, storedJson, StoredAmounts, StoredChain, StoredReceipt } from './stored.ts';
import type { Reservation, SettlementRequest } from './types.ts';
import { rideAlongEvents, stringAmounts, type PlannedEvents, type Prepared } from './prepare.ts';

export const deltaJson = (d: BalanceDelta) => ({ node_id: d.node_id, dimension: d.dimension, consumed: d.consumed.toString(), reserved: d.reserved.toString() });

/**
 * Journals balance deltas (ledger_entries) and charges them to their rows,
 * both written with the batch: a node this transaction opened has its rows
 * inserted charged, a stored one has them updated (TxBatch.journal).
 */
export function* applyAndJournal(batch: TxBatch, reservationId: string, deltas: readonly BalanceDelta[], reason: string, at: string): Program<void> {
  batch.journal(deltas.map((d) => ({ reservation_id: reservationId, node_id: d.node_id, dimension: d.dimension, d_consumed: d.consumed, d_reserved: d.reserved, reason, at })));
}

/** The domain view of a reservation row; `chain`: the row's chain, when the caller parsed it already. */
export function reservationOf(row: ReservationRow, chain?: string[]): Reservation {
  return {
    reservation_id: row.reservation_id,
    effect_id: row.effect_id,
    root_id: row.root_id,
    chain: chain ?? storedJson(StoredChain, row.chain, 'chain'),
    kind: row.kind as Reservation['kind'],
    amounts: storedJson(StoredAmounts, row.amounts, 'amounts'),
    status: row.status as Reservation['status'],
    decision_ref: storedJson(StoredReceipt, row.receipt, 'receipt').decision_ref,
    created_at: row.created_at,
    settled_at: row.settled_at,
  };
}

/** `prep`: what ledger/prepare.ts computed before the transaction (absent: computed here). */
export function* settle(req: SettlementRequest, ids: IdSource, prep: Prepared = {}): Program<Reservation> {
  const batch = new TxBatch(ids);
  // Audit events only: authority streams never ride along.
  const audit = rideAlongEvents(req.events);
  const streams = audit.map((e) => streamOf(e.control_scope_ref));
  const serial = yield* tx('serialWriters');
  // Where writers are not serial, the heads the audit events append to are read (and locked) first: the read
  // then goes to PostgreSQL with BEGIN and the resolution below, in one round trip (postgres/transaction.ts).
  if (!serial) yield* batch.load(streams, 'update');
  const { result, leftHeld } = yield* settleOnly(req, batch);
  // Where writers are serial nothing is locked: a verdict's fenced heads are read with the heads its audit
  // events append to, in one statement (issue #24).
  if (req.fences && serial) yield* batch.load([...streamsToRead(req.fences.fence_set, req.fences.scopes), ...streams], 'update');
  // Records and audit events that commit with the settlement.
  for (const record of req.records ?? []) batch.put(record, req.at);
  yield* appendAudit(batch, audit, req.at, prep.events);
  // A reservation that left `held` here ended its effect's follow-up in the same statement (work-sql.ts workEndsOnResolveSql).
  if (req.ends_follow && !(leftHeld && req.ends_follow === result.effect_id)) batch.endFollow(req.ends_follow);
  else if (req.ends_follow) batch.followEndsOnResolve(req.ends_follow);
  yield* batch.flush();
  if (req.fences) yield* fencesHold(batch, req.fences);
  return result;
}

/** The reservation as settled, and whether this settlement moved it out of `held`. */
function* settleOnly(req: SettlementRequest, batch: TxBatch): Program<{ result: Reservation; leftHeld: boolean }> {
  const settlement = JSON.stringify({
    outcome: req.outcome.kind,
    actual: req.outcome.kind === 'measured' ? stringAmounts(Object.fromEntries(req.outcome.actual)) : undefined,
    evidence: req.evidence,
  });
  // The common case, a reservation still held, resolves in one conditional statement (issue #24); the
  // row it returns is the one it locked and changed. Anything else is read and decided below.
  const held = nextReservationStatus('held', req.outcome);
  const resolved = yield* tx('resolveHeld', req.reservation_id, held, settlement, held === 'unknown' ? null : req.at);
  if (resolved) return { result: yield* settled(req, batch, resolved), leftHeld: true };
  if (req.held_only) throw invalidRequest('reservation is no longer held', { reservation_id: req.reservation_id, conflict: 'not_held' });
  const row = yield* tx('reservation', req.reservation_id, 'update');
  if (!row) throw invalidRequest('reservation is unknown', { reservation_id: req.reservation_id });
  // Resolve-once: the same settlement again is a no-op, a different one an error.
  if (row.settlement !== null && row.status !== 'unknown' && row.settlement === settlement) return { result: reservationOf(row), leftHeld: false };
  if (row.status === 'unknown' && req.outcome.kind !== 'unknown' && !req.evidence) {
    throw invalidRequest('leaving unknown requires reconciliation evidence', { reservation_id: req.reservation_id });
  }
  if (row.status === 'unknown' && req.outcome.kind === 'unknown') return { result: reservationOf(row), leftHeld: false };
  const status = nextReservationStatus(row.status as Reservation['status'], req.outcome);
  yield* tx('resolveReservation', req.reservation_id, status, settlement, status === 'unknown' ? null : req.at);
  // Not held when resolveHeld above looked (only another writer's resolution could change that since).
  return { result: yield* settled(req, batch, { ...{}, ...row, status, settlement, settled_at: status === 'unknown' ? null : req.at }), leftHeld: false };
}

/**
 * A verdict's fences, checked in its own transaction (SettlementRequest.fences),
 * last: on PostgreSQL the fenced heads are then share-locked after the
 * balances the flush charged, the order an admission takes them in
 * (programs.ts admitIn), so a revocation queued on one of those heads cannot
 * close a cycle between a verdict and an admission. A refusal rolls back
 * everything the program wrote.
 */
function* fencesHold(batch: TxBatch, fences: NonNullable<SettlementRequest['fences']>): Program<void> {
  const toRead = streamsToRead(fences.fence_set, fences.scopes);
  yield* batch.load(toRead, 'share');
  const failures = checkFences(fences.fence_set, fences.scopes, batch.known(toRead));
  if (failures.length > 0) throw contextInvalidated('a control fence moved before the verdict committed', { conflict: 'fences_moved', failures });
}

/** Releases and charges what a reservation resolved to `row` (its new status) leaves; a refusal here rolls the resolution back. */
function* settled(req: SettlementRequest, batch: TxBatch, row: ReservationRow): Program<Reservation> {
  const chain = storedJson(StoredChain, row.chain, 'chain');
  const charged = storedCharges(row.charged);
  const deltas = planSettlement(chain, charged, req.outcome);
  yield* applyAndJournal(batch, req.reservation_id, deltas, `settle:${req.outcome.kind}`, req.at);
  return reservationOf(row, chain);
}

/**
 * Appends audit events to their attempt stream: as `planned` (these very
 * events, prepared from the same request: ledger/prepare.ts) composed them
 * before the transaction where the stream's head is still the one they were
 * composed on, else composed here on the head there is.
 */
export function* appendAudit(batch: TxBatch, events: readonly ParsedEventInput[], at: string, planned?: PlannedEvents): Program<void> {
  if (planned && (yield* batch.appendPlanned(planned.composed, planned.base)) !== undefined) return;
  for (const event of events) yield* batch.append(event, at);
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
