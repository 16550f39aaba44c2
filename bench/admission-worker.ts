/**
 * One admitting process for the admission benchmark:
 *   tsx bench/admission-worker.ts '<json config>'
 * Opens the store, prints {"ready":true}, waits for a line on stdin, then
 * admits (fence capture + fenced reserve + decision record, one durable
 * transaction) in `inflight` closed loops: `warmupMs` unmeasured, then
 * `durationMs` measured. Prints {"count", "elapsedMs", "latencies", "errors"}.
 */
import { admission, openStore, type StoreKind } from './lib/ledger.ts';

interface WorkerConfig {
  kind: StoreKind;
  where: string;
  space: string;
  chain: string[];
  warmupMs: number;
  durationMs: number;
  inflight: number;
}

const cfg = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
const store = await openStore(cfg.kind, cfg.where, { max: Math.max(2, cfg.inflight) });
const leaf = cfg.chain[cfg.chain.length - 1]!;
const say = (v: unknown) => process.stdout.write(`${JSON.stringify(v)}\n`);
process.stdin.once('end', () => process.exit(1)); // parent gone
say({ ready: true });
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));

let errors = 0;
let errorSample: string | undefined;
async function run(ms: number, record?: number[]): Promise<{ count: number; elapsedMs: number }> {
  const start = performance.now();
  const deadline = start + ms;
  let count = 0;
  let last = start;
  const loop = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        await store.ledger.admit(await admission(store, cfg.space, cfg.chain, leaf));
        count++;
      } catch (err) {
        errors++;
        errorSample ??= err instanceof Error ? err.message : String(err);
      }
      last = performance.now();
      record?.push(Math.round((last - t0) * 1000) / 1000);
    }
  };
  await Promise.all(Array.from({ length: cfg.inflight }, loop));
  return { count, elapsedMs: last - start };
}

await run(cfg.warmupMs);
errors = 0;
const latencies: number[] = [];
const { count, elapsedMs } = await run(cfg.durationMs, latencies);
say({ count, elapsedMs, latencies, errors, ...(errorSample ? { errorSample } : {}) });
await store.close();
process.exit(0);
