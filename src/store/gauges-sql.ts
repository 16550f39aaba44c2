/**
 * Read-only aggregates behind the Prometheus gauges (issue #17): what is
 * durable state, not a count of events — held and unknown reservations and
 * the oldest one, active roots and budgets per preset, the push outbox. The
 * SQL is written once for both dialects and every query walks an index
 * bounded by live work (the unresolved-reservation index, the per-preset
 * root index, the outbox's status index), so a scrape stays cheap however
 * long the history grows.
 */
import type { AuditDialect } from './audit-sql.ts';
import { presetActiveRootsSql } from './capacity.ts';

export interface GaugeSnapshot {
  /** Unresolved reservations by status, with the oldest one's creation time. */
  reservations: Array<{ status: 'held' | 'unknown'; count: number; oldest: string | null }>;
  /** Roots of each preset still holding capacity (the same rule as the preset's active-root limit). */
  activeRoots: Array<{ preset: string; count: number }>;
  /** Budgets over each preset's unexpired roots, per dimension. */
  budgets: Array<{ preset: string; dimension: string; ceiling: number; consumed: number; reserved: number }>;
  /** Outbox deliveries by status (pending, delivering, dead). */
  outbox: Array<{ status: string; count: number }>;
}

export interface GaugeReads {
  /** One snapshot for the given presets (bounded: configured presets only) at `at`. */
  snapshot(presets: readonly string[], at: string): Promise<GaugeSnapshot>;
}

type Values = Record<string, unknown>;

export function composeGauges({ p, all }: AuditDialect): GaugeReads {
  /** Renders named placeholders positionally, in the order they appear in the text. */
  const run = <T>(sql: (ph: (name: string) => string) => string, values: Values): Promise<T[]> => {
    const params: unknown[] = [];
    const text = sql((name) => (params.push(values[name]), p(params.length)));
    return all<T>(text, params);
  };
  const num = (v: unknown) => Number(v ?? 0);
  return {
    snapshot: async (presets, at) => {
      const reservations = await run<{ status: 'held' | 'unknown'; n: unknown; oldest: string | null }>(
        () => `SELECT status, count(*) AS n, min(created_at) AS oldest FROM ledger_reservations WHERE status IN ('held', 'unknown') GROUP BY status`,
        {},
      );
      const activeRoots = [];
      for (const preset of presets) {
        const [row] = await run<{ n: unknown }>((ph) => presetActiveRootsSql((name) => ph(name)), { preset, at });
        activeRoots.push({ preset, count: num(row?.n) });
      }
      const budgets = await run<{ preset_id: string; dimension: string; ceiling: unknown; consumed: unknown; reserved: unknown }>(
        (ph) => `SELECT n.preset_id, b.dimension, sum(b.ceiling) AS ceiling, sum(b.consumed) AS consumed, sum(b.reserved) AS reserved
                 FROM ledger_nodes n JOIN ledger_balances b ON b.node_id = n.node_id
                 WHERE n.parent_id IS NULL AND n.preset_id IS NOT NULL AND n.not_after > ${ph('at')}
                 GROUP BY n.preset_id, b.dimension`,
        { at },
      );
      const outbox = await run<{ status: string; n: unknown }>(
        () => `SELECT status, count(*) AS n FROM push_deliveries WHERE status IN ('pending', 'delivering', 'dead') GROUP BY status`,
        {},
      );
      const known = new Set(presets);
      return {
        reservations: reservations.map((r) => ({ status: r.status, count: num(r.n), oldest: r.oldest })),
        activeRoots,
        // Roots of a preset no longer configured are left out: labels stay the configured set.
        budgets: budgets.filter((b) => known.has(b.preset_id)).map((b) => ({ preset: b.preset_id, dimension: b.dimension, ceiling: num(b.ceiling), consumed: num(b.consumed), reserved: num(b.reserved) })),
        outbox: outbox.map((o) => ({ status: o.status, count: num(o.n) })),
      };
    },
  };
}
