/**
 * Runs the real `baton serve` command (src/cli/main.ts through tsx) as a child
 * process, as an operator would, so signals (SIGHUP, SIGTERM) reach the CLI's
 * own handlers. Every stdout line is kept; tests await log lines by message.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

export interface ServedBaton {
  url: string;
  adminUrl?: string;
  pid: number;
  /** Parsed JSON log lines so far. */
  logs: Array<Record<string, unknown>>;
  /** Every stdout line so far, as written (JSON log lines and the `baton: …` banners). */
  stdout: string[];
  /** The last 4000 characters of stderr. */
  stderr(): string;
  /** Resolves with the first log line (from index `from` on) whose `msg` matches. */
  waitForLog(msg: string | RegExp, from?: number, timeoutMs?: number): Promise<Record<string, unknown>>;
  signal(sig: NodeJS.Signals): void;
  stop(): Promise<void>;
}

export async function serveBaton(configFile: string, env: Record<string, string> = {}, timeoutMs = 30_000): Promise<ServedBaton> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, '--config', configFile, 'serve'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: Array<Record<string, unknown>> = [];
  const stdout: string[] = [];
  const waiters = new Set<() => void>();
  let stderr = '';
  // Printed synchronously just before the ready line; the JSON log line that also names it may arrive later (pino).
  let adminUrl: string | undefined;
  child.stderr.on('data', (d: Buffer) => void (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`baton serve not ready: ${stderr}`)), timeoutMs);
    void exited.then(() => reject(new Error(`baton serve exited: ${stderr}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      stdout.push(line);
      adminUrl ??= /^baton: operator API and console on (\S+)/.exec(line)?.[1];
      const m = /^baton: listening on (\S+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
        for (const w of waiters) w();
      } catch {
        // not a log line
      }
    });
  });
  const url = await ready;
  const listening = logs.find((l) => l.msg === 'baton gateway listening');
  adminUrl ??= typeof listening?.adminUrl === 'string' ? listening.adminUrl : undefined;
  const matches = (l: Record<string, unknown>, msg: string | RegExp) => (typeof msg === 'string' ? l.msg === msg : msg.test(String(l.msg)));
  return {
    url,
    ...(adminUrl ? { adminUrl } : {}),
    pid: child.pid!,
    logs,
    stdout,
    stderr: () => stderr,
    waitForLog: (msg, from = 0, wait = 20_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const hit = logs.slice(from).find((l) => matches(l, msg));
          if (!hit) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(hit);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no log line ${String(msg)} within ${wait} ms`));
        }, wait);
        waiters.add(check);
        check();
      }),
    signal: (sig) => void child.kill(sig),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
