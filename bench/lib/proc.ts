/**
 * Process plumbing for the benchmarks: CPU accounting from /proc, the machine
 * description, temp dirs that are always removed, and a child-process helper
 * that (unlike e2e spawnReady) exposes stdin and every stdout line, and takes
 * node flags such as --cpu-prof.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let clkTck: number | undefined;
/** Clock ticks per second (`getconf CLK_TCK`, nearly always 100). */
export function clockTicks(): number {
  if (clkTck === undefined) {
    try {
      clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clkTck = 100;
    }
  }
  return clkTck;
}

/** utime + stime of a process (all its threads), in clock ticks; undefined when it is gone. */
export function cpuTicks(pid: number): number | undefined {
  try {
    const t = cpuTimes(pid);
    return t.user + t.system;
  } catch {
    return undefined;
  }
}

/** User and system clock ticks of a process (throws when it is gone). */
export function cpuTimes(pid: number): { user: number; system: number } {
  return statTimes(`/proc/${pid}/stat`);
}

/**
 * Clock ticks of a process's main thread (its thread id is the process id)
 * and of all its other threads together: V8's GC helpers and concurrent
 * compiler, libuv's pool, worker threads. A --cpu-prof profile samples the
 * main thread only, so this is what it does not show.
 */
export function threadTimes(pid: number): { main: number; others: number } {
  const all = cpuTimes(pid);
  const main = statTimes(`/proc/${pid}/task/${pid}/stat`);
  const mainTicks = main.user + main.system;
  return { main: mainTicks, others: all.user + all.system - mainTicks };
}

function statTimes(path: string): { user: number; system: number } {
  const stat = readFileSync(path, 'utf8');
  // Fields after the parenthesised comm (which may contain spaces): state is field 3, utime 14, stime 15.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(rest[11]), system: Number(rest[12]) };
}

/** CPU milliseconds between two tick readings. */
export const ticksToMs = (ticks: number): number => (ticks * 1000) / clockTicks();

export interface Machine {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  node: string;
  platform: string;
  kernel: string;
  date: string;
  quick: boolean;
}

export function machine(quick: boolean): Machine {
  let cpuModel = cpus()[0]?.model ?? 'unknown';
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8').split('\n').find((l) => l.startsWith('model name'));
    if (line) cpuModel = line.split(':').slice(1).join(':').trim();
  } catch {
    // keep os.cpus()
  }
  let kernel = '';
  try {
    kernel = readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim();
  } catch {
    kernel = process.platform;
  }
  return {
    cpuModel,
    cores: cpus().length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${process.platform}/${process.arch}`,
    kernel,
    date: new Date().toISOString(),
    quick,
  };
}

const dirs = new Set<string>();
/** A fresh temp dir, removed by {@link cleanupTemp} (and at exit). */
export function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), `baton-bench-${prefix}-`));
  dirs.add(d);
  return d;
}
export function removeTemp(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  dirs.delete(dir);
}
export function cleanupTemp(): void {
  for (const d of [...dirs]) removeTemp(d);
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of live) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A child whose stdout is read line by line (JSON lines). */
export interface LineProcess {
  pid: number;
  /** The next stdout line parsed as JSON, within `timeoutMs`. */
  next<T = Record<string, unknown>>(timeoutMs?: number): Promise<T>;
  send(line: string): void;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves on exit. */
  stop(graceMs?: number): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderrTail(): string;
}

/** Runs `node [execArgv] --import tsx file args` from the repo root. */
export function spawnLines(file: string, args: readonly string[], opts: { execArgv?: string[]; env?: Record<string, string> } = {}): LineProcess {
  const child = spawn(process.execPath, [...(opts.execArgv ?? []), '--import', 'tsx', file, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  live.add(child);
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-4000)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    }),
  );
  const queue: string[] = [];
  const waiters: Array<(l: string | undefined) => void> = [];
  let closed = false;
  createInterface({ input: child.stdout! })
    .on('line', (l) => {
      const w = waiters.shift();
      if (w) w(l);
      else queue.push(l);
    })
    .on('close', () => {
      closed = true;
      for (const w of waiters.splice(0)) w(undefined);
    });
  const stop = (graceMs = 5_000): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return exited.then(() => undefined);
    const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.kill('SIGTERM');
    return exited.then(() => clearTimeout(t));
  };
  return {
    pid: child.pid ?? -1,
    exited,
    stderrTail: () => stderr,
    send: (line) => void child.stdin!.write(`${line}\n`),
    stop,
    next<T>(timeoutMs = 60_000): Promise<T> {
      const line = queue.shift();
      const got = line !== undefined ? Promise.resolve<string | undefined>(line) : closed ? Promise.resolve(undefined) : new Promise<string | undefined>((r) => waiters.push(r));
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${file}: no stdout line within ${timeoutMs} ms\n${stderr}`)), timeoutMs);
      });
      return Promise.race([got, timeout]).then((l) => {
        clearTimeout(timer);
        if (l === undefined) throw new Error(`${file}: exited without output\n${stderr}`);
        return JSON.parse(l) as T;
      });
    },
  };
}

/** Stops every child started through {@link spawnLines}. */
export async function stopAllLines(): Promise<void> {
  await Promise.all(
    [...live].map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          const t = setTimeout(() => c.kill('SIGKILL'), 5_000);
          c.once('exit', () => (clearTimeout(t), resolve()));
          c.kill('SIGTERM');
        }),
    ),
  );
}
