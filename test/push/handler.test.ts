/** The push operations of Baton's A2A handler: which A2A error each refusal is. */
import type { AgentCard } from '@a2a-js/sdk';
import { PushNotificationNotSupportedError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { afterEach, describe, expect, it } from 'vitest';
import { BatonA2AHandler, type RequestFacts, type TaskService } from '../../src/gateway/a2a-handler.ts';
import type { Caller } from '../../src/gateway/callers.ts';

import { guardedAgent } from '../../src/push/guarded-agent.ts';
import { Outbox } from '../../src/push/outbox.ts';
import { PushRegistry } from '../../src/push/registry.ts';
import { SecretBox } from '../../src/push/secret-box.ts';
import { systemClock } from '../../src/records/time.ts';
import type { WebhookPolicy } from '../../src/push/webhook-url.ts';
import { randomIds } from '../../src/records/ids.ts';
import { openAttempt, quietLogger, world } from './support.ts';

const LOOPBACK: WebhookPolicy = { allowHttp: true, allow: ['127.0.0.0/8'] };
const caller = { id: 'planner' } as Caller;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(opts: { push: boolean }) {
  const w = await world();
  const attempt = openAttempt();
  await w.store.putRecord(attempt);
  const box = new SecretBox(Buffer.alloc(32, 9));
  const agent = guardedAgent(LOOPBACK);
  const outbox = new Outbox(
    { store: w.store, keyring: w.keyring, box, agent, policy: LOOPBACK, logger: quietLogger(), owner: 'wrk_test', gateway: 'actor_baton_test', clock: systemClock },
    { retry: { maxAttempts: 2, baseMs: 10, maxMs: 10 }, deliveryTimeoutMs: 1_000, leaseMs: 3_000, intervalMs: 50, batch: 4 },
  );
  const registry = new PushRegistry({ store: w.store, box, policy: LOOPBACK, ids: randomIds, outbox, maxPerTask: 3, clock: systemClock });
  cleanups.push(async () => {
    await agent.close();
    await w.store.close();
  });
  const sent: unknown[] = [];
  const unused = async (): Promise<never> => {
    throw new Error('not used by these tests');
  };
  // A fake of exactly the port the A2A edge uses: the compiler checks every member's type.
  const dispatcher: TaskService = {
    attemptFor: async (_c, id) => (id === attempt.record_id ? attempt : undefined),
    subscribePush: async () => false,
    send: async (_c, _d, params) => {
      sent.push(params);
      return { task: { id: attempt.record_id, contextId: 'ctx_1', status: { state: 'TASK_STATE_WORKING' } } };
    },
    stream: async function* (_c, _d, params) {
      sent.push(params);
      yield { task: { id: attempt.record_id, contextId: 'ctx_1', status: { state: 'TASK_STATE_WORKING' } } };
    },
    getTask: unused,
    listTasks: unused,
    cancel: unused,
    resubscribe: async function* () {
      yield* [];
      throw new Error('not used by these tests');
    },
  };
  const facts = new WeakMap<object, RequestFacts>();
  const context = (raw?: Record<string, unknown>) => {
    const headers = {};
    facts.set(headers, { caller, ...(raw ? { raw: raw as RequestFacts['raw'] } : {}) });
    return new ServerCallContext({ state: new Map([['headers', headers]]) });
  };
  const handler = new BatonA2AHandler({ delegatee: 'alice', card: async () => ({}) as AgentCard, ...(opts.push ? { push: registry } : {}) }, dispatcher, facts, 'jsonrpc');
  return { handler, context, attempt, sent, registry };
}

const message = { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] };

describe('push operations on the A2A handler', () => {
  it('Get of an unknown config is TaskNotFoundError; Delete of one succeeds (idempotent), as in the SDK', async () => {
    const s = await setup({ push: true });
    const taskId = s.attempt.record_id;
    await expect(s.handler.getTaskPushNotificationConfig({ tenant: '', taskId, id: 'nope' }, s.context())).rejects.toBeInstanceOf(TaskNotFoundError);
    await s.handler.createTaskPushNotificationConfig({ tenant: '', id: 'mine', taskId, url: 'http://127.0.0.1:9/hook', token: '', authentication: undefined }, s.context());
    expect((await s.handler.getTaskPushNotificationConfig({ tenant: '', taskId, id: 'mine' }, s.context())).id).toBe('mine');
    await s.handler.deleteTaskPushNotificationConfig({ tenant: '', taskId, id: 'mine' }, s.context());
    await s.handler.deleteTaskPushNotificationConfig({ tenant: '', taskId, id: 'mine' }, s.context()); // again: still fine
    await s.handler.deleteTaskPushNotificationConfig({ tenant: '', taskId, id: 'never-was' }, s.context());
    await expect(s.handler.getTaskPushNotificationConfig({ tenant: '', taskId, id: 'mine' }, s.context())).rejects.toBeInstanceOf(TaskNotFoundError);
    // Another caller's (or no) task is still not found, for Delete too.
    await expect(s.handler.deleteTaskPushNotificationConfig({ tenant: '', taskId: 'att_elsewhere', id: 'mine' }, s.context())).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it('with push disabled, a send carrying a push config is PushNotificationNotSupportedError before anything is dispatched', async () => {
    const s = await setup({ push: false });
    const raw = { message, configuration: { taskPushNotificationConfig: { url: 'https://hooks.example/h' } } };
    const params = { message, configuration: undefined } as never;
    await expect(s.handler.sendMessage(params, s.context(raw))).rejects.toBeInstanceOf(PushNotificationNotSupportedError);
    await expect(s.handler.sendMessageStream(params, s.context(raw)).next()).rejects.toBeInstanceOf(PushNotificationNotSupportedError);
    expect(s.sent).toEqual([]);
    // Without one, the send goes through.
    await s.handler.sendMessage(params, s.context({ message, configuration: { returnImmediately: true } }));
    expect(s.sent).toHaveLength(1);
    await expect(s.handler.getTaskPushNotificationConfig({ tenant: '', taskId: s.attempt.record_id, id: 'x' }, s.context())).rejects.toBeInstanceOf(PushNotificationNotSupportedError);
  });
});
