/**
 * `baton serve --workers N` (issue #15, scale across cores): N gateway
 * processes behind one port. node:cluster shares the listeners (the primary
 * accepts and hands connections to the workers in turn) and every worker
 * opens the one configured store, so a task admitted by one worker is seen by
 * all; the budget invariant is the store's (BEGIN IMMEDIATE on SQLite, which
 * serialises writers across processes over WAL; row locks on PostgreSQL), the
 * same as for several gateway nodes on one store.
 *
 * The first worker starts alone (it may create keys, migrate the store and
 * register the gateway identity); the others join it one by one, as nodes of
 * one cluster do. A worker that dies is replaced; one that cannot start stops
 * the whole group.
 */
import cluster, { type Worker } from 'node:cluster';

export const MAX_WORKERS = 64;

interface Ready {
  type: 'baton-ready';
  url: string;
}
const isReady = (m: unknown): m is Ready => typeof m === 'object' && m !== null && (m as Ready).type === 'baton-ready';

/** Whether this process is a worker started by {@link superviseWorkers}. */
export const isClusterWorker = (): boolean => cluster.isWorker;

/** In a worker: tells the primary that this worker's gateway serves. */
export function announceReady(url: string): void {
  process.send?.({ type: 'baton-ready', url } satisfies Ready);
}

/** Parses `--workers`: an integer from 1 to {@link MAX_WORKERS}, else undefined. */
export function parseWorkers(raw: string | undefined): number | undefined {
  if (raw === undefined) return 1;
  const n = Number(raw);
  return Number.isInteger(n) && n >= 1 && n <= MAX_WORKERS ? n : undefined;
}

/** Forks one worker and resolves with its URL once it serves; rejects if it exits first. */
function startOne(): Promise<{ worker: Worker; url: string }> {
  const worker = cluster.fork();
  return new Promise((resolve, reject) => {
    const onMessage = (m: unknown) => {
      if (!isReady(m)) return;
      worker.off('exit', onExit);
      worker.off('message', onMessage);
      resolve({ worker, url: m.url });
    };
    const onExit = (code: number | null, signal: string | null) => reject(new Error(`worker ${worker.process.pid} exited before serving (${signal ?? `code ${code}`})`));
    worker.on('message', onMessage);
    worker.once('exit', onExit);
  });
}

/**
 * The primary: starts `n` workers, prints the listening line once all serve,
 * replaces a worker that dies, on SIGINT/SIGTERM passes SIGTERM on so
 * each worker drains (its own bounded drain) before the primary exits, and
 * passes SIGHUP (reload) on to every worker.
 */
export async function superviseWorkers(n: number, log: { info(msg: string): void; error(msg: string): void }): Promise<void> {
  const workers = new Set<Worker>();
  let stopping = false;
  let failures = 0;
  const stopAll = (code: number) => {
    if (stopping) return;
    stopping = true;
    for (const w of workers) w.process.kill('SIGTERM');
    const done = () => (workers.size === 0 ? process.exit(code) : undefined);
    cluster.on('exit', (w) => {
      workers.delete(w);
      done();
    });
    done();
  };
  const watch = (worker: Worker) => {
    workers.add(worker);
    worker.once('exit', (code, signal) => {
      workers.delete(worker);
      if (stopping) return;
      log.error(`baton: worker ${worker.process.pid} exited (${signal ?? `code ${code}`}); starting a replacement`);
      // Bounded: five replacements failing in a row stop the group rather than loop.
      setTimeout(() => {
        if (stopping) return;
        startOne().then(
          (r) => {
            failures = 0;
            watch(r.worker);
            log.info(`baton: worker ${r.worker.process.pid} serving (replaced ${worker.process.pid})`);
          },
          (err: unknown) => {
            log.error(`baton: ${err instanceof Error ? err.message : String(err)}`);
            if (++failures >= 5) stopAll(1);
          },
        );
      }, 1_000).unref();
    });
  };
  let signalled = false;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      if (signalled) return;
      signalled = true;
      log.info(`baton: ${sig}: draining ${workers.size} workers`);
      stopAll(0);
    });
  }
  // A reload signal for the group: each worker reloads its own configuration (serve.ts); the primary has none.
  process.on('SIGHUP', () => {
    for (const w of workers) w.process.kill('SIGHUP');
  });
  let url = '';
  for (let i = 0; i < n && !stopping; i++) {
    try {
      const r = await startOne();
      url = r.url;
      watch(r.worker);
    } catch (err) {
      log.error(`baton: not starting: ${err instanceof Error ? err.message : String(err)}`);
      stopAll(1);
      return;
    }
  }
  if (!stopping) console.log(`baton: listening on ${url} (${n} workers, pids ${[...workers].map((w) => w.process.pid).join(' ')})`);
}
