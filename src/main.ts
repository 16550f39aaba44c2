/**
 * The composition root: the only place that wires adapters (store, keys,
 * HTTP, undici) to the core. Everything else receives its dependencies.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDocumentFetcher, jwksFetcherOf } from './cards/fetch.ts';
import { loadCardPublisher, type CardPublisher } from './cards/publisher.ts';
import { CardResolver } from './cards/resolver.ts';
import { TrustStore } from './cards/trust-store.ts';
import type { OwnerBinding } from './contracts/model.ts';
import type { Config } from './config.ts';
import { resolvedPaths } from './config.ts';
import { DelegationAuthority } from './gateway/authority.ts';
import { createCallerAuthenticator, type CallerAuthenticator } from './gateway/callers.ts';
import { DelegateeRegistry } from './gateway/delegatees.ts';
import { Dispatcher, type PushHooks } from './gateway/dispatcher.ts';
import { delegateeOf, ownerActorRef } from './gateway/identity.ts';
import { buildPreset } from './gateway/preset.ts';
import { ProxyCards } from './gateway/proxy-card.ts';
import type { RemoteClient } from './gateway/remote.ts';
import { VersionedRemoteClient } from './gateway/legacy-remote.ts';
import { gatewayRouter } from './gateway/router.ts';
import { createApp } from './http/app.ts';
import { extendedCardFor, wellKnownRouter } from './http/well-known.ts';
import { AgentCard } from '@a2a-js/sdk';
import { Keyring } from './keys/keyring.ts';
import { createLogger, type Logger } from './log.ts';
import { digestOf } from './records/digest.ts';
import { randomIds } from './records/ids.ts';
import { systemClock } from './records/time.ts';
import { openStore } from './store/open.ts';
import { Escalations, type Escalation } from './operator/escalation.ts';
import { operatorRouter } from './operator/router.ts';
import { OperatorService } from './operator/service.ts';
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
  close(): Promise<void>;
}

/** Opens the store and keys, listens, then builds the app once the public URL is known. */
export async function startGateway(config: Config, opts: { logger?: Logger } = {}): Promise<Gateway> {
  const logger = opts.logger ?? createLogger({ level: config.logLevel });
  const store = await openStore(config, { create: true });
  const keyring = await Keyring.open(resolvedPaths(config).keys);
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}`;
  const publicUrl = (config.publicUrl ?? url).replace(/\/+$/, '');
  // v1.0 and, through the SDK's compatibility layer, v0.3 delegatees (gateway/legacy-remote.ts).
  const remote = new VersionedRemoteClient({ limits: config.remote });

  let outbox: Outbox | undefined;
  let admin: Server | undefined;
  let adminUrl: string | undefined;
  try {
    const composed = await composeGateway(config, { store, keyring, publicUrl, logger, remote });
    const { publisher, dispatcher, app } = composed;
    outbox = composed.push?.outbox;
    server.on('request', app);
    outbox?.start();
    // After a restart nothing is tracked in memory: watch every attempt that may still run.
    const adopted = await dispatcher.adoptOpenAttempts();
    if (adopted > 0) logger.info({ adopted }, 'watching attempts left open by a previous process');
    if (config.operators.length > 0) {
      admin = createServer(createApp({ store, logger, routers: [operatorRouter({ service: composed.operator, operators: config.operators, logger })] }));
      await new Promise<void>((resolve, reject) => {
        admin!.once('error', reject);
        admin!.listen(config.admin.port, config.admin.host, resolve);
      });
      const a = admin.address() as AddressInfo;
      adminUrl = `http://${config.admin.host.includes(':') ? `[${config.admin.host}]` : config.admin.host}:${a.port}`;
    } else {
      logger.info('no operators configured: the operator API is not started');
    }
    if (config.admin.webhookUrl && !config.push.enabled) logger.warn('admin.webhookUrl is set but push is disabled: escalations are not delivered to it');
    let sweeping = false;
    let ticks = 0;
    const adoptEvery = Math.max(1, Math.round(10_000 / config.revocationSweepMs));
    const sweep = setInterval(() => {
      if (sweeping) return; // never overlap passes
      sweeping = true;
      // Every ~10 s, also pick up attempts started elsewhere (another gateway, a CLI reassignment).
      (++ticks % adoptEvery === 0 ? dispatcher.adoptOpenAttempts() : Promise.resolve(0))
        .then(() => dispatcher.sweepRevocations())
        .then((n) => n > 0 && logger.info({ cancelled: n }, 'revocation propagated to running attempts'))
        .catch((err) => logger.warn({ err }, 'revocation sweep failed'))
        .finally(() => (sweeping = false));
    }, config.revocationSweepMs);
    sweep.unref();
    logger.info({ url, publicUrl, adminUrl, store: config.store.kind, delegatees: config.delegatees.map((d) => d.id), keys: keyring.all().map((k) => k.kid) }, 'baton gateway listening');
    return {
      url,
      ...(adminUrl ? { adminUrl } : {}),
      server,
      store,
      keyring,
      publisher,
      dispatcher,
      logger,
      async close() {
        clearInterval(sweep);
        await outbox?.stop();
        for (const s of [server, admin]) {
          if (!s) continue;
          await new Promise<void>((resolve) => {
            s.close(() => resolve());
            s.closeAllConnections();
          });
        }
        await composed.push?.close();
        await remote.close();
        await store.close();
      },
    };
  } catch (err) {
    await outbox?.stop();
    admin?.close();
    server.close();
    await remote.close();
    await store.close();
    throw err;
  }
}

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
}

/** Wires the core over opened adapters; shared by `serve` and by CLI commands that act as the gateway. */
export async function composeGateway(config: Config, deps: CoreDeps) {
  const { store, keyring, publicUrl, logger, remote } = deps;
  const publisher = await loadCardPublisher({ cardsDir: config.cardsDir, keyring, publicUrl });
  const own = publisher.primary;
  const ownInternal = AgentCard.fromJSON(own.publicCard.card);
  const gateway = delegateeOf(own.params, own.publicCard.payloadDigest, 'own card');
  const ownerActor = ownerActorRef(config.ownerNamespace);
  const owner: OwnerBinding = { namespace: config.ownerNamespace, access_domain: 'a2a', space_id: config.spaceId, config_revision: digestOf(config.presets).slice(7, 23) };
  if (deps.announce !== false) await bootstrapStreams(store, config.spaceId, gateway, own.publicCard.payloadDigest);

  const fetcher = createDocumentFetcher();
  const trust = await TrustStore.fromConfig(config.trust, { readFile: async (p) => readFile(p), fetchJwks: jwksFetcherOf(fetcher) });
  const delegatees = new DelegateeRegistry(config.delegatees, { resolver: new CardResolver({ fetch: fetcher, trust }), store, spaceId: config.spaceId, announcer: gateway.actor_ref });
  const presets = new Map(config.presets.map((p) => [p.id, buildPreset(p, { gateway, owner: ownerActor, spaceId: config.spaceId })]));
  const authority = new DelegationAuthority({ store, keyring, clock: systemClock, ids: randomIds, owner, gateway, presets });
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
  const dispatcher = new Dispatcher({
    store,
    authority,
    delegatees,
    cards,
    remote,
    clock: systemClock,
    ids: randomIds,
    gatewayActor: gateway.actor_ref,
    spaceId: config.spaceId,
    escalate: (kind, subject, reasons) => escalations.raise(kind, subject, reasons),
    signal: (s) => breakers.signal(s),
    ...(push ? { push: push.hooks } : {}),
  });
  const breakers = new BreakerMonitor({
    rules: new BreakerRules({ ...DEFAULT_BREAKER_POLICY, ...config.breakers }),
    store,
    spaceId: config.spaceId,
    logger,
    trip: (t) => operator.tripBreaker(t.scope.kind, t.scope.id, t.trigger, t.reason, gateway.actor_ref),
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
  });
  const auth = await authenticator(config);
  const app = createApp({
    store,
    logger,
    routers: [
      ...(push ? [push.inbound.router()] : []),
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
  return { publisher, dispatcher, delegatees, auth, app, ownerActor, push, operator, escalations, breakers };
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
    { store: deps.store, keyring: deps.keyring, box, agent, policy, logger: deps.logger, owner: randomIds.next('wrk'), refresh: deps.refresh },
    {
      retry: { maxAttempts: p.maxAttempts, baseMs: p.backoffBaseMs, maxMs: p.backoffMaxMs },
      deliveryTimeoutMs: p.deliveryTimeoutMs,
      // postWebhook's abort signal bounds the whole exchange (connect, headers and body) by deliveryTimeoutMs;
      // twice that plus a second also covers signing and recording the result.
      leaseMs: p.deliveryTimeoutMs * 2 + 1_000,
      intervalMs: p.intervalMs,
      batch: 16,
      pollMs: p.pollMs,
    },
  );
  const registry = new PushRegistry({ store: deps.store, box, policy, ids: randomIds, outbox, maxPerTask: p.maxConfigsPerTask });
  const inbound = new InboundWebhooks({ store: deps.store, box, trust: deps.trust, publicUrl: deps.publicUrl, logger: deps.logger, delegatee: (id) => deps.delegatees.configOf(id), refresh: deps.refresh });
  const hooks: PushHooks = {
    validate: (raw) => void checkWebhookUrl(parseConfigInput({ ...(raw as object), taskId: 'pending' }).url, policy),
    register: async (caller, attempt, raw) => void (await registry.create(caller, attempt, { ...(raw as object), taskId: attempt.record_id })),
    inbound: (taskId) => inbound.registrationFor(taskId),
    closed: (attempt, verifiedTask) =>
      void outbox.notify(attempt, verifiedTask).catch((err) => deps.logger.warn({ task_id: attempt.record_id, err: err instanceof Error ? err.message : String(err) }, 'push: enqueue failed; the recovery pass will retry')),
  };
  return { outbox, registry, inbound, hooks, close: () => agent.close() };
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

async function authenticator(config: Config): Promise<CallerAuthenticator> {
  if (!config.jwt) return createCallerAuthenticator(config.callers);
  const jwks = JSON.parse(await readFile(config.jwt.jwksFile, 'utf8'));
  return createCallerAuthenticator(config.callers, { config: config.jwt, jwks });
}
