/**
 * Runs one Baton gateway as its own process for e2e tests:
 *   tsx e2e/harness/baton-main.ts <config.json>
 * Prints one JSON line `{"url": ...}` when it serves; exits on SIGTERM or
 * when its parent's stdin closes (no orphans after a crashed test run).
 */
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { startGateway } from '../../src/main.ts';

const file = process.argv[2];
if (!file) {
  console.error('usage: baton-main.ts <config.json>');
  process.exit(2);
}
const config = loadConfig({ file, env: {} });
const gw = await startGateway(config, { logger: createLogger({ level: process.env.BATON_E2E_LOG ?? 'warn', destination: process.stderr }) });
process.stdout.write(`${JSON.stringify({ url: gw.url, ...(gw.adminUrl ? { adminUrl: gw.adminUrl } : {}) })}\n`);
const stop = async () => {
  await gw.close();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.stdin.on('end', () => void stop());
process.stdin.resume();
