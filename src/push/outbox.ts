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
 * Two things run beside the deliveries. Recovery looks at every config
 * whose task moved since it was last examined, marks it seen at the
 * revision it examined, and enqueues the outcome of a task that closed
 * without one (a process died in between); open tasks go on a watch list
 * instead, which is polled on its own, a few tasks at a time, so a
 * delegatee that hangs never holds up a delivery.
 */
import type { Agent } from 'undici';
import { isBatonError } from '../errors.ts';
import type { AttemptBody } from '../gateway/attempt-record.ts';
import type { Keyring } from '../keys/keyring.ts';
import type { Logger } from '../log.ts';
import type { Envelope, SealedRecord } from '../records/envelope.ts';
import type { JsonValue } from '../records/strict-json.ts';
import type { DeliveryRow, PushConfigCursor, PushConfigRow, Store } from '../store/port.ts';
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
  /** How often a still-open task with webhooks is re-read, in case its delegatee never notifies. */
  pollMs: number;
  /** Re-reads of watched tasks running at once. Default 4. */
  pollConcurrency?: number;
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
  now?: () => Date;
  random?: () => number;
  /** Re-reads an open task at its delegatee (verifying it if it is terminal). */
  refresh?: (taskId: string) => Promise<void>;
}

/** Polling a watched task backs off to at most this many poll intervals. */
const MAX_POLL_BACKOFF = 16;
/** Consecutive failed re-reads after which a task is no longer polled. */
const MAX_POLL_FAILURES = 20;
/** Page size of the scan that seeds the watch list at start. */
const SEED_PAGE = 500;

interface Watch {
  /** When the next re-read is due (ms since the epoch). */
  nextAt: number;
  /** Consecutive failed re-reads. */
  failures: number;
  polling: boolean;
}

export class Outbox {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private seeding: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  /** Open tasks with webhooks, re-read every pollMs in case their delegatee never notifies. */
  private readonly watched = new Map<string, Watch>();
  private readonly polls = new Set<Promise<void>>();

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
    this.watched.delete(closed.record_id);
    const configs = await this.deps.store.push.configs(closed.record_id);
    const added = await this.enqueueFor(closed, configs, verifiedTask);
    if (added > 0) this.wake();
    return added;
  }

  private async enqueueFor(closed: Attempt, configs: readonly PushConfigRow[], verifiedTask?: JsonValue): Promise<number> {
    if (configs.length === 0) return 0;
    const at = this.now();
    const added = await this.deps.store.push.enqueue(configs.map((c) => buildDelivery(closed, c, at, verifiedTask)));
    for (const c of configs) await this.deps.store.push.markSeen(c.task_id, c.config_id, closed.revision_id, c.created_at);
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
        : { task_id: record.record_id, config_id: 'operator', caller_id: 'operator', url, sealed_credentials: null, created_at: this.now().toISOString() };
    if (config !== existing) await this.deps.store.push.putConfig(config);
    await this.deps.store.push.enqueue([outboxDelivery(config, record.revision_id, payload, this.now())]);
    // Seen at once: the recovery pass must not take an escalation for a task to re-read.
    await this.deps.store.push.markSeen(record.record_id, 'operator', record.revision_id, config.created_at);
    this.wake();
  }

  /**
   * The recovery pass: every config whose task moved since it was last
   * examined is examined at the head revision the query returned, and
   * marked seen there. A closed task gets its outcome enqueued (a process
   * may have died between closing the attempt and enqueueing) unless it
   * closed within the grace period, which is the live path's to enqueue:
   * those stay unseen for a later pass. An open task goes on the watch list.
   */
  async recover(limit = 200): Promise<void> {
    const changed = await this.deps.store.push.changedConfigs(limit);
    const groups = new Map<string, { taskId: string; head: string; configs: PushConfigRow[] }>();
    for (const c of changed) {
      const key = `${c.task_id}\u0000${c.head_revision}`;
      const group = groups.get(key) ?? { taskId: c.task_id, head: c.head_revision, configs: [] };
      group.configs.push(c);
      groups.set(key, group);
    }
    const now = this.now().getTime();
    const grace = this.opts.recoveryGraceMs ?? 30_000;
    let added = 0;
    for (const { taskId, head, configs } of groups.values()) {
      const rec = await this.deps.store.getRecord(taskId, head);
      if (isAttempt(rec) && rec.body.state === 'closed') {
        if (now - Date.parse(rec.issued_at) < grace) continue;
        this.watched.delete(taskId);
        added += await this.enqueueFor(rec, configs);
        continue;
      }
      for (const c of configs) await this.deps.store.push.markSeen(c.task_id, c.config_id, head, c.created_at);
      // Not an attempt (an operator escalation, say): nothing to re-read.
      if (isAttempt(rec)) this.watch(taskId, now + this.opts.pollMs);
    }
    if (added > 0) this.wake();
  }

  /** Puts an open task on the watch list (a no-op if it is on it, or if this outbox cannot re-read tasks). */
  watch(taskId: string, dueAt = this.now().getTime() + this.opts.pollMs): void {
    if (!this.deps.refresh || this.watched.has(taskId)) return;
    this.watched.set(taskId, { nextAt: dueAt, failures: 0, polling: false });
  }

  /** The tasks on the watch list, with when each is due and its consecutive failures (tests, diagnostics). */
  watchList(): Map<string, { nextAt: number; failures: number }> {
    return new Map([...this.watched].map(([id, w]) => [id, { nextAt: w.nextAt, failures: w.failures }]));
  }

  /**
   * Starts the re-reads that are due, as many as the concurrency bound
   * allows; never waits for them. Each one finishing starts the next due one.
   */
  private pollDue(): void {
    if (!this.stopped) this.startDue();
  }

  private startDue(): void {
    if (!this.deps.refresh) return;
    const limit = this.opts.pollConcurrency ?? 4;
    const now = this.now().getTime();
    for (const [taskId, w] of this.watched) {
      if (this.polls.size >= limit) return;
      if (w.polling || w.nextAt > now) continue;
      w.polling = true;
      const run: Promise<void> = this.pollOne(taskId, w).finally(() => {
        w.polling = false;
        this.polls.delete(run);
        this.pollDue();
      });
      this.polls.add(run);
    }
  }

  /** Runs every due re-read and waits for them (tests; the worker never waits). */
  async poll(): Promise<void> {
    for (;;) {
      this.startDue();
      if (this.polls.size === 0) return;
      await Promise.allSettled([...this.polls]);
    }
  }

  private async pollOne(taskId: string, w: Watch): Promise<void> {
    const drop = () => {
      if (this.watched.get(taskId) === w) this.watched.delete(taskId);
    };
    try {
      const rec = await this.deps.store.getRecord(taskId);
      // Closed: recovery or the live path delivers it. No webhooks left: nobody is waiting.
      if (!isAttempt(rec) || rec.body.state === 'closed' || (await this.deps.store.push.configs(taskId)).length === 0) return drop();
      await this.deps.refresh!(taskId);
      w.failures = 0;
      w.nextAt = this.now().getTime() + this.opts.pollMs;
    } catch (err) {
      w.failures += 1;
      if (w.failures >= MAX_POLL_FAILURES) {
        drop();
        this.deps.logger.warn(
          { task_id: taskId, failures: w.failures, err: errText(err) },
          'push: stopped re-reading an open task after repeated failures; a new revision of it or a new registration resumes polling',
        );
        return;
      }
      w.nextAt = this.now().getTime() + this.opts.pollMs * Math.min(2 ** w.failures, MAX_POLL_BACKOFF);
      this.deps.logger.debug({ task_id: taskId, failures: w.failures, err: errText(err) }, 'push: re-reading an open task failed; backing off');
    }
  }

  /**
   * Fills the watch list from every active config, a page at a time: after
   * a restart nothing else would re-read open tasks whose configs were
   * already seen. Closed tasks are left to recovery.
   */
  private async seed(): Promise<void> {
    if (!this.deps.refresh) return;
    let after: PushConfigCursor | undefined;
    let last: string | undefined;
    while (!this.stopped) {
      const page = await this.deps.store.push.activeConfigs(after, SEED_PAGE);
      for (const c of page) {
        if (this.stopped) return;
        if (c.task_id === last || this.watched.has(c.task_id)) continue;
        last = c.task_id;
        const rec = await this.deps.store.getRecord(c.task_id);
        // Due now: notifications sent while no process was listening are lost.
        if (isAttempt(rec) && rec.body.state !== 'closed') this.watch(c.task_id, this.now().getTime());
      }
      this.pollDue();
      const tail = page[page.length - 1];
      if (page.length < SEED_PAGE || tail === undefined) return;
      after = { task_id: tail.task_id, config_id: tail.config_id };
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
    } else if (!isForGeneration(d, config)) {
      // Re-registered since (new URL, or deleted and created again): that registration has its own delivery.
      result = { error: 'superseded by a newer registration of this config', final: true };
    } else {
      try {
        const url = checkWebhookUrl(config.url, this.deps.policy);
        const signature = await signDelivery(d, config.url, this.deps.keyring, this.now());
        const res = await postWebhook(this.deps.agent, url, d.body, this.headersFor(d, config, signature), { timeoutMs: this.opts.deliveryTimeoutMs });
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

  /** Starts the worker: recovery and deliveries on every pass, and, beside them, the watch list seeded from the store. */
  start(): void {
    this.stopped = false;
    this.seeding ??= this.seed().catch((err) => this.deps.logger.warn({ err: errText(err) }, 'push: seeding the watch list failed; recovery still finds changed tasks'));
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
    // Started, never awaited: a hung delegatee must not delay deliveries.
    this.pollDue();
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
    await this.seeding;
    this.seeding = undefined;
    // Re-reads in flight are bounded by the remote call timeouts; give them a moment, not a veto over shutdown.
    if (this.polls.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...this.polls]), new Promise<void>((r) => (timer = setTimeout(r, 2_000)))]);
      clearTimeout(timer);
    }
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
