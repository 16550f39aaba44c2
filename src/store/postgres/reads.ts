/**
 * The PostgreSQL primitives a transaction may send ahead of its program
 * (./transaction.ts, issue #24): reads, locks, and a verdict's resolution, each as the statements it sends and how
 * their answers become its result. The plain primitives (./ops.ts) run the
 * same statements, so a read sent ahead is the read the program would have
 * made.
 */
import { capacityOf, PRESET_HOLD_FN, presetLockSql, pruneThenCapacitySql } from '../capacity.ts';
import type { Call, HeadRow, Lock, NodeRow, PresetHold, ReservationRow, TxOps } from '../tx/ops.ts';
import type { Statement, StatementResult } from './pipeline.ts';
import { lineageSql } from '../tx/rows-sql.ts';

export interface ReadSpec {
  statements: Statement[];
  decode(results: readonly StatementResult[]): unknown;
}

export const lockSql = (lock: Lock) => (lock === 'update' ? ' FOR UPDATE' : lock === 'share' ? ' FOR SHARE' : '');

const rows = (results: readonly StatementResult[]) => results[0]?.rows ?? [];

type Specs = { [K in 'nodes' | 'streamHeads' | 'lockPreset' | 'rootCapacity' | 'reservationsClaiming' | 'lineage' | 'resolveHeld']: (...args: Parameters<TxOps[K]>) => ReadSpec };

export const READS: Specs = {
  nodes: (ids, lock) => ({
    statements: ids.length === 0 ? [] : [{ text: `SELECT * FROM ledger_nodes WHERE node_id = ANY($1) ORDER BY node_id${lockSql(lock)}`, values: [[...ids]] }],
    decode: (r) => rows(r) as NodeRow[],
  }),
  // Sorted, so concurrent transactions lock heads in one order (no deadlock).
  streamHeads: (streams, lock) => ({
    statements:
      streams.length === 0
        ? []
        : [
            {
              text: `SELECT h.* FROM control_heads h JOIN unnest($1::text[], $2::text[]) AS s(project_id, branch_id)
               ON h.project_id = s.project_id AND h.branch_id = s.branch_id ORDER BY h.project_id, h.branch_id${lockSql(lock)}${lock === 'none' ? '' : ' OF h'}`,
              values: [streams.map((x) => x.project_id), streams.map((x) => x.branch_id)],
            },
          ],
    decode: (r) => rows(r) as HeadRow[],
  }),
  // One statement whether or not the preset has locked before: the upsert locks the row it finds or inserts.
  lockPreset: (hold) => ({
    statements: [{ text: presetLockSql('$1'), values: [hold.preset_id] }],
    decode: () => undefined,
  }),
  rootCapacity: (ns, at, before, preset, claims) => {
    const values = { ns, at, before, preset: preset?.preset_id, since: preset?.since, effect: claims?.effect_id, reservation: claims?.reservation_id };
    const { text, names } = capacityText(preset !== undefined, claims !== undefined);
    return { statements: [{ text, values: names.map((n) => values[n]) }], decode: (r) => capacityOf(rows(r)[0] as never) };
  },
  // The locks of the nodes returned (FOR SHARE OF n), not of the walk's own reads.
  lineage: (id, max, lock) => ({
    statements: [{ text: lineageSql((i) => `$${i}`, lock === 'none' ? '' : `${lockSql(lock)} OF n`), values: [id, max] }],
    decode: (r) => rows(r) as NodeRow[],
  }),
  // READ COMMITTED: a concurrent resolution is waited for and the condition re-checked on the row it left.
  resolveHeld: (id, status, settlement, at) => ({
    statements: [
      {
        text: "UPDATE ledger_reservations SET status = $1, settlement = $2, settled_at = $3 WHERE reservation_id = $4 AND status = 'held' RETURNING *",
        values: [status, settlement, at, id],
      },
    ],
    decode: (r) => rows(r)[0] as ReservationRow | undefined,
  }),
  reservationsClaiming: (effectId, reservationId) => ({
    statements: [{ text: 'SELECT * FROM ledger_reservations WHERE effect_id = $1 OR reservation_id = $2', values: [effectId, reservationId] }],
    decode: (r) => rows(r) as ReservationRow[],
  }),
};

/**
 * The preset's lock taken where a planned transaction's write goes, with its
 * limits checked under it (capacity.ts PRESET_HOLD_FN_SQL): the statement
 * fails with BT001, a missed plan, when the preset has no room left by then.
 */
export const holdPresetStatement = (hold: PresetHold): Statement => ({
  text: `SELECT ${PRESET_HOLD_FN}($1, $2, $3, $4, $5)`,
  values: [hold.preset_id, hold.at, hold.since, hold.max_active_roots, hold.max_per_minute],
});

type CapacityParam = 'ns' | 'at' | 'before' | 'preset' | 'since' | 'effect' | 'reservation';
/** The capacity statement's text and parameter order, built once for each of its four variants (about 1.5 KB each). */
const capacityTexts = new Map<string, { text: string; names: CapacityParam[] }>();
function capacityText(withPreset: boolean, withClaims: boolean): { text: string; names: CapacityParam[] } {
  const key = `${withPreset}:${withClaims}`;
  let built = capacityTexts.get(key);
  if (!built) {
    const names: CapacityParam[] = [];
    const text = pruneThenCapacitySql((name) => `$${names.indexOf(name as CapacityParam) + 1 || names.push(name as CapacityParam)}`, withPreset, withClaims);
    capacityTexts.set(key, (built = { text, names }));
  }
  return built;
}

/** The statements of `call`, where it is a read that can go ahead; undefined otherwise. */
export function readSpec(call: Call): ReadSpec | undefined {
  const make = (READS as Partial<Record<string, (...a: unknown[]) => ReadSpec>>)[call.op];
  return make?.(...(call.args as unknown[]));
}
