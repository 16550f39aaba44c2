/**
 * Ledger fixtures for the admission benchmarks, on the store contract
 * suite's builders (test/store/support/fixtures.ts): an agent stream, a
 * budget chain of any depth, and a fenced admission request.
 */
import pg from 'pg';
import { freshSchema as freshTestSchema } from '../../test/store/support/pg.ts';
import { LEDGER_LIMITS, type LedgerLimits } from '../../src/ledger/types.ts';
import { randomIds } from '../../src/records/ids.ts';
import type { Store } from '../../src/store/port.ts';
import { PgStore } from '../../src/store/postgres/store.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { actor, FAR, NOW } from '../../test/store/support/fixtures.ts';

export { admission, publishAgent } from '../../test/store/support/fixtures.ts';

/**
 * ADR-0014 caps retained records at 10,000 per owner namespace; a throughput
 * run writes more than that into one namespace, so the benchmarks lift the
 * cap (everything else stays at the production defaults).
 */
export const BENCH_LIMITS: LedgerLimits = { ...LEDGER_LIMITS, maxRetainedRecords: 1_000_000_000 };

export type StoreKind = 'sqlite' | 'pg';

export async function openStore(kind: StoreKind, where: string, opts: { max?: number } = {}): Promise<Store> {
  return kind === 'pg' ? PgStore.open(where, { limits: BENCH_LIMITS, max: opts.max ?? 4 }) : SqliteStore.open(where, { create: true, limits: BENCH_LIMITS });
}

/** A budget chain of `depth` nodes (root first), each capped far above any run; in namespace `ns-<space>` unless given. */
export async function chainOfDepth(store: Store, space: string, depth: number, namespace = `ns-${space}`): Promise<string[]> {
  const ids: string[] = [];
  const dims = [
    { name: 'units', unit: 'admission', ceiling: 1n << 40n },
    { name: 'tokens', unit: 'token', ceiling: 1n << 50n },
  ];
  for (let i = 0; i < depth; i++) {
    const id = randomIds.next('dlg');
    await store.ledger.openBudget({
      space_id: space,
      owner_namespace: namespace,
      actor_ref: actor,
      at: NOW(),
      node_id: id,
      ...(i > 0 ? { parent_id: ids[i - 1]! } : {}),
      not_after: FAR,
      dimensions: dims,
    });
    ids.push(id);
  }
  return ids;
}

export const PG_URL = process.env.BENCH_PG ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Whether the PostgreSQL server answers within 3 s; the reason when it does not. */
export async function pgReachable(): Promise<string | undefined> {
  const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3_000 });
  try {
    await c.connect();
    await c.query('SELECT 1');
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    await c.end().catch(() => {});
  }
}

/** A throw-away schema, dropped afterwards (the tests' helper, pointed at the bench server). */
export const freshSchema = () => freshTestSchema(PG_URL);
