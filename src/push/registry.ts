/**
 * The A2A push-config operations on Baton's front door. A config belongs to
 * the caller that registered it and to Baton's task id; its credentials are
 * sealed before they reach the store and never come back out through
 * Get/List. URLs are checked against the webhook policy on registration
 * (and again at every delivery, since DNS answers change).
 */
import { limitExceeded } from '../errors.ts';
import type { AttemptBody } from '../gateway/attempt-record.ts';
import type { Caller } from '../gateway/callers.ts';
import type { SealedRecord } from '../records/envelope.ts';
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
  now?: () => Date;
  /** Webhooks one task may have. */
  maxPerTask: number;
}

export class PushRegistry {
  constructor(private readonly deps: PushRegistryDeps) {}

  /** Create (an upsert by config id). A task that already has its outcome gets it delivered at once. */
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
    const row = {
      task_id: taskId,
      config_id: configId,
      caller_id: caller.id,
      url: input.url,
      sealed_credentials: creds ? this.deps.box.seal(JSON.stringify(creds), credentialContext(taskId, configId)) : null,
      created_at: (this.deps.now?.() ?? new Date()).toISOString(),
    };
    await this.deps.store.push.putConfig(row);
    if (attempt.body.state === 'closed') await this.deps.outbox.notify(attempt);
    return presentConfig({ ...row, deleted_at: null, seen_revision: null }, input.authentication?.scheme);
  }

  async get(attempt: Attempt, configId: string): Promise<Record<string, unknown> | undefined> {
    const row = await this.deps.store.push.config(attempt.record_id, configId);
    return row && this.present(row);
  }

  async list(attempt: Attempt): Promise<Record<string, unknown>[]> {
    return (await this.deps.store.push.configs(attempt.record_id)).map((r) => this.present(r));
  }

  async delete(attempt: Attempt, configId: string): Promise<boolean> {
    return this.deps.store.push.deleteConfig(attempt.record_id, configId, (this.deps.now?.() ?? new Date()).toISOString());
  }

  private present(row: PushConfigRow): Record<string, unknown> {
    const scheme = row.sealed_credentials
      ? PushCredentials.parse(JSON.parse(this.deps.box.open(row.sealed_credentials, credentialContext(row.task_id, row.config_id)))).authentication?.scheme
      : undefined;
    return presentConfig(row, scheme);
  }
}
