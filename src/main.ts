/**
 * The composition root: the only place that wires adapters (store, keys,
 * HTTP, undici) to the core. Everything else receives its dependencies.
 * startGateway is the listeners and the lifecycle (start, drain, close);
 * composeGateway the composition. Their parts live in src/compose/: push
 * wiring, the sweep scheduler, bootstrap, the human gates, the path
 * events, and the operator listener.
 */
import { AuthThrottle } from './http/auth-throttle.ts';
import { ownerActorRef } from './contracts/identities.ts';
import { startAdminListener } from './compose/admin-listener.ts';
import { bootstrapStreams, claimIdentity } from './compose/bootstrap.ts';
import { composeGates } from './compose/gates.ts';
import { gatewayMetrics, metricLabels, pathEvents } from './compose/path-events.ts';
import { composePush } from './compose/push.ts';
import { scheduleSweeps } from './compose/sweeps.ts';
import { applyV8Flags } from './compose/v8-flags.ts';
import type { OperatorConsole } from './console/router.ts';
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
import { Dispatcher } from './gateway/dispatcher.ts';
import { AttemptRepository } from './gateway/attempts.ts';
import { delegateeOf } from './gateway/identity.ts';
import { buildPreset, type GatewayPresetConfig } from './contracts/machine-preset.ts';
import { ProxyCards } from './gateway/proxy-card.ts';
import type { RemoteClient } from './gateway/remote.ts';
import { VersionedRemoteClient } from './gateway/legacy-remote.ts';
import { gatewayRouter } from './gateway/router.ts';
import { createApp } from './http/app.ts';
import { composeMcp, mcpRegistry } from './compose/mcp.ts';
import { InFlightCalls } from './mcp/in-flight.ts';
import type { Turn } from './gateway/path/turn.ts';
import { federationOf } from './federation/compose.ts';
import { federationRouter } from './federation/routes.ts';
import { notingCaller } from './http/access-log.ts';
import { createListener, drain, listen, serveApp } from './http/listener.ts';
import { extendedCardFor, wellKnownRouter } from './http/well-known.ts';
import { AgentCard } from '@a2a-js/sdk';
import { Keyring } from './keys/keyring.ts';
import { createLogger, type Logger } from './log.ts';
import { randomIds } from './records/ids.ts';
import { systemClock } from './records/time.ts';
import { openStore } from './store/open.ts';
import { Escalations, type Escalation } from './operator/escalation.ts';
import { OperatorService } from './operator/service.ts';
import { authenticatorFor, configRevisionOf, LiveConfig, SwappableAuthenticator, type ReloadReport, type Reread } from './operator/reload.ts';
import { BreakerMonitor } from './operator/breakers.ts';
import { BreakerRules, DEFAULT_BREAKER_POLICY } from './control/breaker.ts';
import type { JsonValue } from './records/strict-json.ts';
import type { Outbox } from './push/outbox.ts';
import type { Store } from './store/port.ts';
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
  applyV8Flags();
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
    serveApp(server, app);
    outbox?.start();
    // Every open follow-up is in the store: this node takes over those whose lease lapsed (after a restart, a crash elsewhere).
    dispatcher.follower.start();
    if (!early) url = await listen(server, config.port, config.host);
    ({ admin, adminUrl, ops } = await startAdminListener(config, { store, logger }, composed));
    if (config.admin.webhookUrl && !config.push.enabled) logger.warn('admin.webhookUrl is set but push is disabled: escalations are not delivered to it');
    const stopSweeps = scheduleSweeps(config, { dispatcher, store, logger, actor: composed.ownerActor });
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
          stopSweeps();
          ops?.close(); // its live streams would otherwise hold the drain open
          // Stop accepting; requests in flight (admissions included) may finish within the drain deadline.
          // Turns this node follows get the same deadline; what is not over stays in the work queue for the next node.
          const [cut] = await Promise.all([drain([server, admin], config.shutdown.drainMs), dispatcher.drain(config.shutdown.drainMs)]);
          await outbox?.stop();
          // Close the store before cutting upstream calls: an attempt whose call is cut must stay open
          // in the store (the next start adopts, follows and reads it back), not be recorded as lost.
          await store.close();
          await remote.abortAll();
          await composed.mcp?.close();
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
  const resolver = new CardResolver({ fetch: fetcher, trust, history: storeCardHistory(store.meta) });
  const delegatees = new DelegateeRegistry(config.delegatees, { resolver, store, spaceId: config.spaceId, announcer: gateway.actor_ref, onCardProblem });
  const presetOf = (p: GatewayPresetConfig) => buildPreset(p, { gateway, owner: ownerActor, spaceId: config.spaceId });
  const presets = new Map(config.presets.map((p) => [p.id, presetOf(p)]));
  // A notice's trip is escalated like any breaker (escalations exist before the first notice can arrive).
  const escalate = (delegation_id: string, reasons: string[]) => escalations.raise('breaker_tripped', { delegation_id, scope: `delegation:${delegation_id}` }, reasons);
  const federation = federationOf(config, { store, keyring, self: gateway.actor_ref.object_id, actorRef: gateway.actor_ref, escalate });
  const authority = new DelegationAuthority({ store, keyring, clock: systemClock, ids: randomIds, owner, gateway, presets, federation, registry: mcpRegistry(config) });
  const calls = new InFlightCalls();
  const cards = new ProxyCards({ delegatees, keyring, publicUrl: () => publicUrl, identity: own.params, push: config.push.enabled });
  // Push and dispatcher refer to each other (a verified outcome feeds the outbox; a notification triggers a re-read).
  const refresh = (taskId: string): Promise<void> => dispatcher.refresh(taskId); // only ever called after both exist
  const push = config.push.enabled ? await composePush(config, { store, keyring, logger, publicUrl, gateway: gateway.actor_ref.object_id, trust, delegatees, refresh }) : undefined;
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
    calls,
    // Called only once both exist (the MCP adapter is composed on the dispatcher's deps).
    ...(config.mcpServers.length > 0 ? { mcp: { resumeApproved: (taskId: string) => mcp!.resumeApproved(taskId), follow: (turn: Turn, row: { deadline: string }) => mcp!.follow(turn, row) } } : {}),
    ...(push ? { push: push.hooks } : {}),
    ...(gates ? { gates } : {}),
  });
  const breakers = new BreakerMonitor({
    rules: new BreakerRules({ ...{}, ...DEFAULT_BREAKER_POLICY, ...config.breakers }),
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
  const live = new LiveConfig(config, { parts: { trust, delegatees, presets, auth: callers, cards, authority, buildPreset: presetOf, fetchJwks: jwksFetcherOf(fetcher), applied: (c) => metrics.relabel(metricLabels(c)) }, logger, ...(deps.reread ? { reread: deps.reread } : {}) });
  // /readyz names delegatees whose card does not verify (issue #17): their fault, not the callers'.
  const degraded = () => delegatees.cardProblems().map((p) => ({ delegatee: p.delegatee, problem: p.message, since: p.since }));
  const series = new ConsoleSeries();
  const throttle = new AuthThrottle(config.authThrottle);
  const mcp = composeMcp(config.mcpServers, { path: dispatcher.deps, calls, presets, auth, throttle, logger, resolver, keyring, publicUrl: () => publicUrl, identity: own.params, ...(config.jwt ? { oauth: { issuer: config.jwt.issuer, publicUrl: () => publicUrl } } : {}) });
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
      ...(mcp ? [mcp.router] : []),
      gatewayRouter({
        dispatcher,
        delegatees,
        auth,
        cards,
        logger,
        ownCard: async () => ownInternal,
        throttle,
        ...(push ? { push: push.registry } : {}),
        ownExtendedCard: async (caller) => AgentCard.fromJSON(extendedCardFor(own, caller).card),
      }),
    ],
  });
  return { publisher, dispatcher, delegatees, auth, app, ownerActor, push, operator, escalations, breakers, metrics, live, degraded, series, mcp };
}
