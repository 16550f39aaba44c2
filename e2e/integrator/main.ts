/**
 * Process entry for the integrator webhook receiver:
 *   tsx e2e/integrator/main.ts --jwks-url <baton>/.well-known/jwks.json [--port 0]
 *     [--token T] [--hold-first-ms N] [--fail-first N] [--max-skew-s 300] [--watch-stdin]
 * Prints exactly one JSON line `{"url":"http://127.0.0.1:PORT","hookUrl":".../hook"}` on
 * stdout once it listens, then nothing else on stdout (the harness's ready channel).
 */
import { parseArgs } from 'node:util';
import { startIntegrator } from './receiver.ts';

const { values } = parseArgs({
  options: {
    'jwks-url': { type: 'string' },
    port: { type: 'string', default: '0' },
    token: { type: 'string' },
    'hold-first-ms': { type: 'string', default: '0' },
    'fail-first': { type: 'string', default: '0' },
    'max-skew-s': { type: 'string', default: '300' },
    // Exit when the parent's stdin pipe closes, so a crashed test runner leaves no orphans.
    'watch-stdin': { type: 'boolean', default: false },
  },
  strict: true,
});

const fail = (msg: string): never => {
  process.stderr.write(`${msg}\n`);
  process.exit(2);
};
const int = (name: string, raw: string | undefined): number => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) fail(`bad --${name} ${raw}`);
  return n;
};

const jwksUrl = values['jwks-url'] ?? fail('--jwks-url is required');
try {
  new URL(jwksUrl);
} catch {
  fail(`bad --jwks-url ${jwksUrl}`);
}

const integrator = await startIntegrator({
  jwksUrl,
  port: int('port', values.port),
  token: values.token,
  holdFirstMs: int('hold-first-ms', values['hold-first-ms']),
  failFirst: int('fail-first', values['fail-first']),
  maxSkewS: int('max-skew-s', values['max-skew-s']),
});

let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  setTimeout(() => process.exit(0), 2_000).unref();
  void integrator.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
if (values['watch-stdin']) {
  process.stdin.on('end', stop).on('close', stop).resume();
}

process.stdout.write(`${JSON.stringify({ url: integrator.url, hookUrl: integrator.hookUrl })}\n`);
