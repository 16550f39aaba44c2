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
}

export function startWorker(args: string[]): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
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

/** Runs a worker to completion and returns its last line. */
export async function runWorker(args: string[]): Promise<Record<string, unknown>> {
  const w = startWorker(args);
  const out = await w.next();
  const code = await w.exited;
  if (code !== 0) throw new Error(`worker failed with ${code}`);
  return out;
}
