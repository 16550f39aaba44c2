import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertNoDownstreamLeaks } from './gateway/leaks.ts';
import { expectBatonCode, expectRpcInvalid } from './gateway/errors.ts';
import { partsText, textPart } from './agents/card.ts';
import { sentChain } from './agents/testlog.ts';
import { streamActingAtWorking } from './gateway/mid-stream.ts';
import { computeContentDigest } from '../src/records/envelope.ts';
import { schemaRefFor } from '../src/records/schema-ref.ts';
import { A_AT_B_KEY, startTwoOrgs, type TwoOrgs } from './gateway/two-orgs.ts';
import { baton as batonCli } from '../test/cli/run.ts';

const CONTRACT_EXT = 'urn:rw-agent-delegation:0.1.1:delegation-contract';
const OUTCOME = 'urn:baton:outcome:v2';
const send = (text: string) => ({
  tenant: '',
  message: { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] },
  configuration: undefined,
  metadata: undefined,
});

/** The two-organisation suite, run on SQLite (shared file) and PostgreSQL (shared database). */
export function twoOrgSuite(name: string, setup: () => Promise<{ pgUrl?: string }>): void {
  let orgs: TwoOrgs;
  beforeAll(async () => {
    orgs = await startTwoOrgs(await setup());
  }, 90_000);
  afterAll(async () => orgs?.close());

  describe(`${name}: two organisations: A → B → agent`, () => {
    it('attenuates at each hop, verifies at each hop, and both hops debit the one root budget', async () => {
      const client = await orgs.client();
      const task = (await client.sendMessage(send('across two orgs'))) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(partsText(task.artifacts[0]!.parts)).toBe('sgro owt ssorca');
      const meta = task.metadata?.[OUTCOME] as { outcome: string; rootDelegationId: string };
      expect(meta.outcome).toBe('succeeded');

      // The agent received a three-contract chain: A's root, A's child for B, B's child for it.
      const log = await orgs.agent.log();
      const sent = log.requests.find((r) => r.method === 'SendStreamingMessage' || r.method === 'SendMessage')!;
      const chain = sentChain<{ record_id: string; body: { lineage: { depth: number }; limits: { not_after: string }; delegatee_agent_ref: { actor_ref: { object_id: string } } } }>(sent)!;
      expect(chain.map((c) => c.body.lineage.depth)).toEqual([0, 1, 2]);
      expect(chain[0]!.record_id).toBe(meta.rootDelegationId);
      expect(chain.map((c) => c.body.delegatee_agent_ref.actor_ref.object_id)).toEqual(['actor_baton_a', 'actor_baton_b', 'actor_xagent']);
      const horizons = chain.map((c) => Date.parse(c.body.limits.not_after));
      expect(horizons[1]).toBeLessThanOrEqual(horizons[0]!);
      expect(horizons[2]).toBeLessThanOrEqual(horizons[1]!);

      const store = await orgs.store();
      try {
        const tree = (await store.ledger.tree(meta.rootDelegationId))!;
        const units = (n: typeof tree) => n.balances.find((b) => b.dimension === 'invocations')!;
        // A admitted one effect (root + A's child), B admitted one (root + A's child + B's child).
        expect(units(tree)).toMatchObject({ ceiling: '5', consumed: '2', reserved: '0' });
        expect(units(tree.children[0]!)).toMatchObject({ consumed: '2' });
        expect(units(tree.children[0]!.children[0]!)).toMatchObject({ consumed: '1' });
      } finally {
        await store.close();
      }
    });

    it("A's caller never sees B's task ids, the agent's, or the contract chain", async () => {
      const client = await orgs.client();
      const task = (await client.sendMessage(send('no ids from downstream'))) as Task;
      await client.getTask({ tenant: '', id: task.id, historyLength: 10 });
      // Both hops' attempts sit in the one ledger: B's task ids (att_… at B) and the agent's are all downstream of A's caller.
      await assertNoDownstreamLeaks(orgs);
    });
  });

  describe(`${name}: two organisations: what B accepts from A`, () => {
    it('refuses a tampered or foreign chain from the upstream, and stores nothing of it', async () => {
      await (await orgs.client()).sendMessage(send('a genuine chain to tamper with'));
      const log = await orgs.agent.log();
      const sent = log.requests.find((r) => r.method === 'SendStreamingMessage' || r.method === 'SendMessage')!;
      const chain = structuredClone(sentChain(sent)!.slice(0, 2));
      const store = await orgs.store();
      const count = async () => (await store.listCurrent('rw-agent-delegation/0.1.1#delegation_contract', { limit: 1000 })).records.length;
      const before = await count();
      const post = (c: unknown[]) =>
        fetch(`${orgs.b.ready.url}/agents/x/a2a/jsonrpc`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': A_AT_B_KEY },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'forged', role: 'ROLE_USER', parts: [{ text: 'x' }], metadata: { [CONTRACT_EXT]: { chain: c } } } } }),
        }).then((r) => r.json() as Promise<{ error?: unknown }>);
      // Widen the root's budget after signing: the digest no longer matches.
      const widened = structuredClone(chain);
      ((widened[0]!.body as { budget_ceilings: Array<{ ceiling: string }> }).budget_ceilings[0]!).ceiling = '1000000';
      expectRpcInvalid((await post(widened)).error, 'record content digest does not match its bytes');
      // A forged signature and nothing else: A's hop to B gets fresh ids (its digest recomputed), so it is new to B
      // and names B as delegatee under A's genuine root; only its signature, made over the old id, does not verify.
      const forged = structuredClone(chain);
      const hop = forged[1]! as Record<string, unknown> & { body: Record<string, unknown> };
      hop.record_id = 'dlg_forgedbyupstream';
      hop.body.delegation_id = 'dlg_forgedbyupstream';
      hop.revision_id = 'rev_forgedbyupstream';
      hop.content_digest = computeContentDigest(hop);
      expectRpcInvalid((await post(forged)).error, 'signature does not verify');
      expect(await store.getRecord('dlg_forgedbyupstream')).toBeUndefined();
      expect(await store.ledger.node('dlg_forgedbyupstream')).toBeUndefined();
      // A chain that stops at A's root names A, not B, as delegatee.
      expectRpcInvalid((await post(chain.slice(0, 1))).error, 'the presented chain does not delegate to this gateway');
      expect(await count()).toBe(before);
      await store.close();
      expect((await orgs.agent.log()).counts.SendMessage).toBe(log.counts.SendMessage);
    });
  });

  describe(`${name}: two organisations: revocation at A reaches B`, () => {
    it('revoking A\'s root while B\'s agent works cancels the agent\'s task; nobody reports success', async () => {
      const client = await orgs.client();
      const run = await streamActingAtWorking(client, send('slow across orgs'), async (root) => {
        const out = await batonCli(['control', 'revoke', root, '--reason', 'e2e: org A revokes'], { BATON_CONFIG: `${orgs.dir}/a.json`, BATON_LOG_LEVEL: 'silent' });
        expect(out.code).toBe(0);
      });
      expect(run.acted).toBe(true);
      expect(run.finalState).not.toBe(TaskState.TASK_STATE_COMPLETED);
      expect((await orgs.agent.log()).counts.CancelTask ?? 0).toBeGreaterThanOrEqual(1);
    }, 60_000);
  });


  describe(`${name}: two organisations: one shared root budget`, () => {
    let tight: TwoOrgs;
    beforeAll(async () => {
      tight = await startTwoOrgs({ ...(await setup()), presetA: { maxInvocations: 1 } });
    }, 90_000);
    afterAll(async () => tight?.close());

    it('a root allowing one invocation is exhausted by A\'s hop, so B refuses its own and nothing reaches the agent', async () => {
      const client = await tight.client();
      const refused = await expectBatonCode(client.sendMessage(send('too little budget')), 'limit_exceeded');
      expect(refused.message).toBe('the delegatee refused the request (LIMIT_EXCEEDED)'); // B's code relayed, never B's text
      const log = await tight.agent.log();
      expect(log.counts.SendMessage ?? 0).toBe(0);
    });

    it('the same exhaustion in the middle of a streamed delegation: A opened its stream, B\'s hop is refused, the caller sees the error', async () => {
      const client = await tight.client();
      const seen: string[] = [];
      const refused = await expectBatonCode(
        (async () => {
          for await (const ev of client.sendMessageStream(send('stream with too little budget'))) seen.push(ev.payload?.$case ?? '');
        })(),
        'limit_exceeded',
      );
      expect(refused.message).toBe('the delegatee refused the request (LIMIT_EXCEEDED)');
      expect(seen.filter((k) => k === 'artifactUpdate')).toEqual([]);
      expect((await tight.agent.log()).counts.SendStreamingMessage ?? 0).toBe(0);
      const store = await tight.store();
      try {
        // B's refusal is a downstream Baton's ADR-0014 code: definitely not executed, so A releases its own
        // reservation with the reason recorded instead of holding it as uncertain (the newest attempt is this one).
        const [newest] = (await store.listCurrent(schemaRefFor('execution_attempt'), { limit: 1 })).records;
        const attempt = newest!.body as { state: string; outcome?: string; reservation_id: string; refused?: { reason: string } };
        expect(attempt).toMatchObject({ state: 'closed', outcome: 'failed' });
        expect(attempt.refused?.reason).toMatch(/limit_exceeded/);
        expect((await store.ledger.reservation(attempt.reservation_id))?.status).toBe('released');
      } finally {
        await store.close();
      }
    });
  });
}
