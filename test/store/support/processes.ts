/** Spawning ledger worker processes and reading their JSON lines. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));

export interface Worker {
  child: ChildProcess;
  /** Resolves with the next JSON line the worker prints. */
  next(): Promise<Record<string, unknown>>;
  /** Resolves with the exit code (or signal) once the worker stops. */
  exited: Promise<number | NodeJS.Signals>;
  /** Releases the worker's start barrier. */
  go(): void;
}

export function startWorker(args: string[]): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters: Array<(line: string) => void> = [];
  let buf = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buf += chunk.toString();
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      const w = waiters.shift();
      if (w) w(line);
      else lines.push(line);
    }
  });
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | NodeJS.Signals>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code ?? -1)));
  return {
    child,
    exited,
    go: () => child.stdin!.write('go\n'),
    next: () =>
      new Promise((resolve, reject) => {
        const take = (line: string) => resolve(JSON.parse(line) as Record<string, unknown>);
        const l = lines.shift();
        if (l !== undefined) return take(l);
        waiters.push(take);
        void exited.then((code) => reject(new Error(`worker exited (${code}) before answering: ${stderr.slice(-2000)}`)));
      }),
  };
}

/** Starts racers, waits until every one is ready, then releases them at once. */
export async function startRacers(n: number, args: string[]): Promise<Worker[]> {
  const workers = Array.from({ length: n }, () => startWorker(args));
  await Promise.all(workers.map((w) => w.next())); // each prints {ready}
  for (const w of workers) w.go();
  return workers;
}

/** Runs racers to completion and returns each one's result line. */
export async function runRacers(n: number, args: string[]): Promise<Array<Record<string, unknown>>> {
  const workers = await startRacers(n, args);
  const results = await Promise.all(workers.map((w) => w.next()));
  const codes = await Promise.all(workers.map((w) => w.exited));
  if (codes.some((c) => c !== 0)) throw new Error(`a worker failed: ${codes.join(', ')}`);
  return results;
}
