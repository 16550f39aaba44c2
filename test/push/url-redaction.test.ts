/**
 * Webhook URLs often carry a token in their query: Baton keeps the URL it
 * must deliver to, but Create/Get/List and the CLI never show its query or
 * userinfo again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/gateway/callers.ts';
import { renderDeliveries } from '../../src/cli/commands/push.ts';
import { guardedAgent } from '../../src/push/guarded-agent.ts';
import { Outbox } from '../../src/push/outbox.ts';
import { PushRegistry } from '../../src/push/registry.ts';
import { SecretBox } from '../../src/push/secret-box.ts';
import { systemClock } from '../../src/records/time.ts';
import { redactedUrl, type WebhookPolicy } from '../../src/push/webhook-url.ts';
import { randomIds } from '../../src/records/ids.ts';
import { openAttempt, quietLogger, world } from './support.ts';

const POLICY: WebhookPolicy = { allowHttp: false, allow: [] };
const SECRET_URL = 'https://hooks.example/baton?token=s3cr3t-query-token&x=1';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('webhook URL redaction', () => {
  it('Create, Get and List return the URL without its query; the store keeps the full URL for delivery', async () => {
    const w = await world();
    const attempt = openAttempt();
    await w.store.putRecord(attempt);
    const box = new SecretBox(Buffer.alloc(32, 7));
    const agent = guardedAgent(POLICY);
    const outbox = new Outbox(
      { store: w.store, keyring: w.keyring, box, agent, policy: POLICY, logger: quietLogger(), owner: 'wrk_test', gateway: 'actor_baton_test', clock: systemClock },
      { retry: { maxAttempts: 2, baseMs: 10, maxMs: 10 }, deliveryTimeoutMs: 1_000, leaseMs: 3_000, intervalMs: 50, batch: 4 },
    );
    cleanups.push(async () => {
      await agent.close();
      await w.store.close();
    });
    const registry = new PushRegistry({ store: w.store, box, policy: POLICY, ids: randomIds, outbox, maxPerTask: 3, clock: systemClock });
    const created = await registry.create({ id: 'planner' } as Caller, attempt, { id: 'c1', taskId: attempt.record_id, url: SECRET_URL, token: 'tok' });
    const got = await registry.get(attempt, 'c1');
    const listed = await registry.list(attempt);
    for (const shown of [created, got, ...listed]) {
      expect(shown).toMatchObject({ url: 'https://hooks.example/baton', token: '' });
      expect(JSON.stringify(shown)).not.toContain('s3cr3t');
    }
    expect((await w.store.push.config(attempt.record_id, 'c1'))?.url).toBe(SECRET_URL);
  });

  it('the CLI line and the redaction helper drop query and userinfo', () => {
    expect(redactedUrl('https://user:pw@hooks.example:8443/p/q?token=abc#frag')).toBe('https://hooks.example:8443/p/q');
    const out = renderDeliveries([{ d: { delivery_id: 'dlv_1', status: 'dead', task_id: 'att_1', config_id: 'c1', attempts: 3, next_at: 'x', last_error: null } as never, url: SECRET_URL }]);
    expect(out).toContain('dlv_1');
    expect(out).not.toContain('s3cr3t');
  });
});
