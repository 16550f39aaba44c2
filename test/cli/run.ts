/**
 * Runs the `baton` CLI in a child process, from the TypeScript sources through
 * tsx (the compiled bin is covered by the pack-and-install check in .ci/run).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// Absolute, so it resolves whatever the child's cwd.
const TSX = import.meta.resolve('tsx');
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

export function baton(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', TSX, MAIN, ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}
