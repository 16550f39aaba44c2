import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express, { type Response } from 'express';
import { TaskState, type AgentCard, type GetTaskRequest, type Task } from '@a2a-js/sdk';
import {
  DefaultExecutionEventBusManager,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
  type PushNotificationSender,
  type PushNotificationStore,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import { UserBuilder, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';
import { buildCard, cardJson, legacyCardJson } from './card.ts';
import { signAgentCard, type CardKind } from './signed-card.ts';
import type { JWK } from 'jose';
import type { JsonValue } from '../../src/records/strict-json.ts';
import { ReverseExecutor } from './executor.ts';
import { FloodExecutor } from './flood.ts';
import { bodyParser, dropAfterAccept, duplicateKeyStream, loseMarkedSends, neverAnswer, refuseSends, requireExtension, resetOnSend } from './front.ts';
import { TestLog, type Transport } from './testlog.ts';
import { TestPushSender, type PushMode } from './push.ts';

/** The selectable delegatee behaviours. */
export const BEHAVIOURS = ['honest', 'lying-readback', 'drop-after-accept', 'never-answer', 'reset-on-send', 'refuse-sends', 'duplicate-key-stream', 'artifact-flood', 'status-flood', 'lose-marked-sends'] as const;
/** One of {@link BEHAVIOURS}. */
export type Behaviour = (typeof BEHAVIOURS)[number];

/** Options for {@link startAgent}. */
export interface AgentOptions {
  behaviour: Behaviour;
  name: string;
  /** Port to bind on 127.0.0.1; 0 (default) picks a free one. */
  port?: number | undefined;
  /** Delay between lifecycle events in ms (default 50). */
  stepMs?: number | undefined;
  /** Refuse A2A requests whose `A2A-Extensions` header lacks this URI. */
  requireExtension?: string | undefined;
  /** Extension URI the card declares, not required and without params. */
  declareExtension?: string | undefined;
  /** State GetTask reports for lying-readback (default FAILED). */
  lieState?: 'failed' | 'working' | undefined;
  /** How the agent delivers push notifications (default `token`); see `push.ts`. */
  pushMode?: PushMode | undefined;
  /** Also attach the Bearer JWT in modes other than `jwt` (e.g. a signed replay). */
  pushJwt?: boolean | undefined;
  /** What the card carries (default `rw003`); see signed-card.ts. */
  cardKind?: CardKind | undefined;
  /** The A2A version spoken (default 1.0); `0.3` runs the SDK's v0.3 compatibility layer only. */
  protocol?: '1.0' | '0.3' | undefined;
  /** artifact-flood / status-flood: how many events at most, and the size of each flooded artifact chunk (flood.ts). */
  floodCount?: number | undefined;
  floodEventBytes?: number | undefined;
}

/** A running agent. */
export interface RunningAgent {
  /** Base URL, e.g. `http://127.0.0.1:43121` (card at `/.well-known/agent-card.json`). */
  url: string;
  /** Public keys that sign the agent's card; an operator pins these for its origin. */
  jwks: { keys: JWK[] };
  /** Stops listening and force-closes every connection, including held ones. */
  close(): Promise<void>;
}

/** lying-readback: the send path is honest, but GetTask reports a different truth. */
class LyingHandler extends DefaultRequestHandler {
  constructor(card: AgentCard, executor: ReverseExecutor, push: PushDeps, private readonly lie: TaskState) {
    super(card, new InMemoryTaskStore(), executor, new DefaultExecutionEventBusManager(), push.store, push.sender);
  }

  override async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    const task = await super.getTask(params, context);
    // Lie in the read-back only; the store (used by send/cancel) stays truthful (brief §1).
    // A consistent liar: the same false answer every time, so only the first observation disagrees.
    return { ...task, artifacts: [], status: { state: this.lie, message: undefined, timestamp: task.status?.timestamp } };
  }
}

/** The push store and sender handed to the SDK handler (used because the card says pushNotifications). */
interface PushDeps {
  store: PushNotificationStore;
  sender: PushNotificationSender;
}

function makeHandler(card: AgentCard, opts: AgentOptions, push: PushDeps, executor: ReverseExecutor | FloodExecutor, tasks: InMemoryTaskStore): DefaultRequestHandler {
  if (opts.behaviour === 'lying-readback' && executor instanceof ReverseExecutor) {
    const lie = opts.lieState === 'working' ? TaskState.TASK_STATE_WORKING : TaskState.TASK_STATE_FAILED;
    return new LyingHandler(card, executor, push, lie);
  }
  return new DefaultRequestHandler(card, tasks, executor, new DefaultExecutionEventBusManager(), push.store, push.sender);
}

const listen = (app: express.Express, port: number): Promise<Server> =>
  new Promise((resolve, reject) => {
    const server = app.listen(port, '127.0.0.1', (err?: Error) => (err ? reject(err) : resolve(server)));
  });

/**
 * Starts a real A2A v1.0 delegatee on 127.0.0.1. It listens first and registers routes
 * afterwards, because the card must carry the bound port; nobody can reach the app
 * before its port is known, so there is no window with missing routes.
 */
export async function startAgent(opts: AgentOptions): Promise<RunningAgent> {
  const app = express();
  const server = await listen(app, opts.port ?? 0);
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const card = buildCard({ name: opts.name, baseUrl: url, requireExtension: opts.requireExtension, declareExtension: opts.declareExtension, protocol: opts.protocol });
  // Signed once at start-up and served as exact bytes, like a published card (a v0.3 agent publishes v0.3's shape).
  const published = opts.protocol === '0.3' ? legacyCardJson({ name: opts.name, baseUrl: url }) : cardJson(card);
  const signed = await signAgentCard(published as { [key: string]: JsonValue }, opts.name, url, opts.cardKind);
  const cardBody = JSON.stringify(signed.card);
  const log = new TestLog();
  const store = new InMemoryPushNotificationStore();
  const sender = new TestPushSender(store, { mode: opts.pushMode ?? 'token', jwt: opts.pushJwt ?? false, issuer: url, key: signed.signingKey, log });
  const tasks = new InMemoryTaskStore();
  const executor =
    opts.behaviour === 'artifact-flood' || opts.behaviour === 'status-flood'
      ? new FloodExecutor(opts.behaviour, opts.stepMs ?? 50, opts.floodCount, opts.floodEventBytes, tasks)
      : new ReverseExecutor(opts.stepMs ?? 50);
  const handler = makeHandler(card, opts, { store, sender }, executor, tasks);
  const held = new Set<Response>();

  app.get('/.well-known/agent-card.json', (_req, res) => void res.type('application/json').send(cardBody));
  app.get('/.well-known/jwks.json', (_req, res) => void res.json(signed.jwks));
  app.get('/_test/log', (_req, res) => void res.json(log.toJSON()));
  app.get('/_test/held', (_req, res) => void executor.gate.held().then(() => res.json({ held: true })));
  app.get('/_test/flood', (_req, res) => void res.json(executor instanceof FloodExecutor ? executor.stats : null));
  app.post('/_test/release', (_req, res) => void res.json({ released: executor.gate.release() }));
  const mount = (path: string, transport: Transport): void => {
    // Order: parse → log (so refused/dropped requests are still seen) → guards → misbehaviour → SDK.
    app.use(path, bodyParser(transport), log.recorder(transport));
    if (opts.requireExtension) app.use(path, requireExtension(opts.requireExtension, transport));
    if (opts.behaviour === 'never-answer') app.use(path, neverAnswer(transport, held));
    if (opts.behaviour === 'drop-after-accept') app.use(path, dropAfterAccept(transport, handler, log));
    if (opts.behaviour === 'lose-marked-sends') app.use(path, loseMarkedSends(transport, handler, log));
    if (opts.behaviour === 'reset-on-send') app.use(path, resetOnSend(transport));
    if (opts.behaviour === 'refuse-sends') app.use(path, refuseSends(transport));
    if (opts.behaviour === 'duplicate-key-stream') app.use(path, duplicateKeyStream(transport));
    if (executor instanceof FloodExecutor) app.use(path, executor.watch(transport));
    const sdk = transport === 'jsonrpc' ? jsonRpcHandler : restHandler;
    // A v0.3 agent: its card declares only 0.3 interfaces, so the SDK answers v0.3 requests only.
    app.use(path, sdk({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, ...(opts.protocol === '0.3' ? { legacyCompat: { enabled: true } } : {}) }));
  };
  mount('/a2a/jsonrpc', 'jsonrpc');
  mount('/a2a/rest', 'rest');

  return {
    url,
    jwks: signed.jwks,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections(); // keep-alive and held sockets would otherwise keep close() pending
      }),
  };
}
