/**
 * The durable outbox: verified outcomes become deliveries in the store
 * first, and are sent afterwards by a worker that claims them under a
 * lease. A process killed mid-delivery leaves its lease to expire, so another
 * (or the restarted) process sends the same body bytes again under the same
 * id: at least once, duplicates recognisable. Each try is signed when it is
 * sent (current key, current time, the webhook's current URL). Deliveries
 * that keep failing back off exponentially with jitter and end
 * dead-lettered, visible to operators.
 *
 * Beside the deliveries runs recovery: it looks at every config whose task
 * moved since it was last examined, marks it seen at the revision it
 * examined, and enqueues the outcome of a task that closed without one (a
 * process died in between). Open tasks are not the outbox's to re-read: the
 * durable follower (src/gateway/follower.ts) follows every open attempt to
 * its verdict, which then arrives here.
 */
import type { Agent } from 'undici';
import { isBatonError } from '../errors.ts';
import type { AttemptBody } from '../attempts/record.ts';
import type { Keyring } from '../keys/keyring.ts';
import type { Logger } from '../log.ts';
import type { Envelope, SealedRecord } from '../records/envelope.ts';
import type { JsonValue } from '../records/strict-json.ts';
import type { Clock } from '../records/time.ts';
import type { DeliveryRow, PushConfigRow, Store } from '../store/port.ts';
import { buildDelivery, DELIVERY_HEADERS, isForGeneration, outboxDelivery, signDelivery } from './delivery.ts';
import { checkWebhookUrl, type WebhookPolicy } from './webhook-url.ts';
import { postWebhook } from './guarded-agent.ts';
import { credentialContext, judgeTry, PushCredentials, type RetryPolicy } from './model.ts';
import type { SecretBox } from './secret-box.ts';

type Attempt = SealedRecord<AttemptBody>;

export interface OutboxOptions {
  retry: RetryPolicy;
  deliveryTimeoutMs: number;
  /** How long a claim is exclusive; must exceed the delivery timeout. */
  leaseMs: number;
  /** Worker wake-up interval when nothing nudges it. */
  intervalMs: number;
  /** Deliveries claimed and sent at once per process. */
  batch: number;
  /**
   * Recovery leaves a task closed less than this long ago to the live path,
   * which enqueues it with the verified read-back as evidence. Default 30 s.
   */
  recoveryGraceMs?: number;
}

export interface OutboxDeps {
  store: Store;
  keyring: Keyring;
  box: SecretBox;
  agent: Agent;
  policy: WebhookPolicy;
  logger: Logger;
  /** Names this process's leases. */
  owner: string;
  /**
   * The gateway (its actor id) this outbox sends for. Gateways of several
   * organisations can share one store (README "one shared ledger"): configs
   * it registers and deliveries it enqueues name it, and it recovers and
   * claims only its own (and rows naming none, from before) — another's it
   * would sign with its own key, to that organisation's integrators.
   */
  gateway: string;
  /** The one clock the outbox reads: enqueue times, claims and leases, signatures, backoff, recovery's grace (records/time.ts). */
  clock: Clock;
  random?: () => number;
}

export class Outbox {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;

  constructor(
    private readonly deps: OutboxDeps,
    private readonly opts: OutboxOptions,
  ) {}

  /** The gateway this outbox sends for (the registry names it on the configs it stores). */
  get gateway(): string {
    return this.deps.gateway;
  }

  /**
   * Enqueues the verified outcome `closed` for every webhook on its task.
   * `verifiedTask` is the read-back the verdict agreed with, when known.
   */
  async notify(closed: Attempt, verifiedTask?: JsonValue): Promise<number> {
    if (closed.body.state !== 'closed') return 0;
    const configs = this.own(await this.deps.store.push.configs(closed.record_id));
    const added = await this.enqueueFor(closed, configs, verifiedTask);
    if (added > 0) this.wake();
    return added;
  }

  /**
   * The configs this gateway sends to: its own and those naming none. Another
   * gateway's config on a task judged here (a legacy work row any gateway
   * follows) is left to that gateway's recovery pass, which signs with its key.
   */
  private own(configs: PushConfigRow[]): PushConfigRow[] {
    return configs.filter((c) => c.gateway_id === null || c.gateway_id === this.deps.gateway);
  }

  private async enqueueFor(closed: Attempt, configs: readonly PushConfigRow[], verifiedTask?: JsonValue): Promise<number> {
    if (configs.length === 0) return 0;
    const at = this.deps.clock.now();
    const added = await this.deps.store.push.enqueue(configs.map((c) => buildDelivery(closed, c, at, this.deps.gateway, verifiedTask)));
    for (const c of configs) await this.deps.store.push.markSeen(c.task_id, c.config_id, closed.revision_id, c.created_at);
    return added;
  }

  /**
   * Tells every webhook of a task about a state Baton set itself before any
   * attempt exists (held for a human approval, denied): one delivery per
   * request revision, signed and retried like the others.
   */
  async notifyTask(taskId: string, revisionId: string, task: JsonValue): Promise<number> {
    const configs = this.own(await this.deps.store.push.configs(taskId));
    if (configs.length === 0) return 0;
    const added = await this.deps.store.push.enqueue(configs.map((c) => outboxDelivery(c, revisionId, { task }, this.deps.clock.now(), this.deps.gateway)));
    for (const c of configs) await this.deps.store.push.markSeen(c.task_id, c.config_id, revisionId, c.created_at);
    if (added > 0) this.wake();
    return added;
  }

  /**
   * Sends an operator notification (an escalation) to the operator's webhook
   * through the same durable, signed, retried path as integrators' ones.
   */
  async notifyOperator(record: SealedRecord<Record<string, unknown>>, url: string, payload: Record<string, JsonValue>): Promise<void> {
    // The same registration while the URL is unchanged, so the same escalation revision keeps one delivery id.
    const existing = await this.deps.store.push.config(record.record_id, 'operator');
    const config =
      existing && existing.url === url
        ? existing
        : { task_id: record.record_id, config_id: 'operator', caller_id: 'operator', url, sealed_credentials: null, created_at: this.deps.clock.now().toISOString(), gateway_id: this.deps.gateway };
    if (config !== existing) await this.deps.store.push.putConfig(config);
    await this.deps.store.push.enqueue([outboxDelivery(config, record.revision_id, payload, this.deps.clock.now(), this.deps.gateway)]);
    // Seen at once: the recovery pass must not take an escalation for a task to re-read.
    await this.deps.store.push.markSeen(record.record_id, 'operator', record.revision_id, config.created_at);
    this.wake();
  }

  /**
   * The recovery pass: every config of this gateway whose task moved since it was last
   * examined is examined at the head revision the query returned, and
   * marked seen there. A closed task gets its outcome enqueued (a process
   * may have died between closing the attempt and enqueueing) unless it
   * closed within the grace period, which is the live path's to enqueue:
   * those stay unseen for a later pass. An open task is marked seen: its
   * verdict, when the follower commits it, is a new revision and comes back here.
   */
  async recover(limit = 200): Promise<void> {
    const changed = await this.deps.store.push.changedConfigs(limit, this.deps.gateway);
    const groups = new Map<string, { taskId: string; head: string; configs: PushConfigRow[] }>();
    for (const c of changed) {
      const key = `${c.task_id}\u0000${c.head_revision}`;
      const group = groups.get(key) ?? { taskId: c.task_id, head: c.head_revision, configs: [] };
      group.configs.push(c);
      groups.set(key, group);
    }
    const now = this.deps.clock.now().getTime();
    const grace = this.opts.recoveryGraceMs ?? 30_000;
    let added = 0;
    for (const { taskId, head, configs } of groups.values()) {
      const rec = await this.deps.store.getRecord(taskId, head);
      if (isAttempt(rec) && rec.body.state === 'closed') {
        if (now - Date.parse(rec.issued_at) < grace) continue;
        added += await this.enqueueFor(rec, configs);
        continue;
      }
      for (const c of configs) await this.deps.store.push.markSeen(c.task_id, c.config_id, head, c.created_at);
    }
    if (added > 0) this.wake();
  }

  /** Claims one batch of due deliveries and sends them; returns how many were tried. */
  async drain(): Promise<number> {
    const now = this.deps.clock.now();
    const claimed = await this.deps.store.push.claim(this.deps.owner, now.toISOString(), new Date(now.getTime() + this.opts.leaseMs).toISOString(), this.opts.batch, this.deps.gateway);
    await Promise.all(claimed.map((d) => this.deliver(d)));
    return claimed.length;
  }

  private async deliver(d: DeliveryRow): Promise<void> {
    const log = { delivery_id: d.delivery_id, task_id: d.task_id, attempt: d.attempts };
    const config = await this.deps.store.push.config(d.task_id, d.config_id);
    let result: { status: number } | { error: string; final: boolean };
    if (!config) {
      result = { error: 'the push config was deleted', final: true };
    } else if (!isForGeneration(d, config)) {
      // Re-registered since (new URL, or deleted and created again): that registration has its own delivery.
      result = { error: 'superseded by a newer registration of this config', final: true };
    } else {
      try {
        const url = checkWebhookUrl(config.url, this.deps.policy);
        const signature = await signDelivery(d, config.url, this.deps.keyring, this.deps.clock.now());
        const res = await postWebhook(this.deps.agent, url, d.body, this.headersFor(d, config, signature), { timeoutMs: this.opts.deliveryTimeoutMs });
        result = { status: res.status };
      } catch (err) {
        // A refused destination will not become acceptable by retrying.
        result = { error: errText(err), final: isBatonError(err, 'deny') || isBatonError(err, 'invalid_request') };
      }
    }
    const verdict = judgeTry(result, d.attempts, this.opts.retry, this.deps.random);
    const at = this.deps.clock.now();
    const kept = await this.deps.store.push.finish(d.delivery_id, this.deps.owner, {
      status: verdict.status,
      at: at.toISOString(),
      ...(verdict.status === 'pending' ? { next_at: new Date(at.getTime() + verdict.delayMs).toISOString() } : {}),
      last_error: verdict.status === 'delivered' ? null : verdict.error,
    });
    if (!kept) this.deps.logger.warn(log, 'push: lease lost before the result was recorded; the delivery will be retried');
    else if (verdict.status === 'dead') this.deps.logger.warn({ ...{}, ...log, error: verdict.error }, 'push: delivery dead-lettered');
    else if (verdict.status === 'pending') this.deps.logger.info({ ...{}, ...log, error: verdict.error }, 'push: delivery failed; will retry');
    else this.deps.logger.debug(log, 'push: delivered');
  }

  private headersFor(d: DeliveryRow, config: PushConfigRow, signature: string): Record<string, string> {
    const headers: Record<string, string> = {
      'content-type': 'application/a2a+json',
      [DELIVERY_HEADERS.id]: d.delivery_id,
      'idempotency-key': d.delivery_id,
      [DELIVERY_HEADERS.signature]: signature,
    };
    if (config.sealed_credentials) {
      const creds = PushCredentials.parse(JSON.parse(this.deps.box.open(config.sealed_credentials, credentialContext(config.task_id, config.config_id))));
      if (creds.token) headers['x-a2a-notification-token'] = creds.token;
      if (creds.authentication) headers.authorization = `${creds.authentication.scheme} ${creds.authentication.credentials}`;
    }
    return headers;
  }

  /** Starts the worker: recovery and deliveries on every pass. */
  start(): void {
    this.stopped = false;
    this.wake();
  }

  /** Runs a pass soon; passes never overlap, and a nudge during one schedules another. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = this.pass().finally(() => {
      this.running = undefined;
      if (this.stopped) return;
      if (this.again) {
        this.again = false;
        this.wake();
      } else {
        this.timer = setTimeout(() => this.wake(), this.opts.intervalMs);
        this.timer.unref();
      }
    });
  }

  private async pass(): Promise<void> {
    try {
      await this.recover();
    } catch (err) {
      this.deps.logger.warn({ err: errText(err) }, 'push: recovery pass failed; retrying on the next pass');
    }
    try {
      // Bounded: at most 20 batches per pass, so a backlog never starves the timer.
      for (let i = 0; i < 20 && !this.stopped && (await this.drain()) === this.opts.batch; i++);
    } catch (err) {
      this.deps.logger.warn({ err: errText(err) }, 'push: outbox pass failed; retrying on the next pass');
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}

function isAttempt(rec: Envelope | undefined): rec is Envelope & Attempt {
  return rec !== undefined && rec.schema_ref.endsWith('#execution_attempt');
}

/** Error text without URLs (a webhook URL may carry a secret in its query). */
function errText(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.replace(/\bhttps?:\/\/\S+/g, '<url>').slice(0, 300);
}
