/**
 * Process entry for one test delegatee:
 *   tsx e2e/agents/main.ts --behaviour honest --name alice [--port 0] [--step-ms 50]
 *     [--require-extension URI] [--declare-extension URI] [--lie-state failed|working]
 *     [--push-mode token|jwt|forge|replay|drop] [--push-jwt] [--card rw003|plain|unsigned]
 *     [--protocol 1.0|0.3] [--watch-stdin]
 * Prints exactly one JSON line `{"url":...,"name":...}` on stdout once it serves, then
 * nothing else on stdout (the harness treats stdout as the ready channel).
 */
import { parseArgs } from 'node:util';
import { BEHAVIOURS, startAgent, type Behaviour } from './agent.ts';
import { PUSH_MODES, type PushMode } from './push.ts';
import type { CardKind } from './signed-card.ts';

const { values } = parseArgs({
  options: {
    behaviour: { type: 'string', default: 'honest' },
    name: { type: 'string' },
    port: { type: 'string', default: '0' },
    'step-ms': { type: 'string', default: '50' },
    'require-extension': { type: 'string' },
    'declare-extension': { type: 'string' },
    'lie-state': { type: 'string', default: 'failed' },
    'push-mode': { type: 'string', default: 'token' },
    'push-jwt': { type: 'boolean', default: false },
    card: { type: 'string', default: 'rw003' },
    protocol: { type: 'string', default: '1.0' },
    // Exit when the parent's stdin pipe closes, so a crashed test runner leaves no orphans.
    'watch-stdin': { type: 'boolean', default: false },
  },
  strict: true,
});

const fail = (msg: string): never => {
  process.stderr.write(`${msg}\n`);
  process.exit(2);
};

const behaviour = values.behaviour as Behaviour;
if (!BEHAVIOURS.includes(behaviour)) fail(`unknown --behaviour ${values.behaviour}; want one of ${BEHAVIOURS.join(', ')}`);
const port = Number(values.port);
const stepMs = Number(values['step-ms']);
if (!Number.isInteger(port) || port < 0) fail(`bad --port ${values.port}`);
if (!Number.isFinite(stepMs) || stepMs < 0) fail(`bad --step-ms ${values['step-ms']}`);
const lieState = values['lie-state'];
if (lieState !== 'failed' && lieState !== 'working') fail(`bad --lie-state ${lieState}`);
const pushMode = values['push-mode'] as PushMode;
if (!PUSH_MODES.includes(pushMode)) fail(`unknown --push-mode ${values['push-mode']}; want one of ${PUSH_MODES.join(', ')}`);

const cardKind = values.card as CardKind;
if (!['rw003', 'plain', 'unsigned'].includes(cardKind)) fail(`bad --card ${values.card}`);
const protocol = values.protocol;
if (protocol !== '1.0' && protocol !== '0.3') fail(`bad --protocol ${protocol}`);

const name = values.name ?? behaviour;
const agent = await startAgent({
  behaviour,
  name,
  port,
  stepMs,
  requireExtension: values['require-extension'],
  declareExtension: values['declare-extension'],
  lieState: lieState === 'working' ? 'working' : 'failed',
  pushMode,
  pushJwt: values['push-jwt'],
  cardKind,
  protocol: protocol === '0.3' ? '0.3' : '1.0',
});

let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  // Hard deadline: a wedged close() must not keep the process alive past its stop().
  setTimeout(() => process.exit(0), 2_000).unref();
  void agent.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
if (values['watch-stdin']) {
  process.stdin.on('end', stop).on('close', stop).resume();
}

process.stdout.write(`${JSON.stringify({ url: agent.url, name, jwks: agent.jwks, pushMode })}\n`);
