/**
 * Runs one Baton gateway as its own process for e2e tests:
 *   tsx e2e/harness/baton-main.ts <config.json>
 * Prints one JSON line `{"url": ...}` when it serves, then `{"sweep_pass": n}`
 * after each completed revocation sweep pass (so a test awaits passes instead
 * of sleeping); BATON_E2E_APPROVALS_SWEEP=off leaves approved effects to the
 * test (below); exits on SIGTERM or when its parent's stdin closes (no
 * orphans after a crashed test run).
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
// The gateway's sweep timer calls dispatcher.sweepRevocations() on each tick; wrapping the
// instance method reports every finished pass without a test-only hook in src/.
const sweep = gw.dispatcher.sweepRevocations.bind(gw.dispatcher);
let passes = 0;
gw.dispatcher.sweepRevocations = async () => {
  try {
    return await sweep();
  } finally {
    process.stdout.write(`${JSON.stringify({ sweep_pass: ++passes })}\n`);
  }
};
// BATON_E2E_APPROVALS_SWEEP=off: the sweep timer's approvals pass admits nothing here, so an approval recorded by the
// CLI is admitted when the test says so, by a node it drives (e2e/approvals-suite.ts), never by the timer's chance.
if (process.env.BATON_E2E_APPROVALS_SWEEP === 'off') gw.dispatcher.sweepApprovals = async () => 0;
const stop = async () => {
  await gw.close();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.stdin.on('end', () => void stop());
process.stdin.resume();
