/**
 * Scale across cores (issue #15): `baton serve --workers N` (the CLI itself,
 * node:cluster, one port) for N = 1 and 2, on SQLite and on PostgreSQL,
 * delegated SendMessage at concurrency 32. CPU is utime+stime of the primary
 * and every worker over the measured phase, per request.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { LoadGenerator } from './lib/load.ts';
import { freshSchema, pgReachable, PG_URL } from './lib/ledger.ts';
import { cpuTicks, removeTemp, ROOT, ticksToMs } from './lib/proc.ts';
import { round } from './lib/stats.ts';
import { batonSendMessage, batonConfig, ROOT_LIFETIME_S, startHonestAgent } from './lib/world.ts';

const CLI = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));

export interface WorkersRow {
  store: 'sqlite' | 'postgres';
  workers: number;
  concurrency: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
  errorSample?: string;
  /** utime+stime of the primary and all workers, per request. */
  cpuMsPerRequest: number;
}

export interface WorkersResults {
  rows: WorkersRow[];
  notes: string[];
}

async function serve(config: string, workers: number): Promise<{ url: string; pids: number[]; stop(): Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', CLI, '-c', config, 'serve', '--workers', String(workers)], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    const hard = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    }, 30_000);
    child.kill('SIGTERM');
    await exited;
    clearTimeout(hard);
  };
  try {
    const line = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`baton serve --workers ${workers}: not listening within 90 s\n${out.slice(-2000)}`)), 90_000);
      const check = () => {
        const m = /baton: listening on .*/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[0]);
        }
      };
      child.stdout!.on('data', (c: Buffer) => ((out += c.toString()), check()));
      child.stderr!.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-20_000)));
      void exited.then(() => reject(new Error(`baton serve exited early\n${out.slice(-2000)}`)));
    });
    const url = /(http:\/\/[^ ]+)/.exec(line)![1]!;
    const pids = [child.pid!, ...(/pids ([\d ]+)\)/.exec(line)?.[1]?.split(' ').map(Number) ?? [])];
    return { url, pids, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

const ticksOf = (pids: number[]) => pids.reduce((s, p) => s + (cpuTicks(p) ?? 0), 0);

/** One row: `baton serve --workers N` on a fresh data dir, at c=32 (exported for one-off comparisons). */
export async function measure(store: WorkersRow['store'], workers: number, storeUrl: string | undefined, agent: Awaited<ReturnType<typeof startHonestAgent>>, t: { warmupMs: number; durationMs: number }): Promise<WorkersRow> {
  const { dir, file } = batonConfig(agent, ROOT_LIFETIME_S);
  if (storeUrl) {
    const cfg = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ ...cfg, store: { kind: 'postgres', url: storeUrl } }));
  }
  const gw = await serve(file, workers);
  try {
    const gen = new LoadGenerator(
      batonSendMessage(gw.url, `w${workers}${store}`),
      32,
    );
    try {
      await gen.phase(t.warmupMs);
      const before = ticksOf(gw.pids);
      const r = await gen.phase(t.durationMs);
      const cpu = ticksToMs(ticksOf(gw.pids) - before);
      return {
        store,
        workers,
        concurrency: 32,
        rps: round(r.rps, 1),
        p50Ms: round(r.p50Ms, 2),
        p99Ms: round(r.p99Ms, 2),
        requests: r.requests,
        errors: r.errors,
        ...(r.errorSample ? { errorSample: r.errorSample } : {}),
        cpuMsPerRequest: round(cpu / Math.max(1, r.requests), 2),
      };
    } finally {
      await gen.close();
    }
  } finally {
    await gw.stop();
    removeTemp(dir);
  }
}

export async function benchWorkers(quick: boolean, log: (s: string) => void): Promise<WorkersResults> {
  const t = quick ? { warmupMs: 1_500, durationMs: 4_000 } : { warmupMs: 3_000, durationMs: 8_000 };
  const rows: WorkersRow[] = [];
  const notes: string[] = [];
  const agent = await startHonestAgent();
  try {
    for (const n of [1, 2]) {
      log(`  sqlite, --workers ${n}, c=32`);
      rows.push(await measure('sqlite', n, undefined, agent, t));
    }
    const unreachable = await pgReachable();
    if (unreachable) notes.push(`PostgreSQL at ${PG_URL} was unreachable (${unreachable}); the --workers rows on PostgreSQL are skipped.`);
    else {
      for (const n of [1, 2]) {
        const schema = await freshSchema();
        try {
          log(`  postgres, --workers ${n}, c=32`);
          rows.push(await measure('postgres', n, schema.url, agent, t));
        } finally {
          await schema.drop();
        }
      }
    }
  } finally {
    await agent.stop();
  }
  return { rows, notes };
}
