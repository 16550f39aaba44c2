/**
 * The durable outbox: verified outcomes become signed deliveries in the
 * store first, and are sent afterwards by a worker that claims them under a
 * lease. A process killed mid-delivery leaves its lease to expire, so another
 * (or the restarted) process sends the same bytes again under the same id:
 * at least once, duplicates recognisable. Deliveries that keep failing back
 * off exponentially with jitter and end dead-lettered, visible to operators.
 */
import type { Agent } from 'undici';
import { isBatonError } from '../errors.ts';
import type { AttemptBody } from '../gateway/attempt-record.ts';
import type { Keyring } from '../keys/keyring.ts';
import type { Logger } from '../log.ts';
import type { SealedRecord } from '../records/envelope.ts';
import type { JsonValue } from '../records/strict-json.ts';
import type { DeliveryRow, PushConfigRow, Store } from '../store/port.ts';
import { buildDelivery, DELIVERY_HEADERS } from './delivery.ts';
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
  /** How often a still-open task with webhooks is re-read, in case its delegatee never notifies. */
  pollMs: number;
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
  now?: () => Date;
  random?: () => number;
  /** Re-reads an open task at its delegatee (verifying it if it is terminal). */
  refresh?: (taskId: string) => Promise<void>;
}

export class Outbox {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  private readonly polled = new Map<string, number>();

  constructor(
    private readonly deps: OutboxDeps,
    private readonly opts: OutboxOptions,
  ) {}

  private now(): Date {
    return this.deps.now?.() ?? new Date();
  }

  /**
   * Enqueues the verified outcome `closed` for every webhook on its task.
   * `verifiedTask` is the read-back the verdict agreed with, when known.
   */
  async notify(closed: Attempt, verifiedTask?: JsonValue): Promise<number> {
    if (closed.body.state !== 'closed') return 0;
    const configs = await this.deps.store.push.configs(closed.record_id);
    const added = await this.enqueueFor(closed, configs, verifiedTask);
    if (added > 0) this.wake();
    return added;
  }

  private async enqueueFor(closed: Attempt, configs: readonly PushConfigRow[], verifiedTask?: JsonValue): Promise<number> {
    if (configs.length === 0) return 0;
    const at = this.now();
    const rows = await Promise.all(configs.map((c) => buildDelivery(closed, c, this.deps.keyring, at, verifiedTask)));
    const added = await this.deps.store.push.enqueue(rows);
    for (const c of configs) await this.deps.store.push.markSeen(c.task_id, c.config_id, closed.revision_id);
    return added;
  }

  /**
   * The recovery pass: any webhook whose task changed since it was last
   * served gets the task's outcome if it is closed (a process may have died
   * between closing the attempt and enqueueing), or a re-read if it is still
   * open and was not read for `pollMs`.
   */
  async recover(limit = 200): Promise<void> {
    const changed = await this.deps.store.push.changedConfigs(limit);
    const byTask = new Map<string, PushConfigRow[]>();
    for (const c of changed) byTask.set(c.task_id, [...(byTask.get(c.task_id) ?? []), c]);
    const now = this.now().getTime();
    for (const [taskId, configs] of byTask) {
      const attempt = (await this.deps.store.getRecord(taskId)) as unknown as Attempt | undefined;
      if (!attempt) continue;
      if (attempt.body.state === 'closed') {
        if ((await this.enqueueFor(attempt, configs)) > 0) this.wake();
        this.polled.delete(taskId);
      } else if (this.deps.refresh && now - (this.polled.get(taskId) ?? 0) >= this.opts.pollMs) {
        this.polled.set(taskId, now);
        await this.deps.refresh(taskId).catch((err) => this.deps.logger.debug({ err: errText(err), task_id: taskId }, 'push: re-reading an open task failed'));
      }
    }
  }

  /** Claims one batch of due deliveries and sends them; returns how many were tried. */
  async drain(): Promise<number> {
    const now = this.now();
    const claimed = await this.deps.store.push.claim(this.deps.owner, now.toISOString(), new Date(now.getTime() + this.opts.leaseMs).toISOString(), this.opts.batch);
    await Promise.all(claimed.map((d) => this.deliver(d)));
    return claimed.length;
  }

  private async deliver(d: DeliveryRow): Promise<void> {
    const log = { delivery_id: d.delivery_id, task_id: d.task_id, attempt: d.attempts };
    const config = await this.deps.store.push.config(d.task_id, d.config_id);
    let result: { status: number } | { error: string; final: boolean };
    if (!config) {
      result = { error: 'the push config was deleted', final: true };
    } else {
      try {
        const url = checkWebhookUrl(config.url, this.deps.policy);
        const res = await postWebhook(this.deps.agent, url, d.body, this.headersFor(d, config), { timeoutMs: this.opts.deliveryTimeoutMs });
        result = { status: res.status };
      } catch (err) {
        // A refused destination will not become acceptable by retrying.
        result = { error: errText(err), final: isBatonError(err, 'deny') || isBatonError(err, 'invalid_request') };
      }
    }
    const verdict = judgeTry(result, d.attempts, this.opts.retry, this.deps.random);
    const at = this.now();
    const kept = await this.deps.store.push.finish(d.delivery_id, this.deps.owner, {
      status: verdict.status,
      at: at.toISOString(),
      ...(verdict.status === 'pending' ? { next_at: new Date(at.getTime() + verdict.delayMs).toISOString() } : {}),
      last_error: verdict.status === 'delivered' ? null : verdict.error,
    });
    if (!kept) this.deps.logger.warn(log, 'push: lease lost before the result was recorded; the delivery will be retried');
    else if (verdict.status === 'dead') this.deps.logger.warn({ ...log, error: verdict.error }, 'push: delivery dead-lettered');
    else if (verdict.status === 'pending') this.deps.logger.info({ ...log, error: verdict.error }, 'push: delivery failed; will retry');
    else this.deps.logger.debug(log, 'push: delivered');
  }

  private headersFor(d: DeliveryRow, config: PushConfigRow): Record<string, string> {
    const headers: Record<string, string> = {
      'content-type': 'application/a2a+json',
      [DELIVERY_HEADERS.id]: d.delivery_id,
      'idempotency-key': d.delivery_id,
      [DELIVERY_HEADERS.signature]: d.signature,
    };
    if (config.sealed_credentials) {
      const creds = PushCredentials.parse(JSON.parse(this.deps.box.open(config.sealed_credentials, credentialContext(config.task_id, config.config_id))));
      if (creds.token) headers['x-a2a-notification-token'] = creds.token;
      if (creds.authentication) headers.authorization = `${creds.authentication.scheme} ${creds.authentication.credentials}`;
    }
    return headers;
  }

  /** Starts the worker: recovery first (outcomes a previous process did not enqueue), then deliveries. */
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

/** Error text without URLs (a webhook URL may carry a secret in its query). */
function errText(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.replace(/\bhttps?:\/\/\S+/g, '<url>').slice(0, 300);
}
