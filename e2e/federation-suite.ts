/**
 * Two organisations with nothing shared but keys and URLs (issue #16): A and
 * B each on their own store, B fencing A's streams through A's signed
 * control-head statements. Run on SQLite and, mixed, with PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { partsText, textPart } from './agents/card.ts';
import { sentChain } from './agents/testlog.ts';
import { forwardKey, startFederation, type Federation } from './gateway/federation.ts';
import { schemaRefFor } from '../src/records/schema-ref.ts';
import type { Store } from '../src/store/port.ts';
import { baton as batonCli } from '../test/cli/run.ts';
import { pollUntil } from './harness/process.ts';
import { streamActingAtWorking } from './gateway/mid-stream.ts';
import { CompactSign, generateKeyPair } from 'jose';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadChain } from '../src/contracts/attestation-chain.ts';
import { Federation as BatonFederation } from '../src/federation/federation.ts';
import { signJws } from '../src/federation/jws.ts';
import { Keyring } from '../src/keys/keyring.ts';
import { systemClock } from '../src/records/time.ts';
import { withStore } from './harness/with-store.ts';

/** A notice claiming to be A's, signed by a key nobody pinned. */
async function forgeNotice(): Promise<string> {
  const { privateKey } = await generateKeyPair('ES256');
  const payload = { typ: 'baton.control_heads/v1', iss: 'actor_baton_a', aud: 'actor_baton_b', subject: 'dlg_forged', issued_at: new Date().toISOString(), max_staleness_ms: 0, heads: [] };
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload))).setProtectedHeader({ alg: 'ES256', kid: 'forged', typ: 'baton-control-notice+jws' }).sign(privateKey);
}

const OUTCOME = 'urn:baton:outcome:v2';
const CONTRACT_EXT = 'urn:rw-agent-delegation:0.1.1:delegation-contract';
export const send = (text: string, extra: { taskId?: string; contextId?: string } = {}) => ({
  tenant: '',
  message: { messageId: randomUUID(), contextId: extra.contextId ?? '', taskId: extra.taskId ?? '', role: Role.ROLE_USER, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] },
  configuration: undefined,
  metadata: undefined,
});
const outcomeOf = (t: Task) => t.metadata?.[OUTCOME] as { outcome: string | null; rootDelegationId: string };


/** Newest records of one type at one org. */
async function newest(open: () => Promise<Store>, type: Parameters<typeof schemaRefFor>[0], limit = 1): Promise<Array<Record<string, unknown>>> {
  return withStore(open, async (s) => (await s.listCurrent(schemaRefFor(type), { limit })).records.map((r) => r.body as Record<string, unknown>));
}

/** The contract chain B sent its agent on the newest call: A's root, A's child for B, B's child. */
async function chainAtAgent(fed: Federation): Promise<Array<{ record_id: string; body: { budget_ceilings: Array<{ name: string; ceiling: string }> } }>> {
  const log = await fed.agent.log();
  const sent = [...log.requests].reverse().find((r) => r.method === 'SendStreamingMessage' || r.method === 'SendMessage')!;
  return sentChain<never>(sent)!;
}

export function federationSuite(name: string, setup: () => Promise<{ pgUrls?: Record<number, string> }>): void {
  let fed: Federation;
  beforeAll(async () => {
    fed = await startFederation({ ...(await setup()), presetA: { maxInvocations: 8 } });
  }, 180_000);
  afterAll(async () => fed?.close());
  const [A, B] = [0, 1];
  const store = (i: number) => () => fed.orgs[i]!.store();

  describe(`${name}: separate stores: A → B → agent`, () => {
    it('first turn: B binds A\'s signed heads into its PermissionDecision, enforces A\'s leaf in its own ledger, and the ledgers agree', async () => {
      const client = await fed.client();
      const before = fed.proxies.b!.requests;
      const task = (await client.sendMessage(send('across two stores'))) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(partsText(task.artifacts[0]!.parts)).toBe('serots owt ssorca');
      expect(outcomeOf(task).outcome).toBe('succeeded');
      // One statement before transmission, one after read-back.
      expect(fed.proxies.b!.requests - before).toBe(2);

      const chain = await chainAtAgent(fed);
      const [aRoot, aLeaf] = chain;
      const [decision] = await newest(store(B), 'permission_decision');
      const remote = decision!.remote_fence_set as Array<{ upstream: string; scope: { space_id: string; scope_kind: string; scope_id: string }; state: string }>;
      expect(remote.every((e) => e.upstream === 'actor_baton_a' && e.state === 'active' && e.scope.space_id === 'space_a')).toBe(true);
      expect(remote.map((e) => `${e.scope.scope_kind}:${e.scope.scope_id}`)).toEqual(expect.arrayContaining([`delegation:${aRoot!.record_id}`, `delegation:${aLeaf!.record_id}`, 'space:space_a']));

      // B's ledger: A's leaf is its root, at the leaf's ceiling; A's root budget is A's alone.
      await withStore(store(B), async (s) => {
        expect(await s.ledger.node(aRoot!.record_id)).toBeUndefined();
        const tree = (await s.ledger.tree(aLeaf!.record_id))!;
        const units = tree.balances.find((b) => b.dimension === 'invocations')!;
        expect(units).toMatchObject({ ceiling: aLeaf!.body.budget_ceilings.find((c) => c.name === 'invocations')!.ceiling, consumed: '1', reserved: '0' });
      });
      await withStore(store(A), async (s) => {
        const tree = (await s.ledger.tree(aRoot!.record_id))!;
        expect(tree.children[0]!.node_id).toBe(aLeaf!.record_id);
        expect(tree.children[0]!.balances.find((b) => b.dimension === 'invocations')).toMatchObject({ consumed: '1', reserved: '0' });
      });
    });

    it('baton trees at B shows B\'s ledger, rooted at A\'s imported leaf, not "(no budget node)" (issue 25 item 11)', async () => {
      const client = await fed.client();
      const task = (await client.sendMessage(send('trees at the downstream'))) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const [aRoot, aLeaf, bChild] = await chainAtAgent(fed);
      const out = await batonCli(['trees', '--limit', '50'], { BATON_CONFIG: fed.orgs[B]!.config, BATON_LOG_LEVEL: 'silent' });
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout).not.toContain('(no budget node)');
      const header = `${aRoot!.record_id}  (upstream root; local ledger from the imported leaf)`;
      expect(out.stdout).toContain(header);
      const tree = out.stdout.slice(out.stdout.indexOf(header)).split('\n\n')[0]!.split('\n');
      expect(tree[1]).toMatch(new RegExp(`^${aLeaf!.record_id}  \\(depth 0, `));
      expect(tree.some((l) => l.includes(`└─ ${bChild!.record_id}  (depth 1, `))).toBe(true);
    });

    it('follow-up turns cross the boundary on the same tasks, each fenced afresh', async () => {
      const client = await fed.client();
      const first = (await client.sendMessage(send('ask me something'))) as Task;
      expect(first.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      const done = (await client.sendMessage(send('second turn', { taskId: first.id, contextId: first.contextId }))) as Task;
      expect(done.id).toBe(first.id);
      expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(partsText(done.artifacts[0]!.parts)).toBe('nrut dnoces');
      const [, aLeaf] = await chainAtAgent(fed);
      // Each turn: a statement before transmission; each verdict: one after read-back.
      expect(fed.proxies.b!.subjects.filter((s) => s === aLeaf!.record_id).length).toBeGreaterThanOrEqual(3);
      await withStore(store(B), async (s) => {
        expect((await s.ledger.tree(aLeaf!.record_id))!.balances.find((b) => b.dimension === 'invocations')).toMatchObject({ consumed: '2', reserved: '0' });
      });
    });

    it('idempotent import: A\'s retries of the same chain, even concurrent, reuse B\'s child and ledger nodes', async () => {
      const client = await fed.client();
      await client.sendMessage(send('to be retried'));
      const chain = (await chainAtAgent(fed)).slice(0, 2);
      const retry = () =>
        fetch(`${fed.orgs[B]!.url}/agents/x/a2a/jsonrpc`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': forwardKey('a', 'b') },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'retried' }], metadata: { [CONTRACT_EXT]: { chain } } } } }),
        }).then((r) => r.json() as Promise<{ result?: unknown; error?: unknown }>);
      const answers = await Promise.all([retry(), retry()]);
      expect(answers.map((a) => a.error)).toEqual([undefined, undefined]);
      await withStore(store(B), async (s) => {
        const tree = (await s.ledger.tree(chain[1]!.record_id))!;
        expect(tree.children).toHaveLength(1);
        expect(tree.balances.find((b) => b.dimension === 'invocations')).toMatchObject({ consumed: '3' });
      });
    });

    it('streams across the boundary', async () => {
      const client = await fed.client();
      const kinds: string[] = [];
      let final: Task | undefined;
      for await (const ev of client.sendMessageStream(send('stream across stores'))) {
        kinds.push(ev.payload?.$case ?? '');
        if (ev.payload?.$case === 'task') final = ev.payload.value;
      }
      expect(kinds[0]).toBe('task');
      expect(kinds).toContain('statusUpdate');
      const id = final!.id;
      const read = await client.getTask({ tenant: '', id, historyLength: 0 });
      expect(read.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(partsText(read.artifacts[0]!.parts)).toBe('serots ssorca maerts');
      expect(outcomeOf(read).outcome).toBe('succeeded');
    });
  });

  describe(`${name}: separate stores: B fails closed on A's statements`, () => {
    afterEach(() => {
      fed.proxies.b!.plan = undefined;
    });
    /** Every statement about a delegation that did not exist before this test comes back as `mode`. */
    const failNew = (mode: 'down' | 'forge' | 'tamper' | 'replay') => {
      const known = new Set(fed.proxies.b!.subjects);
      fed.proxies.b!.plan = (_n, subject) => (known.has(subject) ? undefined : mode);
    };
    const refusedWith = async (code: string) => {
      const client = await fed.client();
      const calls = (await fed.agent.log()).requests.length;
      await expect(client.sendMessage(send('must not reach the agent'))).rejects.toThrow(new RegExp(`the delegatee refused the request \\(${code}\\)`));
      expect((await fed.agent.log()).requests.length).toBe(calls);
    };

    it('A unreachable: unavailable, nothing forwarded', async () => {
      failNew('down');
      await refusedWith('UNAVAILABLE');
    });

    it('a statement signed by a key B did not pin for A: context_invalidated', async () => {
      failNew('forge');
      await refusedWith('CONTEXT_INVALIDATED');
    });

    it('a statement altered after signing: context_invalidated', async () => {
      failNew('tamper');
      await refusedWith('CONTEXT_INVALIDATED');
    });

    it('a genuine statement about another delegation, replayed: context_invalidated', async () => {
      fed.proxies.b!.replay = fed.proxies.b!.seen[0];
      failNew('replay');
      await refusedWith('CONTEXT_INVALIDATED');
    });

    it('concurrent first imports of a new upstream leaf: both succeed on one child at B (the loser reuses the winner\'s)', async () => {
      // A's first forward under a fresh chain is refused before B stores anything (A unreachable for B): B has never imported it.
      failNew('down');
      await refusedWith('UNAVAILABLE');
      fed.proxies.b!.plan = undefined;
      const [refused] = await newest(store(A), 'execution_attempt');
      const chain = await withStore(store(A), async (s) => loadChain(s, refused!.delegation_ref as never)) as Array<{ record_id: string }>;
      expect(chain).toHaveLength(2);
      await withStore(store(B), async (s) => expect(await s.ledger.tree(chain[1]!.record_id)).toBeUndefined());
      const first = () =>
        fetch(`${fed.orgs[B]!.url}/agents/x/a2a/jsonrpc`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': forwardKey('a', 'b') },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'first import' }], metadata: { [CONTRACT_EXT]: { chain } } } } }),
        }).then((r) => r.json() as Promise<{ result?: unknown; error?: unknown }>);
      const answers = await Promise.all([first(), first(), first()]);
      expect(answers.map((a) => a.error)).toEqual([undefined, undefined, undefined]);
      await withStore(store(B), async (s) => {
        const tree = (await s.ledger.tree(chain[1]!.record_id))!;
        expect(tree.children).toHaveLength(1);
        expect(tree.balances.find((b) => b.dimension === 'invocations')).toMatchObject({ consumed: '3', reserved: '0' });
      });
    }, 60_000);

    it('A revokes its delegation to B between A\'s admission and B\'s fetch: B sees the revoked head and refuses', async () => {
      let arrived!: () => void;
      const atB = new Promise<void>((r) => (arrived = r));
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      fed.proxies.b!.gate = async () => {
        fed.proxies.b!.gate = undefined;
        arrived();
        await released;
      };
      const client = await fed.client();
      const calls = (await fed.agent.log()).requests.length;
      const sending = client.sendMessage(send('revoked in flight'));
      // B's refusal relayed, or A's own fence check noticing its revocation first: either way context_invalidated.
      const outcome = expect(sending).rejects.toThrow(/the delegatee refused the request \(CONTEXT_INVALIDATED\)|control fence is stale/);
      await atB;
      const subject = fed.proxies.b!.subjects.at(-1)!;
      const out = await batonCli(['control', 'revoke', subject, '--reason', 'e2e: A revokes its delegation to B'], { BATON_CONFIG: fed.orgs[A]!.config, BATON_LOG_LEVEL: 'silent' });
      expect(out.code).toBe(0);
      release();
      await outcome;
      expect((await fed.agent.log()).requests.length).toBe(calls);
    }, 60_000);

    it('A down during B\'s post-effect recheck: the effect projects unknown at B, never succeeded', async () => {
      const known = new Set(fed.proxies.b!.subjects);
      fed.proxies.b!.plan = (n, subject) => (!known.has(subject) && n >= 2 ? 'down' : undefined);
      const client = await fed.client();
      const params = send('recheck fails');
      const task = (await client.sendMessage({ ...params, configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true } } as never)) as Task;
      // B presents an unknown outcome as still WORKING, so A keeps holding its own reservation: read B's verdict at B.
      // B's attempt under this task's delegation (the one new subject), once B has given its verdict.
      const subject = await pollUntil(async () => fed.proxies.b!.subjects.find((x) => !known.has(x)), (x) => x !== undefined, { what: 'a statement request for the new task' });
      const child = await pollUntil(async () => withStore(store(B), async (st) => (await st.ledger.tree(subject!))?.children[0]?.node_id), (x) => x !== undefined, { what: "B's child" });
      const attempt = await pollUntil(
        async () => (await newest(store(B), 'execution_attempt', 10)).find((a) => (a.delegation_ref as { object_id: string }).object_id === child),
        (a) => a?.state === 'closed',
        { what: "B's verdict" },
      );
      expect(attempt).toMatchObject({ state: 'closed', outcome: 'unknown' });
      expect(outcomeOf((await client.getTask({ tenant: '', id: task.id, historyLength: 0 })) as Task).outcome).not.toBe('succeeded');
      await withStore(store(B), async (s) => expect((await s.ledger.reservation(attempt!.reservation_id as string))?.status).toBe('unknown'));
    });
  });

  describe(`${name}: separate stores: signed consumption receipts`, () => {
    /** One task run A → B: A's attempt, A's reservation for it, B's task id, B's reservation, and B's GetTask as A reads it back. */
    const runOne = async (text: string) => {
      const client = await fed.client();
      const task = (await client.sendMessage(send(text))) as Task;
      expect(outcomeOf(task).outcome).toBe('succeeded');
      const a = await withStore(store(A), async (s) => {
        const attempt = (await s.getRecord(task.id))!.body as { reservation_id: string; receipt_ref: { object_id: string }; remote: { task_id: string } };
        return { attempt, reservation: (await s.ledger.reservation(attempt.reservation_id))!, receipt: (await s.getRecord(attempt.receipt_ref.object_id))!.body as { consumption?: Record<string, unknown> } };
      });
      const bTask = a.attempt.remote.task_id;
      const b = await withStore(store(B), async (s) => {
        const attempt = (await s.getRecord(bTask))!.body as { reservation_id: string; receipt_ref: unknown };
        return { attempt, reservation: (await s.ledger.reservation(attempt.reservation_id))! };
      });
      const res = await fetch(`${fed.orgs[B]!.url}/agents/x/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': forwardKey('a', 'b') },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: bTask } }),
      });
      const jws = ((await res.json()) as { result: { metadata: Record<string, { consumptionReceipt?: string }> } }).result.metadata[OUTCOME]!.consumptionReceipt;
      return { task, a, b, bTask, jws: jws! };
    };
    /** A's side of the rule, over A's own store: the code A's verdict settles by, fed a receipt as it would arrive. */
    const atA = async <T>(fn: (f: BatonFederation) => Promise<T>) =>
      withStore(store(A), (s) =>
        fn(new BatonFederation({ store: s, keyring: undefined as never, clock: systemClock, spaceId: 'space_a', self: 'actor_baton_a', upstreams: [], downstreams: [{ actorObjectId: 'actor_baton_b', contractJwksFile: join(fed.dir, 'b.jwks.json') }], actorRef: undefined as never, servedStalenessMs: 0, timeoutMs: 5_000 })),
      );
    const payloadOf = (jws: string) => JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown> & { consumed: Record<string, string> };

    it('B\'s verdict carries a receipt signed with B\'s contract keys; A verifies it, settles by it and records it: the ledgers agree per task', async () => {
      const { task, a, b, bTask, jws } = await runOne('settled by receipt');
      const header = JSON.parse(Buffer.from(jws.split('.')[0]!, 'base64url').toString('utf8')) as { kid: string; typ: string };
      const bJwks = JSON.parse(readFileSync(join(fed.dir, 'b.jwks.json'), 'utf8')) as { keys: Array<{ kid: string }> };
      expect(header.typ).toBe('baton-consumption-receipt+jws');
      expect(bJwks.keys.map((k) => k.kid)).toContain(header.kid);
      expect(payloadOf(jws)).toMatchObject({ iss: 'actor_baton_b', aud: 'actor_baton_a', task_id: bTask, receipt_ref: b.attempt.receipt_ref, consumed: b.reservation.amounts });
      // A recorded the receipt beside its verification receipt, and its settlement for the task is B's consumption per dimension.
      expect(a.receipt.consumption).toMatchObject({ status: 'agreed', settled: b.reservation.amounts, downstream: 'actor_baton_b', downstream_task_id: bTask, downstream_receipt_ref: b.attempt.receipt_ref });
      expect(a.reservation.status).toBe('settled');
      for (const [dim, amount] of Object.entries(b.reservation.amounts)) expect(BigInt(amount)).toBeLessThanOrEqual(BigInt(a.reservation.amounts[dim]!));
      // The receipt is A's business: A's caller never sees B's receipt, only A's own outcome metadata.
      const shown = await (await fed.client()).getTask({ tenant: '', id: task.id, historyLength: 0 });
      expect(JSON.stringify(shown.metadata)).not.toContain('consumptionReceipt');
    });

    it('a forged receipt (not signed by B\'s pinned keys) is not honoured: A settles its whole reservation, as without a receipt', async () => {
      const { a, bTask, jws } = await runOne('forged receipt');
      const { privateKey } = await generateKeyPair('ES256');
      const header = JSON.parse(Buffer.from(jws.split('.')[0]!, 'base64url').toString('utf8')) as { kid: string; typ: string };
      const cheaper = { ...payloadOf(jws), consumed: Object.fromEntries(Object.keys(payloadOf(jws).consumed).map((k) => [k, '0'])) };
      const forged = await new CompactSign(new TextEncoder().encode(JSON.stringify(cheaper))).setProtectedHeader({ alg: 'ES256', kid: header.kid, typ: header.typ }).sign(privateKey);
      const verdict = await atA((f) => f.settleFromReceipt(a.attempt as never, bTask, forged, a.reservation.amounts));
      expect(verdict).toMatchObject({ status: 'refused', settled: a.reservation.amounts });
      expect(verdict!.jws).toBeUndefined();
      // The genuine one, for the same task, is honoured; for another task it is not.
      expect(await atA((f) => f.settleFromReceipt(a.attempt as never, bTask, jws, a.reservation.amounts))).toMatchObject({ status: 'agreed' });
      expect(await atA((f) => f.settleFromReceipt(a.attempt as never, 'att_other', jws, a.reservation.amounts))).toMatchObject({ status: 'refused', settled: a.reservation.amounts });
      expect(await atA((f) => f.settleFromReceipt(a.attempt as never, bTask, undefined, a.reservation.amounts))).toMatchObject({ status: 'missing', settled: a.reservation.amounts });
    });

    it('a receipt signed by B claiming more than A reserved never settles above the reservation: capped and disputed', async () => {
      const { a, bTask, jws } = await runOne('greedy receipt');
      const bKeys = await Keyring.open(join(fed.orgs[B]!.dir, 'keys'));
      const greedy = await signJws(bKeys, 'baton-consumption-receipt+jws', { ...payloadOf(jws), consumed: Object.fromEntries(Object.entries(a.reservation.amounts).map(([k, v]) => [k, (BigInt(v) + 5n).toString()])) });
      const verdict = await atA((f) => f.settleFromReceipt(a.attempt as never, bTask, greedy, a.reservation.amounts));
      expect(verdict).toMatchObject({ status: 'capped', settled: a.reservation.amounts });
      for (const [dim, amount] of Object.entries(verdict!.settled)) expect(BigInt(amount)).toBeLessThanOrEqual(BigInt(a.reservation.amounts[dim]!));
    });
  });

  describe(`${name}: separate stores: revocation at A reaches B`, () => {
    it('revoking A\'s root while B\'s agent works: A tells B (signed notice + CancelTask), B cancels its agent\'s task and admits nothing more under that chain', async () => {
      const client = await fed.client();
      const run = await streamActingAtWorking(client, send('slow across stores'), async (root) => {
        const out = await batonCli(['control', 'revoke', root, '--reason', 'e2e: org A revokes'], { BATON_CONFIG: fed.orgs[A]!.config, BATON_LOG_LEVEL: 'silent' });
        expect(out.code).toBe(0);
      });
      expect(run.acted).toBe(true);
      expect(run.finalState).not.toBe(TaskState.TASK_STATE_COMPLETED);
      expect((await fed.agent.log()).counts.CancelTask ?? 0).toBeGreaterThanOrEqual(1);
      const chain = (await chainAtAgent(fed)).slice(0, 2);
      // B's own copy of A's delegation stream carries the notice: its local fence refuses at once.
      const head = await withStore(store(B), async (s) => s.control.head({ space_id: 'space_a', scope_kind: 'delegation', scope_id: chain[1]!.record_id }));
      expect(head?.state).toBe('tripped');
      const calls = (await fed.agent.log()).requests.length;
      const res = await fetch(`${fed.orgs[B]!.url}/agents/x/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': forwardKey('a', 'b') },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'after revocation' }], metadata: { [CONTRACT_EXT]: { chain } } } } }),
      });
      expect(JSON.stringify(((await res.json()) as { error?: unknown }).error)).toMatch(/CONTEXT_INVALIDATED/);
      expect((await fed.agent.log()).requests.length).toBe(calls);
    }, 60_000);

    it('a control notice B cannot verify under A\'s pinned keys changes nothing: context_invalidated', async () => {
      const forged = await forgeNotice();
      const res = await fetch(`${fed.orgs[B]!.url}/federation/v1/notify`, { method: 'POST', headers: { 'content-type': 'application/jose' }, body: forged });
      expect(res.status).toBe(409);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('context_invalidated');
    });
  });

  describe(`${name}: separate stores: budget at the imported leaf`, () => {
    let tight: Federation;
    beforeAll(async () => {
      tight = await startFederation({ ...(await setup()), presetA: { maxInvocations: 1 } });
    }, 180_000);
    afterAll(async () => tight?.close());

    it('B enforces A\'s leaf ceiling in its own ledger: the same chain presented again is refused with limit_exceeded', async () => {
      const client = await tight.client();
      const task = (await client.sendMessage(send('one invocation'))) as Task;
      expect(outcomeOf(task).outcome).toBe('succeeded');
      const chain = (await chainAtAgent(tight)).slice(0, 2);
      const calls = (await tight.agent.log()).requests.length;
      const res = await fetch(`${tight.orgs[B]!.url}/agents/x/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': forwardKey('a', 'b') },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'again' }], metadata: { [CONTRACT_EXT]: { chain } } } } }),
      });
      const body = (await res.json()) as { error?: { code: number; data?: unknown } };
      expect(JSON.stringify(body.error)).toMatch(/limit_exceeded|LIMIT_EXCEEDED/);
      expect((await tight.agent.log()).requests.length).toBe(calls);
      await withStore(() => tight.orgs[B]!.store(), async (s) => {
        expect((await s.ledger.tree(chain[1]!.record_id))!.balances.find((b) => b.dimension === 'invocations')).toMatchObject({ ceiling: '1', consumed: '1', reserved: '0' });
      });
    });
  });
}
