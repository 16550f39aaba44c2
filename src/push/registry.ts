/**
 * The A2A push-config operations on Baton's front door. A config belongs to
 * Baton's task id, so whoever may see the task (its owner; the handler
 * checks) may read, list and delete its configs; the registering caller is
 * recorded for audit only. Its credentials are
 * sealed before they reach the store and never come back out through
 * Get/List. URLs are checked against the webhook policy on registration
 * (and again at every delivery, since DNS answers change).
 */
import { limitExceeded } from '../errors.ts';
import type { AttemptBody } from '../attempts/record.ts';
import type { Caller } from '../gateway/callers.ts';
import type { SealedRecord } from '../records/envelope.ts';
import type { Clock } from '../records/time.ts';
import type { IdSource } from '../records/ids.ts';
import type { PushConfigRow, Store } from '../store/port.ts';
import { credentialContext, credentialsOf, parseConfigInput, presentConfig, PushCredentials } from './model.ts';
import type { Outbox } from './outbox.ts';
import type { SecretBox } from './secret-box.ts';
import { checkWebhookUrl, type WebhookPolicy } from './webhook-url.ts';

type Attempt = SealedRecord<AttemptBody>;

export interface PushRegistryDeps {
  store: Store;
  box: SecretBox;
  policy: WebhookPolicy;
  ids: IdSource;
  outbox: Outbox;
  /** The outbox's clock (config creation and deletion times). */
  clock: Clock;
  /** Webhooks one task may have. */
  maxPerTask: number;
}

export class PushRegistry {
  constructor(private readonly deps: PushRegistryDeps) {}

  /**
   * Create (an upsert by config id): a new registration, with a new
   * generation (`created_at`), so deliveries queued for the one it replaces
   * are superseded. A task that already has its outcome gets it delivered at once.
   */
  async create(caller: Caller, attempt: Attempt, raw: unknown): Promise<Record<string, unknown>> {
    const input = parseConfigInput(raw);
    checkWebhookUrl(input.url, this.deps.policy);
    const taskId = attempt.record_id;
    const existing = await this.deps.store.push.configs(taskId);
    const configId = input.id || this.deps.ids.next('pnc');
    if (!existing.some((c) => c.config_id === configId) && existing.length >= this.deps.maxPerTask) {
      throw limitExceeded('this task has as many push configs as allowed', { max: this.deps.maxPerTask });
    }
    const creds = credentialsOf(input);
    // The registration's generation must move on, even within one clock tick: deliveries are keyed by it.
    const prior = existing.find((c) => c.config_id === configId);
    let at = this.deps.clock.now();
    if (prior && Date.parse(prior.created_at) >= at.getTime()) at = new Date(Date.parse(prior.created_at) + 1);
    const row = {
      task_id: taskId,
      config_id: configId,
      caller_id: caller.id,
      url: input.url,
      sealed_credentials: creds ? this.deps.box.seal(JSON.stringify(creds), credentialContext(taskId, configId)) : null,
      created_at: at.toISOString(),
      gateway_id: this.deps.outbox.gateway,
    };
    await this.deps.store.push.putConfig(row);
    if (attempt.body.state === 'closed') await this.deps.outbox.notify(attempt);
    return presentConfig({ ...{}, ...row, deleted_at: null, seen_revision: null }, input.authentication?.scheme);
  }

  async get(attempt: Attempt, configId: string): Promise<Record<string, unknown> | undefined> {
    const row = await this.deps.store.push.config(attempt.record_id, configId);
    return row && this.present(row);
  }

  async list(attempt: Attempt): Promise<Record<string, unknown>[]> {
    return (await this.deps.store.push.configs(attempt.record_id)).map((r) => this.present(r));
  }

  /** False when there was no such active config; the A2A operation treats that as done (idempotent). */
  async delete(attempt: Attempt, configId: string): Promise<boolean> {
    return this.deps.store.push.deleteConfig(attempt.record_id, configId, (this.deps.clock.now()).toISOString());
  }

  /**
   * Carries a task's webhooks over to the attempt that replaces it after a
   * reassignment, so integrators hear the new attempt's outcome. Credentials
   * are sealed to their row, so they are re-sealed for the new one.
   */
  async carryOver(fromTaskId: string, toTaskId: string): Promise<number> {
    const configs = await this.deps.store.push.configs(fromTaskId);
    for (const c of configs) {
      const sealed = c.sealed_credentials && this.deps.box.seal(this.deps.box.open(c.sealed_credentials, credentialContext(c.task_id, c.config_id)), credentialContext(toTaskId, c.config_id));
      await this.deps.store.push.putConfig({ task_id: toTaskId, config_id: c.config_id, caller_id: c.caller_id, url: c.url, sealed_credentials: sealed, created_at: (this.deps.clock.now()).toISOString(), gateway_id: this.deps.outbox.gateway });
    }
    return configs.length;
  }

  private present(row: PushConfigRow): Record<string, unknown> {
    const scheme = row.sealed_credentials
      ? PushCredentials.parse(JSON.parse(this.deps.box.open(row.sealed_credentials, credentialContext(row.task_id, row.config_id)))).authentication?.scheme
      : undefined;
    return presentConfig(row, scheme);
  }
}
