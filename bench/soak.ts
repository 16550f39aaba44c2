/**
 * Bounded memory (issue #15): one Baton (bench/lib/world.ts), the honest
 * agent, delegated SendMessage at concurrency 32 (the request of
 * bench/http.ts) for BENCH_SOAK_REQUESTS (default 100,000), at the preset
 * lifetime the other Baton phases use. The gateway's RSS (VmRSS from
 * /proc/<pid>/status) is sampled after the first 10,000 requests, at the end
 * and in between, with the throughput of each stretch, so a leak and a
 * slowdown both show; errors are counted by code.
 *
 *   npm run bench:soak        only this step: merges into bench/results.json, re-renders RESULTS.md
 *
 * Bounded: BENCH_SOAK_MAX_MIN (default 60) of load, then it stops where it is
 * and says so; every process and temp dir is removed on every exit path.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { LoadGenerator } from './lib/load.ts';
import { cpuTicks, ticksToMs } from './lib/proc.ts';
import { round } from './lib/stats.ts';
import type { Results } from './report.ts';
import { batonSendMessage, ROOT_LIFETIME_S, startBaton, startHonestAgent } from './lib/world.ts';

export interface SoakSample {
  /** Requests completed (successes and errors) when the sample was taken. */
  requests: number;
  elapsedS: number;
  rssMiB: number;
  /** Throughput of the stretch that ended at this sample. */
  rps: number;
  errors: number;
}

export interface SoakResults {
  date: string;
  concurrency: number;
  /** Requests asked for (BENCH_SOAK_REQUESTS) and made. */
  requested: number;
  requests: number;
  /** Set when the time limit stopped the soak before `requested`. */
  stoppedAtLimit?: string;
  /** The request count of the baseline sample (10,000, or less for a short soak). */
  baselineAt: number;
  baselineRssMiB: number;
  endRssMiB: number;
  startRssMiB: number;
  samples: SoakSample[];
  errors: number;
  errorsByCode: Record<string, number>;
  errorSample?: string;
  /** Baton's own last warnings when there were errors (a lost reply names its cause there). */
  gatewayWarnings?: string[];
  wallS: number;
  gatewayCpuMsPerRequest: number;
  rootLifetimeS: number;
}

/** Resident set size of a process, in MiB (VmRSS). */
export function rssMiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return round(Number(m[1]) / 1024, 1);
}

/** Where the soak stops to sample: the baseline, then every tenth of the run. */
export function samplePoints(requests: number): { baseline: number; points: number[] } {
  const baseline = requests > 10_000 ? 10_000 : Math.max(1, Math.floor(requests / 2));
  const step = Math.max(1, Math.ceil(requests / 10));
  const points = new Set<number>([baseline, requests]);
  for (let n = step; n < requests; n += step) points.add(n);
  return { baseline, points: [...points].sort((a, b) => a - b) };
}

export async function benchSoak(quick: boolean, log: (s: string) => void): Promise<SoakResults> {
  const requested = Number(process.env.BENCH_SOAK_REQUESTS ?? (quick ? 3_000 : 100_000));
  const limitMs = Number(process.env.BENCH_SOAK_MAX_MIN ?? (quick ? 10 : 60)) * 60_000;
  const concurrency = 32;
  const { baseline, points } = samplePoints(requested);
  const agent = await startHonestAgent();
  try {
    const baton = await startBaton(agent, ROOT_LIFETIME_S);
    try {
      const gen = new LoadGenerator(
        batonSendMessage(baton.url, 'soak'),
        concurrency,
      );
      try {
        const startRssMiB = rssMiB(baton.pid);
        const cpu0 = cpuTicks(baton.pid) ?? 0;
        const started = performance.now();
        const samples: SoakSample[] = [];
        const errorsByCode: Record<string, number> = {};
        let done = 0;
        let errors = 0;
        let errorSample: string | undefined;
        let stoppedAtLimit: string | undefined;
        for (const point of points) {
          const left = limitMs - (performance.now() - started);
          if (left <= 0) {
            stoppedAtLimit = `time limit (${limitMs / 60_000} min) reached after ${done} requests`;
            break;
          }
          const r = await gen.phase(left, point - done);
          done += r.requests;
          errors += r.errors;
          errorSample ??= r.errorSample;
          for (const [k, v] of Object.entries(r.errorsByCode)) errorsByCode[k] = (errorsByCode[k] ?? 0) + v;
          const sample = { requests: done, elapsedS: round((performance.now() - started) / 1000, 1), rssMiB: rssMiB(baton.pid), rps: round(r.rps, 1), errors: r.errors };
          samples.push(sample);
          log(`  soak: ${done} requests, ${sample.elapsedS} s, RSS ${sample.rssMiB} MiB, ${sample.rps} req/s over the last ${r.requests}, ${r.errors} errors`);
          if (done < point) {
            stoppedAtLimit = `time limit (${limitMs / 60_000} min) reached after ${done} requests`;
            break;
          }
        }
        const wallS = (performance.now() - started) / 1000;
        const base = samples.find((s) => s.requests >= baseline) ?? samples[0];
        return {
          date: new Date().toISOString(),
          concurrency,
          requested,
          requests: done,
          ...(stoppedAtLimit ? { stoppedAtLimit } : {}),
          baselineAt: base?.requests ?? 0,
          baselineRssMiB: base?.rssMiB ?? Number.NaN,
          endRssMiB: samples.at(-1)?.rssMiB ?? Number.NaN,
          startRssMiB,
          samples,
          errors,
          errorsByCode,
          ...(errorSample ? { errorSample } : {}),
          ...(errors ? { gatewayWarnings: baton.warnings() } : {}),
          wallS: round(wallS, 1),
          gatewayCpuMsPerRequest: round(ticksToMs((cpuTicks(baton.pid) ?? cpu0) - cpu0) / Math.max(1, done), 2),
          rootLifetimeS: ROOT_LIFETIME_S,
        };
      } finally {
        await gen.close();
      }
    } finally {
      await baton.stop();
    }
  } finally {
    await agent.stop();
  }
}

/** `npm run bench:soak`: this step alone, merged into the last results.json, RESULTS.md re-rendered. */
async function main(): Promise<void> {
  const { stopAll } = await import('../e2e/harness/process.ts');
  const { cleanupTemp, stopAllLines } = await import('./lib/proc.ts');
  const { renderMarkdown, targetsOf } = await import('./report.ts');
  const started = Date.now();
  const log = (s: string) => process.stderr.write(`[soak ${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s] ${s}\n`);
  const cleanup = async () => {
    await Promise.allSettled([stopAll(), stopAllLines()]);
    cleanupTemp();
  };
  // The load stops itself at BENCH_SOAK_MAX_MIN; this is the backstop for a hang anywhere else.
  const hardMs = (Number(process.env.BENCH_SOAK_MAX_MIN ?? 60) + 5) * 60_000;
  const hard = setTimeout(() => {
    log(`hard time limit (${hardMs / 60_000} min) reached; stopping everything`);
    void cleanup().finally(() => process.exit(1));
  }, hardMs);
  hard.unref();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void cleanup().finally(() => process.exit(130)));
  let code = 0;
  try {
    const soak = await benchSoak(process.env.BENCH_QUICK === '1', log);
    const file = fileURLToPath(new URL('./results.json', import.meta.url));
    let results: Partial<Results> = {};
    try {
      results = JSON.parse(readFileSync(file, 'utf8')) as Results;
    } catch {
      // No earlier run: keep the soak alone; the next `npm run bench` (BENCH_SOAK=0 carries it over) renders it.
    }
    results.soak = soak;
    const complete = results.http && results.admission && results.contracts && results.machine ? (results as Results) : undefined;
    if (complete) Object.assign(complete, targetsOf(complete.http, complete.admission, complete.workers, soak));
    writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
    if (complete) writeFileSync(fileURLToPath(new URL('./RESULTS.md', import.meta.url)), renderMarkdown(complete));
    log(`${complete ? 'merged into bench/results.json and re-rendered bench/RESULTS.md' : 'no complete bench/results.json to merge into: wrote the soak alone to it (RESULTS.md not re-rendered; `BENCH_SOAK=0 npm run bench` carries it over)'}: RSS ${soak.baselineRssMiB} MiB after ${soak.baselineAt}, ${soak.endRssMiB} MiB after ${soak.requests}`);
  } catch (err) {
    log(`soak failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    code = 1;
  } finally {
    await cleanup();
    clearTimeout(hard);
  }
  process.exit(code);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
