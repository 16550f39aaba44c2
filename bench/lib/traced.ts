/**
 * Delegated calls followed by strace, for the development tools that count
 * what Baton does below JavaScript (bench/wal-frames.ts, bench/syscalls.ts):
 * Baton runs as the bench runs it (./world.ts), is warmed past its JIT
 * warm-up, then `strace` follows it for `calls` calls at concurrency `c`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { LoadGenerator, warmJit } from './load.ts';
import { removeTemp, tempDir } from './proc.ts';
import { batonSendMessage, startBaton, startHonestAgent } from './world.ts';

/** What {@link tracedCalls} hands its reader while Baton still runs. */
export interface TracedCalls {
  /** The strace output file (`-o`). */
  trace: string;
  /** A temp dir of the run's own, removed after the reader returns. */
  work: string;
  baton: { pid: number; dir: string };
  requests: number;
  errors: number;
}

/** Exits with status 2, naming `tool`, when strace is not on PATH. */
export function requireStrace(tool: string): void {
  if (spawnSync('strace', ['-V']).status === 0) return;
  console.error(`${tool}: needs strace on PATH (Debian: apt-get install strace)`);
  process.exit(2);
}

/**
 * Runs `calls` delegated calls at concurrency `c` under `strace <args> -p <baton> -o <trace>`, then `read`s the
 * result before Baton and its agent stop (so Baton's data dir is still there); returns what `read` returns.
 */
export async function tracedCalls<T>(name: string, args: readonly string[], c: number, calls: number, read: (run: TracedCalls) => T | Promise<T>): Promise<T> {
  const work = tempDir(name);
  const trace = join(work, 'strace.txt');
  const agent = await startHonestAgent();
  const baton = await startBaton(agent, 3_600);
  try {
    await warmJit(batonSendMessage(baton.url, 'warm'), 2_000, 30_000);
    const gen = new LoadGenerator(batonSendMessage(baton.url, name), c);
    await gen.phase(1_000);
    const strace = spawn('strace', [...args, '-p', String(baton.pid), '-o', trace], { stdio: ['ignore', 'ignore', 'pipe'] });
    await straceAttached(strace.stderr!);
    const r = await gen.phase(120_000, calls);
    strace.kill('SIGINT');
    await new Promise((resolve) => strace.once('exit', resolve));
    await gen.close();
    return await read({ trace, work, baton, requests: r.requests, errors: r.errors });
  } finally {
    await Promise.all([baton.stop(), agent.stop()]);
    removeTemp(work);
  }
}

/** Resolves once strace says it attached to the process (its first line on stderr), or rejects after 10 s. */
function straceAttached(stderr: NodeJS.ReadableStream): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('strace did not attach within 10 s')), 10_000);
    let seen = '';
    stderr.setEncoding('utf8');
    stderr.on('data', (chunk: string) => {
      seen += chunk;
      if (/attached/.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
}
