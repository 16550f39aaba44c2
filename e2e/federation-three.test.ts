/**
 * Three organisations, three stores, three sets of keys (issue #16):
 * A → B → C → agent. C pins only B's keys; B vouches for A's heads in the
 * statements it signs for C. Attenuation at every hop; a revocation at A
 * reaches C through B.
 */
import { TaskState, type Task } from '@a2a-js/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partsText } from './agents/card.ts';
import { sentChain } from './agents/testlog.ts';
import { expectBatonCode } from './gateway/errors.ts';
import { send } from './federation-suite.ts';
import { startFederation, type Federation } from './gateway/federation.ts';
import { streamActingAtWorking } from './gateway/mid-stream.ts';
import { schemaRefFor } from '../src/records/schema-ref.ts';
import { baton as batonCli } from '../test/cli/run.ts';

type Link = { record_id: string; body: { lineage: { depth: number }; limits: { not_after: string }; budget_ceilings: Array<{ name: string; ceiling: string }>; delegatee_agent_ref: { actor_ref: { object_id: string } } } };

describe('three organisations on three stores: A → B → C → agent', () => {
  let fed: Federation;
  beforeAll(async () => {
    fed = await startFederation({ hops: 3 });
  }, 240_000);
  afterAll(async () => fed?.close());

  const chainAtAgent = async (): Promise<Link[]> => {
    const log = await fed.agent.log();
    const sent = [...log.requests].reverse().find((r) => r.method === 'SendStreamingMessage' || r.method === 'SendMessage')!;
    return sentChain<Link>(sent)!;
  };

  it('delegates through three gateways, attenuating at each hop; C binds A\'s heads as vouched for by B', async () => {
    const client = await fed.client();
    const task = (await client.sendMessage(send('three hops'))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(partsText(task.artifacts[0]!.parts)).toBe('spoh eerht');
    const chain = await chainAtAgent();
    expect(chain.map((c) => c.body.lineage.depth)).toEqual([0, 1, 2, 3]);
    expect(chain.map((c) => c.body.delegatee_agent_ref.actor_ref.object_id)).toEqual(['actor_baton_a', 'actor_baton_b', 'actor_baton_c', 'actor_xagent']);
    const horizons = chain.map((c) => Date.parse(c.body.limits.not_after));
    for (let i = 1; i < horizons.length; i++) expect(horizons[i]).toBeLessThanOrEqual(horizons[i - 1]!);
    const units = chain.map((c) => BigInt(c.body.budget_ceilings.find((b) => b.name === 'invocations')!.ceiling));
    for (let i = 1; i < units.length; i++) expect(units[i]! <= units[i - 1]!).toBe(true);

    const c = await fed.orgs[2]!.store();
    try {
      const [decision] = (await c.listCurrent(schemaRefFor('permission_decision'), { limit: 1 })).records;
      const remote = (decision!.body as { remote_fence_set: Array<{ upstream: string; scope: { space_id: string; scope_kind: string; scope_id: string } }> }).remote_fence_set;
      expect(new Set(remote.map((e) => e.upstream))).toEqual(new Set(['actor_baton_b']));
      const scopes = remote.map((e) => `${e.scope.scope_kind}:${e.scope.scope_id}`);
      expect(scopes).toEqual(expect.arrayContaining([`delegation:${chain[0]!.record_id}`, `delegation:${chain[1]!.record_id}`, `delegation:${chain[2]!.record_id}`, 'space:space_a']));
      // C's ledger holds B's leaf as its root, and nothing of A's or B's budgets above it.
      expect(await c.ledger.node(chain[0]!.record_id)).toBeUndefined();
      expect(await c.ledger.node(chain[1]!.record_id)).toBeUndefined();
      expect((await c.ledger.node(chain[2]!.record_id))?.parent_id ?? null).toBeNull();
    } finally {
      await c.close();
    }
 
    // Each upstream settled its hop by the receipt its downstream signed: A by B's, B by C's.
    const hop = async (i: number, taskId: string): Promise<{ consumption?: { status: string; downstream: string }; remoteTask: string }> => {
      const s = await fed.orgs[i]!.store();
      try {
        const attempt = (await s.getRecord(taskId))!.body as { receipt_ref: { object_id: string }; remote: { task_id: string } };
        const receipt = (await s.getRecord(attempt.receipt_ref.object_id))!.body as { consumption?: { status: string; downstream: string } };
        return { ...receipt, remoteTask: attempt.remote.task_id };
      } finally {
        await s.close();
      }
    };
    const atA = await hop(0, task.id);
    expect(atA.consumption).toMatchObject({ status: 'agreed', downstream: 'actor_baton_b' });
    const atB = await hop(1, atA.remoteTask);
    expect(atB.consumption).toMatchObject({ status: 'agreed', downstream: 'actor_baton_c' });
  });

  it('a follow-up turn at A on an INPUT_REQUIRED task crosses both boundaries: C fences A\'s contracts through B\'s statement, never as revoked', async () => {
    const client = await fed.client();
    const first = (await client.sendMessage(send('ask me across three'))) as Task;
    expect(first.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const done = (await client.sendMessage(send('second turn', { taskId: first.id, contextId: first.contextId }))) as Task;
    expect(done.id).toBe(first.id);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(partsText(done.artifacts[0]!.parts)).toBe('nrut dnoces');
    const chain = await chainAtAgent();
    const c = await fed.orgs[2]!.store();
    try {
      // Every turn at C was admitted and verified under the same imported leaf.
      const tree = (await c.ledger.tree(chain[2]!.record_id))!;
      expect(tree.children).toHaveLength(1);
      expect(tree.balances.find((b) => b.dimension === 'invocations')).toMatchObject({ reserved: '0' });
    } finally {
      await c.close();
    }
  }, 90_000);

  it('revoking A\'s root while C\'s agent works: the notice travels A → B → C, the agent\'s task is cancelled, nobody reports success', async () => {
    const client = await fed.client();
    const run = await streamActingAtWorking(client, send('slow across three'), async (root) => {
      const out = await batonCli(['control', 'revoke', root, '--reason', 'e2e: org A revokes'], { BATON_CONFIG: fed.orgs[0]!.config, BATON_LOG_LEVEL: 'silent' });
      expect(out.code).toBe(0);
    });
    expect(run.acted).toBe(true);
    expect(run.finalState).not.toBe(TaskState.TASK_STATE_COMPLETED);
    expect((await fed.agent.log()).counts.CancelTask ?? 0).toBeGreaterThanOrEqual(1);
    const chain = await chainAtAgent();
    const c = await fed.orgs[2]!.store();
    try {
      expect((await c.control.head({ space_id: 'space_a', scope_kind: 'delegation', scope_id: chain[2]!.record_id }))?.state).toBe('tripped');
    } finally {
      await c.close();
    }
  }, 90_000);
});

describe('three organisations, A\'s preset without delegationDepth (the default, 1 hop below A)', () => {
  let fed: Federation;
  beforeAll(async () => {
    fed = await startFederation({ hops: 3, presetA: { delegationDepth: undefined } });
  }, 240_000);
  afterAll(async () => fed?.close());

  it('B refuses to mint for C, and A\'s caller is told why: deny, wider than its parent on subdelegation', async () => {
    const client = await fed.client();
    const err = await expectBatonCode(client.sendMessage(send('too deep')), 'deny');
    const info = ((err as { data?: unknown }).data as Array<{ domain?: string; metadata?: Record<string, string> }>).find((d) => d.domain === 'baton')!;
    expect(info.metadata).toMatchObject({ baton: 'deny', widerOn: 'subdelegation' });
    expect(err.message).toMatch(/wider_on subdelegation/);
    expect((await fed.agent.log()).counts.SendMessage ?? 0).toBe(0);
  });
});

