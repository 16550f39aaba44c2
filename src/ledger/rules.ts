/**
 * The pure budget rules of ADR-0014 "Shared budgets and final admission".
 * Every charge debits the root, every ancestor and the child together;
 * children are ceilings within the same root allowance, never fresh copies.
 * Adapters read balances under lock, call these, and write what they return.
 */
import { deny, invalidRequest, limitExceeded } from '../errors.ts';
import { MAX_AMOUNT, type BudgetDimension } from './amount.ts';

export interface Balance {
  node_id: string;
  dimension: string;
  ceiling: bigint;
  consumed: bigint;
  reserved: bigint;
}

/** A change to one balance row. Deltas may be negative only for `reserved` on release. */
export interface BalanceDelta {
  node_id: string;
  dimension: string;
  consumed: bigint;
  reserved: bigint;
}

export type ChargeKind = 'consume' | 'reserve';

export interface ChargeFailure {
  node_id: string;
  dimension: string;
  requested: string;
  available: string;
}

/**
 * Plans one charge over the chain (root first). `balances` holds every row of
 * every chain node. A dimension the root does not declare is no authority at
 * all; a node that omits a dimension inherits its ancestors' ceilings.
 */
export function planCharge(
  chain: readonly string[],
  balances: readonly Balance[],
  amounts: ReadonlyMap<string, bigint>,
  kind: ChargeKind,
): BalanceDelta[] {
  const root = chain[0];
  if (root === undefined) throw invalidRequest('admission needs a budget chain');
  if (amounts.size === 0) throw invalidRequest('a charge names at least one dimension');
  const byKey = new Map(balances.map((b) => [`${b.node_id}\u0000${b.dimension}`, b]));
  const deltas: BalanceDelta[] = [];
  const failures: ChargeFailure[] = [];
  for (const [dimension, amount] of amounts) {
    if (amount <= 0n || amount > MAX_AMOUNT) throw invalidRequest('charge amounts are positive and representable', { dimension });
    if (!byKey.has(`${root}\u0000${dimension}`)) throw deny('the root grants no authority in this budget dimension', { dimension });
    for (const node_id of chain) {
      const b = byKey.get(`${node_id}\u0000${dimension}`);
      if (!b) continue;
      const available = b.ceiling - b.consumed - b.reserved;
      if (amount > available) failures.push({ node_id, dimension, requested: amount.toString(), available: available.toString() });
      deltas.push({ node_id, dimension, consumed: kind === 'consume' ? amount : 0n, reserved: kind === 'reserve' ? amount : 0n });
    }
  }
  if (failures.length > 0) throw limitExceeded('budget exhausted', { failures });
  return deltas;
}

export type SettlementOutcome =
  /** Confirmed never dispatched: the whole reservation is released. */
  | { kind: 'not_dispatched' }
  /** Confirmed measured result: actual is consumed, only the proven unused rest released. */
  | { kind: 'measured'; actual: ReadonlyMap<string, bigint> }
  /** The effect may have happened: everything stays held until reconciliation. */
  | { kind: 'unknown' };

export type ReservationStatus = 'held' | 'unknown' | 'settled' | 'released' | 'consumed';

/** Which status transitions exist. Final states never move again (resolve-once). */
export function nextReservationStatus(current: ReservationStatus, outcome: SettlementOutcome): ReservationStatus {
  if (current !== 'held' && current !== 'unknown') {
    throw invalidRequest('reservation is already resolved', { status: current });
  }
  if (outcome.kind === 'unknown') return 'unknown';
  return outcome.kind === 'not_dispatched' ? 'released' : 'settled';
}

/** Balance deltas that settle a held reservation of `reserved` on every node of `chain`. */
export function planSettlement(
  chain: readonly string[],
  charged: readonly BalanceDelta[],
  outcome: SettlementOutcome,
): BalanceDelta[] {
  if (outcome.kind === 'unknown') return [];
  const out: BalanceDelta[] = [];
  for (const c of charged) {
    if (!chain.includes(c.node_id)) continue;
    const actual = outcome.kind === 'measured' ? (outcome.actual.get(c.dimension) ?? 0n) : 0n;
    if (actual < 0n) throw invalidRequest('measured amounts are not negative', { dimension: c.dimension });
    if (actual > c.reserved) {
      // The trusted maximum was exceeded: that is a provider fault to reconcile, not a bigger debit.
      throw invalidRequest('measured amount exceeds the reserved maximum', { dimension: c.dimension });
    }
    out.push({ node_id: c.node_id, dimension: c.dimension, consumed: actual, reserved: -c.reserved });
  }
  if (outcome.kind === 'measured') {
    for (const d of outcome.actual.keys()) {
      if (!charged.some((c) => c.dimension === d)) throw invalidRequest('measured a dimension that was not reserved', { dimension: d });
    }
  }
  return out;
}

export interface OpenNodeFailure {
  dimension: string;
  reason: 'wider_than_parent' | 'parent_lacks_dimension';
}

/**
 * Checks a child's ceilings against its parent's: never wider, never a
 * dimension the parent lacks. Every failure is reported.
 */
export function checkChildCeilings(parent: readonly BudgetDimension[], child: readonly BudgetDimension[]): OpenNodeFailure[] {
  const p = new Map(parent.map((d) => [d.name, d]));
  const failures: OpenNodeFailure[] = [];
  for (const d of child) {
    const pd = p.get(d.name);
    if (!pd || pd.unit !== d.unit) failures.push({ dimension: d.name, reason: 'parent_lacks_dimension' });
    else if (d.ceiling > pd.ceiling) failures.push({ dimension: d.name, reason: 'wider_than_parent' });
  }
  return failures;
}

/** Folds deltas into balances; throws if any row would leave [0, ceiling]. */
export function applyDeltas(balances: readonly Balance[], deltas: readonly BalanceDelta[]): Balance[] {
  const next = new Map(balances.map((b) => [`${b.node_id}\u0000${b.dimension}`, { ...b }]));
  for (const d of deltas) {
    const b = next.get(`${d.node_id}\u0000${d.dimension}`);
    if (!b) throw new TypeError(`no balance row for ${d.node_id}/${d.dimension}`);
    b.consumed += d.consumed;
    b.reserved += d.reserved;
    if (b.consumed < 0n || b.reserved < 0n || b.consumed + b.reserved > b.ceiling) {
      throw new RangeError(`balance ${d.node_id}/${d.dimension} would leave [0, ceiling]`);
    }
  }
  return [...next.values()];
}
