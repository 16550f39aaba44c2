/**
 * The composition root: the only place that wires adapters (store, keys,
 * HTTP, undici) to the core. Everything else receives its dependencies.
 */
import { OperatorConsole } from './console/router.ts';
import { frontDoorSeries } from './console/front-door.ts';
import { ConsoleSeries } from './console/series.ts';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createDocumentFetcher, jwksFetcherOf } from './cards/fetch.ts';
import { loadCardPublisher, type CardPublisher } from './cards/publisher.ts';
import { CardResolver } from './cards/resolver.ts';
import { storeCardHistory } from './cards/card-history.ts';
import { TrustStore } from './cards/trust-store.ts';
import type { OwnerBinding } from './contracts/model.ts';
import type { Config } from './config.ts';
import { resolvedPaths } from './config.ts';
import { DelegationAuthority } from './gateway/authority.ts';
import { DelegateeRegistry, type CardProblem } from './gateway/delegatees.ts';
import { callerActorRef } from './gateway/callers.ts';
import { HumanGates } from './gates/approvals.ts';
import type { ActorRef } from './records/revision-ref.ts';
import { Dispatcher, type PushHooks } from './gateway/dispatcher.ts';
import { AttemptRepository } from './gateway/attempts.ts';
import { PathEvents } from './gateway/path/events.ts';
import type { BreakerSignal } from './control/breaker.ts';
import { delegateeOf, ownerActorRef } from './gateway/identity.ts';
import { buildPreset, type GatewayPresetConfig } from './gateway/preset.ts';
import { ProxyCards } from './gateway/proxy-card.ts';
import type { RemoteClient } from './gateway/remote.ts';
import { VersionedRemoteClient } from './gateway/legacy-remote.ts';
import { gatewayRouter } from './gateway/router.ts';
import { createApp } from './http/app.ts';
import { federationOf } from './federation/compose.ts';
import { federationRouter } from './federation/routes.ts';
import { notingCaller } from './http/access-log.ts';
import { createListener, drain, listen } from './http/listener.ts';
import { extendedCardFor, wellKnownRouter } from './http/well-known.ts';
import { AgentCard } from '@a2a-js/sdk';
import { Keyring } from './keys/keyring.ts';
import { decideIdentity, GatewayIdentity } from './keys/gateway-identity.ts';
import { createLogger, type Logger } from './log.ts';
import { randomIds } from './records/ids.ts';
import { systemClock } from './records/time.ts';
import { openStore } from './store/open.ts';
import { schedulePurges } from './retention/schedule.ts';
import { Escalations, type Escalation } from './operator/escalation.ts';
import { operatorRouter } from './operator/router.ts';
import { OperatorService } from './operator/service.ts';
import { authenticatorFor, configRevisionOf, LiveConfig, SwappableAuthenticator, type ReloadReport, type Reread } from './operator/reload.ts';
import { BreakerMonitor } from './operator/breakers.ts';
import { BreakerRules, DEFAULT_BREAKER_POLICY } from './control/breaker.ts';
import type { JsonValue } from './records/strict-json.ts';
import { InboundWebhooks } from './push/inbound.ts';
import { guardedAgent } from './push/guarded-agent.ts';
import { parseConfigInput } from './push/model.ts';
import { Outbox } from './push/outbox.ts';
import { PushRegistry } from './push/registry.ts';
import { SecretBox } from './push/secret-box.ts';
import { addressAllowed, checkWebhookUrl, type WebhookPolicy } from './push/webhook-url.ts';
import type { Store } from './store/port.ts';
import { GatewayMetrics } from './telemetry/metrics.ts';
import { startTracing } from './telemetry/tracing.ts';
import type { SpanExporter } from '@opentelemetry/sdk-trace-node';

export interface Gateway {
  url: string;
  server: Server;
  store: Store;
  keyring: Keyring;
  publisher: CardPublisher;
  dispatcher: Dispatcher;
  logger: Logger;
  /** The operator API's own listener, when operators are configured. */
  adminUrl?: string;
  /** Re-reads the configuration and applies what can change live (SIGHUP; src/operator/reload.ts). */
  reload(): Promise<ReloadReport>;
  close(): Promise<void>;
}

/**
 * Opens the store and keys, builds the app, and only then listens: a
 * connection that arrives while Baton starts is refused, never accepted and
 * left unanswered. (With port 0 and no publicUrl the cards need the bound
 * port first; then every request is answered 503 `unavailable` until ready.)
 */
export async function startGateway(config: Config, opts: { logger?: Logger; spanExporter?: SpanExporter; reread?: Reread } = {}): Promise<Gateway> {
  const logger = opts.logger ?? createLogger({ level: config.logLevel });
  const store = await openStore(config, { create: true });
  const keyring = await Keyring.open(resolvedPaths(config).keys);
  const server = createListener(config.server);
  const early = config.port === 0 && !config.publicUrl;
  const starting = (_req: IncomingMessage, res: ServerResponse) => void res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1', connection: 'close' }).end(STARTING);
  // v1.0 and, through the SDK's compatibility layer, v0.3 delegatees (gateway/legacy-remote.ts).
  const remote = new VersionedRemoteClient({ limits: config.remote });

  // Installed before anything that could open a span; uninstalled on close or a failed start.
  const tracing = await startTracing(config.tracing, opts.spanExporter);
  let outbox: Outbox | undefined;
  let admin: Server | undefined;
  let adminUrl: string | undefined;
  let ops: OperatorConsole | undefined;
  try {
    if (early) server.on('request', starting);
    let url = early ? await listen(server, 0, config.host) : `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
    const publicUrl = (config.publicUrl ?? url).replace(/\/+$/, '');
    const composed = await composeGateway(config, { store, keyring, publicUrl, logger, remote, ...(opts.reread ? { reread: opts.reread } : {}) });
    const { publisher, dispatcher, app } = composed;
    outbox = composed.push?.outbox;
    server.off('request', starting);
    server.on('request', app);
    outbox?.start();
    // Every open follow-up is in the store: this node takes over those whose lease lapsed (after a restart, a crash elsewhere).
    dispatcher.follower.start();
    if (!early) url = await listen(server, config.port, config.host);
    if (config.operators.length > 0 || config.metrics.enabled === true) {
      // /metrics before the operator routes: it needs no operator key (README "Metrics").
      const metrics = config.metrics.enabled === false ? [] : [composed.metrics.router()];
      // The console shares the operator listener: never reachable on the public port.
      if (config.operators.length > 0) ops = new OperatorConsole({ service: composed.operator, store, spaceId: config.spaceId, operators: config.operators, logger, series: composed.series });
      admin = createListener(config.server, createApp({ store, logger, degraded: composed.degraded, observe: (l) => composed.metrics.request(l), routers: [...metrics, ...(ops ? [ops.router] : []), operatorRouter({ service: composed.operator, live: composed.live, operators: config.operators, logger })] }));
      adminUrl = await listen(admin, config.admin.port, config.admin.host);
    } else {
      logger.info('no operators configured: the operator API is not started');
    }
    if (config.admin.webhookUrl && !config.push.enabled) logger.warn('admin.webhookUrl is set but push is disabled: escalations are not delivered to it');
    let sweeping = false;
    const sweep = setInterval(() => {
      if (sweeping) return; // never overlap passes
      sweeping = true;
      // The sweep walks the durable work queue: attempts started on any node, before a restart, or by a CLI reassignment.
      dispatcher
        .sweepRevocations()
        .then((n) => n > 0 && logger.info({ cancelled: n }, 'revocation propagated to running attempts'))
        .catch((err) => logger.warn({ err }, 'revocation sweep failed'))
        // Approved effects recorded elsewhere (the CLI, another node) are forwarded from here.
        .then(() => dispatcher.sweepApprovals((task, err) => logger.warn({ task, err: err instanceof Error ? err.message : String(err) }, 'approved effect not admitted')))
        .catch((err) => logger.warn({ err }, 'approvals sweep failed'))
        .finally(() => (sweeping = false));
    }, config.revocationSweepMs);
    sweep.unref();
    const stopPurges = schedulePurges(config.retention, { store, clock: systemClock, ids: randomIds, logger, actor: composed.ownerActor });
    logger.info({ url, publicUrl, adminUrl, store: config.store.kind, delegatees: config.delegatees.map((d) => d.id), keys: keyring.all().map((k) => k.kid) }, 'baton gateway listening');
    let closing: Promise<void> | undefined;
    return {
      url,
      ...(adminUrl ? { adminUrl } : {}),
      server,
      store,
      keyring,
      publisher,
      dispatcher,
      logger,
      reload: () => composed.live.reload(),
      close: () =>
        (closing ??= (async () => {
          clearInterval(sweep);
          stopPurges();
          ops?.close(); // its live streams would otherwise hold the drain open
          // Stop accepting; requests in flight (admissions included) may finish within the drain deadline.
          // Turns this node follows get the same deadline; what is not over stays in the work queue for the next node.
          const [cut] = await Promise.all([drain([server, admin], config.shutdown.drainMs), dispatcher.drain(config.shutdown.drainMs)]);
          await outbox?.stop();
          // Close the store before cutting upstream calls: an attempt whose call is cut must stay open
          // in the store (the next start adopts, follows and reads it back), not be recorded as lost.
          await store.close();
          await remote.abortAll();
          await composed.push?.close();
          await tracing?.shutdown();
          logger.info({ cut }, cut > 0 ? 'stopped; requests still running at the drain deadline were cut (their attempts stay open)' : 'stopped after draining');
        })()),
    };
  } catch (err) {
    await outbox?.stop();
    admin?.close();
    server.close();
    await remote.abortAll();
    await store.close();
    await tracing?.shutdown();
    throw err;
  }
}

const STARTING = JSON.stringify({ error: { code: 'unavailable', message: 'gateway is starting', details: {} } });

export interface CoreDeps {
  store: Store;
  keyring: Keyring;
  publicUrl: string;
  logger: Logger;
  remote: RemoteClient;
  /**
   * Announce Baton's own card on its agent stream (serve does; a CLI acting
   * for the gateway must not, or a different URL would move that head and
   * invalidate every fence taken on it).
   */
  announce?: boolean;
  /** How a reload re-reads the configuration (SIGHUP, `baton reload`); without it a reload is refused. */
  reread?: Reread;
}

/** Wires the core over opened adapters; shared by `serve` and by CLI commands that act as the gateway. */
export async function composeGateway(config: Config, deps: CoreDeps) {
  const { store, keyring, publicUrl, logger, remote } = deps;
  const publisher = await loadCardPublisher({ cardsDir: config.cardsDir, keyring, publicUrl });
  const own = publisher.primary;
  const ownInternal = AgentCard.fromJSON(own.publicCard.card);
  const gateway = delegateeOf(own.params, own.publicCard.payloadDigest, 'own card');
  const ownerActor = ownerActorRef(config.ownerNamespace);
  const owner: OwnerBinding = { namespace: config.ownerNamespace, access_domain: 'a2a', space_id: config.spaceId, config_revision: configRevisionOf(config.presets) };
  if (deps.announce !== false) {
    await claimIdentity(store, { gateway_id: gateway.actor_ref.object_id, public_url: config.publicUrl?.replace(/\/+$/, '') ?? null, kids: keyring.all().map((k) => k.kid).sort() });
    await bootstrapStreams(store, config.spaceId, gateway, own.publicCard.payloadDigest);
  }

  const fetcher = createDocumentFetcher();
  const trust = await TrustStore.fromConfig(config.trust, { readFile: async (p) => readFile(p), fetchJwks: jwksFetcherOf(fetcher) });
  const onCardProblem = (id: string, p: CardProblem | undefined) => (p ? logger.warn({ delegatee: id, problem: p.message }, 'delegatee card does not verify: /readyz reports it degraded') : logger.info({ delegatee: id }, 'delegatee card verifies again'));
  const delegatees = new DelegateeRegistry(config.delegatees, { resolver: new CardResolver({ fetch: fetcher, trust, history: storeCardHistory(store.meta) }), store, spaceId: config.spaceId, announcer: gateway.actor_ref, onCardProblem });
  const presetOf = (p: GatewayPresetConfig) => buildPreset(p, { gateway, owner: ownerActor, spaceId: config.spaceId });
  const presets = new Map(config.presets.map((p) => [p.id, presetOf(p)]));
  const federation = federationOf(config, { store, keyring, self: gateway.actor_ref.object_id, actorRef: gateway.actor_ref });
  const authority = new DelegationAuthority({ store, keyring, clock: systemClock, ids: randomIds, owner, gateway, presets, federation });
  const cards = new ProxyCards({ delegatees, keyring, publicUrl: () => publicUrl, identity: own.params, push: config.push.enabled });
  // Push and dispatcher refer to each other (a verified outcome feeds the outbox; a notification triggers a re-read).
  const refresh = (taskId: string): Promise<void> => dispatcher.refresh(taskId); // only ever called after both exist
  const push = config.push.enabled ? await composePush(config, { store, keyring, logger, publicUrl, trust, delegatees, refresh }) : undefined;
  const webhook = config.admin.webhookUrl;
  const escalations = new Escalations({
    store,
    logger,
    ids: randomIds,
    clock: systemClock,
    actor: gateway.actor_ref,
    ...(push && webhook ? { notify: (e: Escalation) => push.outbox.notifyOperator(e, webhook, { escalation: e as unknown as JsonValue }) } : {}),
  });
  const events = pathEvents({ push: push?.outbox, escalations, signal: (s) => breakers.signal(s), logger });
  const metrics = gatewayMetrics(config, { store, logger, escalations }).observe(events);
  const gates = composeGates(config, store, gateway.actor_ref);
  const dispatcher = new Dispatcher({
    store,
    attempts: new AttemptRepository({ store, clock: systemClock, ids: randomIds, gatewayActor: gateway.actor_ref }),
    authority,
    delegatees,
    cards,
    remote,
    clock: systemClock,
    ids: randomIds,
    gatewayActor: gateway.actor_ref,
    spaceId: config.spaceId,
    node: randomIds.next('node'),
    follow: config.follow,
    events,
    federation,
    ...(push ? { push: push.hooks } : {}),
    ...(gates ? { gates } : {}),
  });
  const breakers = new BreakerMonitor({
    rules: new BreakerRules({ ...DEFAULT_BREAKER_POLICY, ...config.breakers }),
    store,
    spaceId: config.spaceId,
    logger,
    trip: (t) => (metrics.tripped(t), operator.tripBreaker(t.scope.kind, t.scope.id, t.trigger, t.reason, gateway.actor_ref)),
  });
  const operator = new OperatorService({
    store,
    dispatcher,
    delegatees,
    authority,
    remote,
    keyring,
    escalations,
    clock: systemClock,
    ids: randomIds,
    spaceId: config.spaceId,
    gatewayActor: gateway.actor_ref,
    ...(push ? { carryPush: (from: string, to: string) => push.registry.carryOver(from, to) } : {}),
    ...(gates ? { gates } : {}),
  });
  // Noting the caller lets the access log name who made each request (src/http/access-log.ts).
  const callers = new SwappableAuthenticator(await authenticatorFor(config));
  const auth = notingCaller(callers);
  const live = new LiveConfig(config, { parts: { trust, delegatees, presets, auth: callers, cards, authority, buildPreset: presetOf, fetchJwks: jwksFetcherOf(fetcher) }, logger, ...(deps.reread ? { reread: deps.reread } : {}) });
  // /readyz names delegatees whose card does not verify (issue #17): their fault, not the callers'.
  const degraded = () => delegatees.cardProblems().map((p) => ({ delegatee: p.delegatee, problem: p.message, since: p.since }));
  const series = new ConsoleSeries();
  const app = createApp({
    store,
    logger,
    observe: (l) => metrics.request(l),
    degraded,
    routers: [
      frontDoorSeries(series),
      ...(push ? [push.inbound.router()] : []),
      federationRouter({ federation, auth }),
      wellKnownRouter({ publisher, authenticate: async (req) => auth.authenticate(req.headers).catch(() => undefined) }),
      gatewayRouter({
        dispatcher,
        delegatees,
        auth,
        cards,
        logger,
        ownCard: async () => ownInternal,
        ...(push ? { push: push.registry } : {}),
        ownExtendedCard: async (caller) => AgentCard.fromJSON(extendedCardFor(own, caller).card),
      }),
    ],
  });
  return { publisher, dispatcher, delegatees, auth, app, ownerActor, push, operator, escalations, breakers, metrics, live, degraded, series };
}

/** Human authority gates (src/gates), when any approver, rule or delegatee `requireApproval` is configured. */
function composeGates(config: Config, store: Store, gatewayActor: ActorRef): HumanGates | undefined {
  const a = config.approvals;
  if (a.approvers.length === 0 && a.rules.length === 0 && !config.delegatees.some((d) => d.requireApproval !== undefined)) return undefined;
  const callers = new Map(config.callers.map((c) => [c.id, c]));
  return new HumanGates({
    store,
    clock: systemClock,
    ids: randomIds,
    gatewayActor,
    config: a,
    callerOf: (id) => {
      const c = callers.get(id);
      return c && { id: c.id, actor: callerActorRef(c.id), via: c.apiKeySha256 ? 'api_key' : 'jwt', ...(c.preset ? { preset: c.preset } : {}), ...(c.upstream ? { upstream: c.upstream } : {}) };
    },
    requireApprovalOf: (id) => config.delegatees.find((d) => d.id === id)?.requireApproval,
  });
}

/** Push notifications: sealed webhook configs, Baton's inbound webhook, the signed outbox and its guarded HTTP agent. */
async function composePush(
  config: Config,
  deps: { store: Store; keyring: Keyring; logger: Logger; publicUrl: string; trust: TrustStore; delegatees: DelegateeRegistry; refresh: (taskId: string) => Promise<void> },
) {
  const p = config.push;
  const box = await SecretBox.open(resolvedPaths(config).keys);
  const policy: WebhookPolicy = { allowHttp: p.allowHttp, allow: p.allowAddresses };
  try {
    addressAllowed('192.0.2.1', policy); // parses the allow list now: a typo must fail the start, not dead-letter every delivery
  } catch {
    throw new TypeError(`invalid configuration: push.allowAddresses must be CIDRs or addresses (got ${JSON.stringify(p.allowAddresses)})`);
  }
  const agent = guardedAgent(policy, { connectTimeoutMs: Math.min(p.deliveryTimeoutMs, 10_000) });
  const outbox = new Outbox(
    { store: deps.store, keyring: deps.keyring, box, agent, policy, logger: deps.logger, owner: randomIds.next('wrk') },
    {
      retry: { maxAttempts: p.maxAttempts, baseMs: p.backoffBaseMs, maxMs: p.backoffMaxMs },
      deliveryTimeoutMs: p.deliveryTimeoutMs,
      // postWebhook's abort signal bounds the whole exchange (connect, headers and body) by deliveryTimeoutMs;
      // twice that plus a second also covers signing and recording the result.
      leaseMs: p.deliveryTimeoutMs * 2 + 1_000,
      intervalMs: p.intervalMs,
      batch: 16,
    },
  );
  const registry = new PushRegistry({ store: deps.store, box, policy, ids: randomIds, outbox, maxPerTask: p.maxConfigsPerTask });
  const inbound = new InboundWebhooks({ store: deps.store, box, trust: deps.trust, publicUrl: deps.publicUrl, logger: deps.logger, delegatee: (id) => deps.delegatees.configOf(id), refresh: deps.refresh });
  const hooks: PushHooks = {
    validate: (raw) => void checkWebhookUrl(parseConfigInput({ ...(raw as object), taskId: 'pending' }).url, policy),
    register: async (caller, attempt, raw) => void (await registry.create(caller, attempt, { ...(raw as object), taskId: attempt.record_id })),
    inbound: (taskId) => inbound.registrationFor(taskId),
    notifyTask: async (taskId, revisionId, task) => void (await outbox.notifyTask(taskId, revisionId, task)),
  };
  return { outbox, registry, inbound, hooks, close: () => agent.close() };
}

/**
 * The request path's domain events, wired to what hangs off them: verified
 * outcomes to the push outbox, breaker signals to the monitor, and what
 * Baton cannot settle itself to the operator's escalations.
 */
function pathEvents(deps: { push: Outbox | undefined; escalations: Escalations; signal: (s: BreakerSignal) => void; logger: Logger }): PathEvents {
  const events = new PathEvents();
  const warn = (what: string) => (err: unknown) => deps.logger.warn({ err: err instanceof Error ? err.message : String(err) }, what);
  events.on(async (e) => {
    if (e.type === 'signal') deps.signal(e.signal);
    if (e.type === 'escalate') await deps.escalations.raise(e.kind, e.subject, e.reasons).catch(warn('escalation failed'));
    if (e.type !== 'closed') return;
    const c = e.attempt.body;
    await deps.push?.notify(e.attempt, e.evidence).catch(warn('push: enqueue failed; the recovery pass will retry'));
    if (c.outcome) deps.signal({ kind: 'outcome', outcome: c.outcome, agent: c.remote.card_ref.object_id, delegation: c.delegation_ref.object_id });
    if (c.outcome === 'unknown' || c.outcome === 'partially_applied') {
      const reasons = [`outcome ${c.outcome}: the reservation is held until reconciliation`, ...e.reasons];
      await deps.escalations.raise('effect_unverifiable', { attempt_id: c.attempt_id, delegation_id: c.delegation_ref.object_id }, reasons).catch(warn('escalation failed'));
    }
  });
  return events;
}

/** Metrics over this gateway's configured delegatees and presets (src/telemetry/metrics.ts). */
function gatewayMetrics(config: Config, deps: { store: Store; logger: Logger; escalations: Escalations }): GatewayMetrics {
  const openEscalations = async () => (await deps.escalations.list({ state: 'open', limit: 1000 })).length;
  return new GatewayMetrics({ store: deps.store, logger: deps.logger, delegatees: config.delegatees.map((d) => d.id), presets: config.presets.map((p) => p.id), openEscalations });
}

/** One identity per gateway in a shared store (src/keys/gateway-identity.ts); a node presenting another one refuses to start. */
async function claimIdentity(store: Store, mine: GatewayIdentity): Promise<void> {
  const decide = (stored: string | undefined) => JSON.stringify(decideIdentity(stored === undefined ? undefined : GatewayIdentity.parse(JSON.parse(stored)), mine));
  await store.meta.claimIdentity(mine.gateway_id, decide, new Date().toISOString());
}

/** The space policy stream and Baton's own agent stream must be active before any fence can hold. */
async function bootstrapStreams(store: Store, spaceId: string, gateway: ReturnType<typeof delegateeOf>, cardDigest: string): Promise<void> {
  await store.control.appendControl({
    event_type: 'baton.scope.lifecycle_changed',
    control_scope_ref: { space_id: spaceId, scope_kind: 'space', scope_id: spaceId },
    actor_ref: gateway.actor_ref,
    idempotency_key: `bootstrap:${gateway.actor_ref.object_id}`,
    payload: { lifecycle: 'active' },
  });
  await store.control.appendControl({
    event_type: 'rw003.agent_card.published',
    control_scope_ref: { space_id: spaceId, scope_kind: 'agent', scope_id: gateway.card_ref.object_id },
    actor_ref: gateway.actor_ref,
    idempotency_key: `verified:${cardDigest}`,
    payload: { card_ref: gateway.card_ref, form: 'public' },
  });
}
