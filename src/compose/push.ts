/**
 * Push wiring (README "Push notifications"): the sealed webhook configs,
 * Baton's inbound webhook, the signed outbox, its guarded HTTP agent, and
 * the hooks the request path calls.
 */
import type { Config } from '../config.ts';
import { resolvedPaths } from '../config.ts';
import type { TrustStore } from '../cards/trust-store.ts';
import type { DelegateeRegistry } from '../gateway/delegatees.ts';
import type { PushHooks } from '../gateway/dispatcher.ts';
import type { Keyring } from '../keys/keyring.ts';
import type { Logger } from '../log.ts';
import { InboundWebhooks } from '../push/inbound.ts';
import { guardedAgent } from '../push/guarded-agent.ts';
import { parseConfigInput } from '../push/model.ts';
import { Outbox } from '../push/outbox.ts';
import { PushRegistry } from '../push/registry.ts';
import { SecretBox } from '../push/secret-box.ts';
import { addressAllowed, checkWebhookUrl, type WebhookPolicy } from '../push/webhook-url.ts';
import { randomIds } from '../records/ids.ts';
import { systemClock } from '../records/time.ts';
import type { Store } from '../store/port.ts';

/** Push notifications: sealed webhook configs, Baton's inbound webhook, the signed outbox and its guarded HTTP agent. */
export async function composePush(
  config: Config,
  deps: { store: Store; keyring: Keyring; logger: Logger; publicUrl: string; gateway: string; trust: TrustStore; delegatees: DelegateeRegistry; refresh: (taskId: string) => Promise<void> },
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
    { store: deps.store, keyring: deps.keyring, box, agent, policy, logger: deps.logger, owner: randomIds.next('wrk'), gateway: deps.gateway, clock: systemClock },
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
  const registry = new PushRegistry({ store: deps.store, box, policy, ids: randomIds, outbox, maxPerTask: p.maxConfigsPerTask, clock: systemClock });
  const inbound = new InboundWebhooks({ store: deps.store, box, trust: deps.trust, publicUrl: deps.publicUrl, logger: deps.logger, delegatee: (id) => deps.delegatees.configOf(id), refresh: deps.refresh, clock: systemClock });
  const hooks: PushHooks = {
    validate: (raw) => void checkWebhookUrl(parseConfigInput({ ...{}, ...(raw as object), taskId: 'pending' }).url, policy),
    register: async (caller, attempt, raw) => void (await registry.create(caller, attempt, { ...{}, ...(raw as object), taskId: attempt.record_id })),
    inbound: (taskId) => inbound.registrationFor(taskId),
    notifyTask: async (taskId, revisionId, task) => void (await outbox.notifyTask(taskId, revisionId, task)),
  };
  return { outbox, registry, inbound, hooks, close: () => agent.close() };
}

export type ComposedPush = Awaited<ReturnType<typeof composePush>>;
