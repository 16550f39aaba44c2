/**
 * Durable admission throughput (ADR-0014 "final admission"): fence capture,
 * then one transaction that checks the fence over the agent stream and every
 * delegation stream of a depth-3 chain, reserves on all three nodes and
 * records the PermissionDecision. SQLite (WAL, synchronous=FULL, BEGIN
 * IMMEDIATE) and PostgreSQL, with 1 and 4 processes; plus how the cost grows
 * with chain depth, and (bench/growth.ts, in its own process) with retained
 * records in the namespace, for admission and verification.
 */
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { randomIds } from '../src/records/ids.ts';
import type { Store } from '../src/store/port.ts';
import { SqliteStore } from '../src/store/sqlite/store.ts';
import { admission, BENCH_LIMITS, chainOfDepth, freshSchema, openStore, pgReachable, publishAgent, PG_URL, type StoreKind } from './lib/ledger.ts';
import type { RetainedRow } from './growth.ts';
import { removeTemp, spawnLines, tempDir } from './lib/proc.ts';
import { round, summarise } from './lib/stats.ts';

const WORKER = fileURLToPath(new URL('./admission-worker.ts', import.meta.url));
const GROWTH = fileURLToPath(new URL('./growth.ts', import.meta.url));

export interface AdmissionRow {
  store: StoreKind;
  processes: number;
  inflightPerProcess: number;
  txPerSec: number;
  admissions: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  errorSample?: string;
}

export interface GrowthRow {
  /** 'retained' only in results from before bench/growth.ts (see AdmissionResults.retained). */
  variable: 'depth' | 'retained';
  value: number;
  txPerSec: number;
  meanMs: number;
  p99Ms: number;
  /** Retained rows: seconds it took to seed up to this count directly into the store. */
  seedS?: number;
}

export interface AdmissionResults {
  /** Flat growth with retained history (bench/growth.ts); absent in results from before it. */
  retained?: { rows: RetainedRow[]; unexpired: boolean; rootLifetimeS: number; error?: string };
  durability: { journal_mode: string; synchronous: string };
  /** Bare better-sqlite3 one-row BEGIN IMMEDIATE…COMMIT at the same settings in the same directory: the fsync floor. */
  fsyncFloorTxPerSec: number;
  rows: AdmissionRow[];
  growth: GrowthRow[];
  notes: string[];
}

interface Timing {
  warmupMs: number;
  durationMs: number;
}

/** N worker processes on one store, each admitting on its own depth-3 chain, started together (exported for one-off comparisons). */
export async function processes(kind: StoreKind, where: string, n: number, inflight: number, t: Timing): Promise<AdmissionRow> {
  const setup = await openStore(kind, where);
  const space = randomIds.next('space');
  await publishAgent(setup, space);
  const chains: string[][] = [];
  for (let i = 0; i < n; i++) chains.push(await chainOfDepth(setup, space, 3));
  await setup.close();
  const workers = chains.map((chain) => spawnLines(WORKER, [JSON.stringify({ kind, where, space, chain, warmupMs: t.warmupMs, durationMs: t.durationMs, inflight })]));
  try {
    await Promise.all(workers.map((w) => w.next(60_000)));
    for (const w of workers) w.send('go');
    const out = await Promise.all(
      workers.map((w) => w.next<{ count: number; elapsedMs: number; latencies: number[]; errors: number; errorSample?: string }>(t.warmupMs + t.durationMs + 60_000)),
    );
    const lat = summarise(out.flatMap((o) => o.latencies));
    const errorSample = out.find((o) => o.errorSample)?.errorSample;
    return {
      store: kind,
      processes: n,
      inflightPerProcess: inflight,
      txPerSec: round(out.reduce((a, o) => a + (o.count * 1000) / o.elapsedMs, 0), 0),
      admissions: out.reduce((a, o) => a + o.count, 0),
      p50Ms: round(lat.p50Ms, 3),
      p99Ms: round(lat.p99Ms, 3),
      errors: out.reduce((a, o) => a + o.errors, 0),
      ...(errorSample ? { errorSample } : {}),
    };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
}

/** Sequential admissions in this process: a fixed count (or 8 s, whichever first) after a short warm-up. */
async function admitLoop(store: Store, space: string, chain: string[], count: number): Promise<{ txPerSec: number; meanMs: number; p99Ms: number }> {
  const leaf = chain[chain.length - 1]!;
  for (let i = 0; i < Math.min(100, count); i++) await store.ledger.admit(await admission(store, space, chain, leaf));
  const lat: number[] = [];
  const start = performance.now();
  for (let i = 0; i < count && performance.now() - start < 8_000; i++) {
    const t0 = performance.now();
    await store.ledger.admit(await admission(store, space, chain, leaf));
    lat.push(performance.now() - t0);
  }
  const s = summarise(lat);
  return { txPerSec: round((lat.length * 1000) / (performance.now() - start), 0), meanMs: round(s.meanMs, 3), p99Ms: round(s.p99Ms, 3) };
}

/** Durable one-row commits per second with nothing else around them. */
function bareCommits(file: string, ms: number): number {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL) STRICT');
    const ins = db.prepare('INSERT INTO t (v) VALUES (?)');
    const tx = db.transaction(() => ins.run('x'.repeat(200)));
    for (let i = 0; i < 50; i++) tx.immediate();
    let n = 0;
    const start = performance.now();
    while (performance.now() - start < ms) {
      tx.immediate();
      n++;
    }
    return round((n * 1000) / (performance.now() - start), 0);
  } finally {
    db.close();
  }
}

async function growth(quick: boolean): Promise<GrowthRow[]> {
  const rows: GrowthRow[] = [];
  const count = quick ? 300 : 1_000;
  for (const depth of [1, 2, 3, 4]) {
    const dir = tempDir('adm-depth');
    const store = SqliteStore.open(join(dir, 'ledger.db'), { create: true, limits: BENCH_LIMITS });
    try {
      const space = randomIds.next('space');
      await publishAgent(store, space);
      const chain = await chainOfDepth(store, space, depth);
      rows.push({ variable: 'depth', value: depth, ...(await admitLoop(store, space, chain, count)) });
    } finally {
      await store.close();
      removeTemp(dir);
    }
  }
  return rows;
}

/** bench/growth.ts in its own process (it composes a whole gateway). */
async function retainedGrowth(quick: boolean): Promise<NonNullable<AdmissionResults['retained']>> {
  const unexpired = process.env.BENCH_GROWTH_UNEXPIRED === '1';
  const opts = { sizes: quick ? [1_000, 10_000, 100_000] : [1_000, 10_000, 100_000, 1_000_000], admissions: quick ? 300 : 1_000, requests: quick ? 10 : 30, verifyMs: quick ? 1_500 : 4_000, unexpired };
  const child = spawnLines(GROWTH, [JSON.stringify(opts)]);
  try {
    return await child.next<NonNullable<AdmissionResults['retained']>>((quick ? 10 : 30) * 60_000);
  } catch (err) {
    return { rows: [], unexpired, rootLifetimeS: 0, error: err instanceof Error ? err.message.slice(0, 2000) : String(err) };
  } finally {
    // Let it stop its agent and remove its temp dir itself before any signal.
    await Promise.race([child.exited, new Promise((r) => setTimeout(r, 20_000))]);
    await child.stop();
  }
}

export async function benchAdmission(quick: boolean, log: (s: string) => void): Promise<AdmissionResults> {
  const t: Timing = quick ? { warmupMs: 500, durationMs: 1_500 } : { warmupMs: 1_000, durationMs: 5_000 };
  const notes: string[] = [];
  const rows: AdmissionRow[] = [];

  const dir = tempDir('adm');
  const file = join(dir, 'ledger.db');
  const probe = SqliteStore.open(file, { create: true });
  const durability = {
    journal_mode: String(probe.handle.pragma('journal_mode', { simple: true })),
    synchronous: ({ 0: 'OFF', 1: 'NORMAL', 2: 'FULL', 3: 'EXTRA' } as Record<string, string>)[String(probe.handle.pragma('synchronous', { simple: true }))] ?? '?',
  };
  await probe.close();
  const fsyncFloorTxPerSec = bareCommits(join(dir, 'floor.db'), quick ? 700 : 2_000);
  try {
    for (const [n, inflight] of [
      [1, 1],
      [1, 32],
      [4, 1],
    ] as const) {
      log(`  sqlite, ${n} process(es) × ${inflight} in flight`);
      rows.push(await processes('sqlite', file, n, inflight, t));
    }
  } finally {
    removeTemp(dir);
  }

  const unreachable = await pgReachable();
  if (unreachable) {
    notes.push(`PostgreSQL at ${PG_URL} was unreachable (${unreachable}); its rows are skipped.`);
  } else {
    const schema = await freshSchema();
    try {
      for (const [n, inflight] of [
        [1, 1],
        [4, 1],
        [1, 8],
      ] as const) {
        log(`  postgres, ${n} process(es) × ${inflight} in flight`);
        rows.push(await processes('pg', schema.url, n, inflight, t));
      }
    } finally {
      await schema.drop();
    }
  }
  log('  growth: chain depth (sqlite, 1 process)');
  const g = await growth(quick);
  log('  growth: retained records 10^3 … 10^6 (one gateway over one seeded SQLite store)');
  const retained = await retainedGrowth(quick);
  notes.push(
    'Each worker admits on its own depth-3 chain (independent tasks); SQLite serialises writers across processes with BEGIN IMMEDIATE.',
    'The throughput rows lift the retained-records cap (ADR-0014: 10,000 live records per owner namespace): their admissions are never settled, so every one stays live. The growth rows run at the production limits, settling each admission after timing it.',
  );
  return { durability, fsyncFloorTxPerSec, rows, growth: g, retained, notes };
}
