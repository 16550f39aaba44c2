// Regenerates the console screenshots in docs/console/ (png): runs the
// console's browser test against a real gateway and agents with
// BATON_CONSOLE_SCREENSHOTS=1, which saves each main view at 1366×768.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const r = spawnSync('npx', ['vitest', 'run', 'e2e/console.test.ts'], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, BATON_CONSOLE_SCREENSHOTS: '1' } });
process.exit(r.status ?? 1);
