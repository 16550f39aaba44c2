/**
 * The request path as one durable, bounded attempt state machine — one
 * regression per failure an outside tester reproduced against running
 * processes, each driven through real Baton gateway processes (two nodes on
 * one store) and real SDK agents. Run on SQLite and on PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schemaRefFor } from '../src/records/schema-ref.ts';
import { parseSse } from '../src/gateway/sse.ts';
import type { Store } from '../src/store/port.ts';
import type { AttemptBody } from '../src/attempts/record.ts';
import { until } from '../test/helpers/until.ts';
import { baton as batonCli } from '../test/cli/run.ts';
import { API_KEY, BATON_MAIN, startWorld, type World } from './gateway/world.ts';
import { spawnReady, type ReadyProcess } from './harness/process.ts';
import { assertNoDownstreamLeaks } from './gateway/leaks.ts';

const TINY_KEY = 'e2e-path-tiny-key-not-a-secret';
const OUTCOME = 'urn:baton:outcome:v2';

type RpcAnswer = { result?: { task?: Task; message?: unknown }; error?: { code: number; message: string; data?: unknown } };
type Task = { id: string; contextId: string; status: { state: string; message?: unknown }; artifacts?: unknown[]; history?: unknown[]; metadata: Record<string, { outcome: string | null; verified: boolean; rootDelegationId: string }> };

export interface PathSetup {
  /** The store config both gateway nodes run with; undefined for the world's own SQLite file. */
  store?: Record<string, unknown>;
  /** Opens a view of that store beside the running gateways. */
  open(world: World): Promise<Store>;
}

export function requestPathSuite(name: string, setup: () => Promise<PathSetup>): void {
  describe(`${name}: the request path as one durable attempt state machine`, () => {
    let world: World;
    let second: ReadyProcess<{ url: string }>;
    let open: (w: World) => Promise<Store>;
    const nodes = () => [world.url, second.ready.url];
    const env = () => ({ BATON_CONFIG: world.configFile, BATON_LOG_LEVEL: 'silent' });

    beforeAll(async () => {
      const s = await setup();
      open = s.open;
      world = await startWorld({
        agents: {
          honest: { behaviour: 'honest', stepMs: 20 },
          refuser: { behaviour: 'refuse-sends' },
          asker: { behaviour: 'honest', stepMs: 20 },
          victim: { behaviour: 'honest', stepMs: 20 },
          plodder: { behaviour: 'honest', stepMs: 400 },
        },
        presets: [{ id: 'standard', maxInvocations: 50 }, { id: 'tiny', maxActiveRoots: 2, maxPerMinute: 1000 }],
        callers: { intern: [TINY_KEY, 'tiny'] },
        remote: { headersTimeoutMs: 10_000, bodyTimeoutMs: 20_000 },
        // One public URL for both nodes: they are one gateway (its card, its agent stream).
        config: { publicUrl: 'http://baton.test', revocationSweepMs: 100, follow: { tickMs: 100, leaseMs: 2_000 }, ...(s.store ? { store: s.store } : {}) },
      });
      second = await spawnReady<{ url: string }>(BATON_MAIN, [world.configFile]);
    }, 90_000);
    afterAll(async () => {
      await second?.stop();
      await world?.close();
    });

    async function rpc(delegatee: string, method: string, params: unknown, opts: { key?: string; node?: string } = {}): Promise<RpcAnswer> {
      // Recorded: the leak check at the end reads every body a caller got.
      const res = await world.fetch(`${opts.node ?? world.url}/agents/${delegatee}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': opts.key ?? API_KEY },
        body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params }),
      });
      return (await res.json()) as RpcAnswer;
    }
    const msg = (text: string, extra: Record<string, unknown> = {}) => ({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra } });
    const sends = async (agent: string) => {
      const c = (await world.agents[agent]!.log()).counts;
      return (c.SendMessage ?? 0) + (c.SendStreamingMessage ?? 0);
    };
    async function withStore<T>(fn: (s: Store) => Promise<T>): Promise<T> {
      const s = await open(world);
      try {
        return await fn(s);
      } finally {
        await s.close();
      }
    }
    const attempt = (id: string) => withStore(async (s) => (await s.getRecord(id))?.body as AttemptBody | undefined);
    /** Every attempt of one delegatee, newest first (a bounded scan). */
    const attemptsOf = (delegatee: string) =>
      withStore(async (s) => {
        const out: AttemptBody[] = [];
        let cursor: string | undefined;
        for (let i = 0; i < 50; i++) {
          const page = await s.listCurrent(schemaRefFor('execution_attempt'), { limit: 200, ...(cursor ? { cursor } : {}) });
          out.push(...page.records.map((r) => r.body as AttemptBody).filter((b) => b.delegatee_id === delegatee));
          if (!page.cursor) break;
          cursor = page.cursor;
        }
        return out;
      });
    const reservationsOfRoot = (root: string) =>
      withStore(async (s) => {
        const tree = await s.ledger.tree(root);
        const held = (await s.ledger.unresolved(10_000)).filter((r) => r.root_id === root);
        return { tree, held };
      });

    it('#1 a send refused at admission holds no preset capacity: after a breaker trip and reset the preset still admits its full allowance', async () => {
      const first = await rpc('victim', 'SendMessage', msg('who are you'));
      const card = (await attempt(first.result!.task!.id))!.remote.card_ref.object_id;
      const trip = await batonCli(['breaker', 'trip', `agent:${card}`, '--trigger', 'operator', '--reason', 'e2e: refuse everything for a while'], env());
      expect(trip.code, trip.stderr).toBe(0);
      for (let i = 0; i < 3; i++) {
        const refused = await rpc('victim', 'SendMessage', msg(`refused ${i}`), { key: TINY_KEY, node: nodes()[i % 2] });
        expect(refused.error?.code).toBe(-32053); // context_invalidated: the agent stream is tripped
      }
      const reset = await batonCli(['breaker', 'reset', `agent:${card}`, '--reason', 'e2e: checked'], env());
      expect(reset.code, reset.stderr).toBe(0);
      // Both of the preset's two root slots are free: two slow tasks are admitted at once.
      const slow = await Promise.all([0, 1].map((i) => rpc('victim', 'SendMessage', { ...msg(`slow work ${i}`), configuration: { returnImmediately: true } }, { key: TINY_KEY, node: nodes()[i] })));
      expect(slow.map((r) => r.error)).toEqual([undefined, undefined]);
      const third = await rpc('victim', 'SendMessage', msg('one too many'), { key: TINY_KEY });
      expect(third.error?.code).toBe(-32055); // limit_exceeded: the preset's active roots
      for (const r of slow) expect((await rpc('victim', 'CancelTask', { id: r.result!.task!.id }, { key: TINY_KEY })).error).toBeUndefined();
    }, 60_000);

    it('#3 a malformed SendMessage is invalid_request with nothing forwarded and nothing written', async () => {
      const before = { sent: await sends('honest'), attempts: (await attemptsOf('honest')).length };
      const bad = [
        { message: { role: 'ROLE_USER', parts: [{ text: 'no message id' }] } },
        { message: { messageId: randomUUID(), role: 'ROLE_ROBOT', parts: [{ text: 'bad role' }] } },
        { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [] } },
        { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ shape: 'unknown' }] } },
        { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'two contents', url: 'https://example.test/x' }] } },
      ];
      for (const params of bad) {
        const r = await rpc('honest', 'SendMessage', params);
        expect(r.error?.code, JSON.stringify(params)).toBe(-32602);
      }
      expect(await sends('honest')).toBe(before.sent);
      expect((await attemptsOf('honest')).length).toBe(before.attempts);
    });

    it('#4 a delegatee\'s definite refusal releases the reservation with its reason, and the caller gets the remote\'s code', async () => {
      // The tiny preset has two root slots: five refusals in a row would have locked it when refusals were held.
      for (let i = 0; i < 5; i++) {
        const r = await rpc('refuser', 'SendMessage', msg(`please ${i}`), { key: TINY_KEY, node: nodes()[i % 2] });
        expect(r.error?.code).toBe(-32004);
        // Relayed by its meaning, never its text (the delegatee's words may name its own ids).
        expect(r.error?.message).toBe('the delegatee refused the request (A2A error -32004)');
      }
      const refused = await attemptsOf('refuser');
      expect(refused.length).toBeGreaterThanOrEqual(5);
      for (const a of refused) {
        expect(a).toMatchObject({ state: 'closed', outcome: 'failed' });
        expect(a.refused?.reason).toMatch(/-32004/);
        expect(await withStore(async (s) => (await s.ledger.reservation(a.reservation_id))?.status)).toBe('released');
      }
      const ok = await rpc('honest', 'SendMessage', msg('still room'), { key: TINY_KEY });
      expect(ok.result?.task?.status.state).toBe('TASK_STATE_COMPLETED');
    });

    it('#5 a running blocking SendMessage is cancelled at the agent by a revocation, and the caller is answered', async () => {
      const before = (await world.agents.honest!.log()).counts.CancelTask ?? 0;
      const m = msg('slow and blocking');
      const blocking = rpc('honest', 'SendMessage', m);
      const running = await until(async () => (await attemptsOf('honest')).find((a) => a.remote.message_id === m.message.messageId), 400, 25, 'the blocking task to be admitted');
      // Revoke while the agent works on it (it has the send; the task is slow).
      await until(async () => (await sends('honest')) > 0 && (await attempt(running!.attempt_id))?.state !== 'closed', 400, 25, 'the agent working');
      const out = await batonCli(['control', 'revoke', running!.root_ref.object_id, '--reason', 'e2e: revoke a blocking call'], env());
      expect(out.code, out.stderr).toBe(0);
      const answer = await blocking;
      expect(answer.result?.task?.id).toBe(running!.attempt_id);
      expect(answer.result?.task?.status.state).not.toBe('TASK_STATE_COMPLETED');
      expect((await world.agents.honest!.log()).counts.CancelTask ?? 0).toBeGreaterThan(before);
      const closed = await until(async () => ((await attempt(running!.attempt_id))?.state === 'closed' ? attempt(running!.attempt_id) : undefined), 400, 25, 'the verdict');
      expect(closed!.cancel_cause?.cause).toBe('revocation');
      expect(closed!.outcome).not.toBe('succeeded');
    }, 60_000);

    it('#6 returnImmediately tasks are followed to their verdict without anyone asking, and give their root back', async () => {
      // Six tasks through a two-root preset: each must be verified and settled by the follower on its own.
      for (let i = 0; i < 6; i++) {
        const r = await rpc('honest', 'SendMessage', { ...msg(`fire and forget ${i}`), configuration: { returnImmediately: true } }, { key: TINY_KEY, node: nodes()[i % 2] });
        expect(r.error).toBeUndefined();
        const id = r.result!.task!.id;
        const done = await until(async () => ((await attempt(id))?.state === 'closed' ? attempt(id) : undefined), 400, 25, 'the follower\'s verdict');
        expect(done).toMatchObject({ outcome: 'succeeded' });
      }
    }, 60_000);

    it('#7 GetTask answers from Baton\'s own view: no remote ids, and an agent that is down is no error', async () => {
      const asked = (await rpc('asker', 'SendMessage', msg('ask me for an id'))).result!.task!;
      expect(asked.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      const stored = (await attempt(asked.id))!;
      const remoteTask = stored.remote.task_id!;
      expect(remoteTask).toBeTruthy();
      const read = await rpc('asker', 'GetTask', { id: asked.id });
      expect(JSON.stringify(read)).not.toContain(remoteTask);
      expect(JSON.stringify(asked)).not.toContain(remoteTask);
      expect(read.result?.task?.status.state ?? (read.result as unknown as Task).status.state).toBe('TASK_STATE_INPUT_REQUIRED');

      const done = (await rpc('victim', 'SendMessage', msg('remember me'))).result!.task!;
      expect(done.status.state).toBe('TASK_STATE_COMPLETED');
      await world.agents.victim!.stop();
      for (const node of nodes()) {
        const again = await rpc('victim', 'GetTask', { id: done.id }, { node });
        expect(again.error).toBeUndefined();
        const task = (again.result as unknown as Task).status ? (again.result as unknown as Task) : again.result!.task!;
        expect(task.status.state).toBe('TASK_STATE_COMPLETED');
        expect(task.metadata[OUTCOME]!.verified).toBe(true);
      }
    });

    it('#8 concurrent turns on one task, on two nodes, each settle their own reservation: none is refused after its effect, none is left held', async () => {
      const asked = (await rpc('asker', 'SendMessage', msg('ask me twice'))).result!.task!;
      expect(asked.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      const root = asked.metadata[OUTCOME]!.rootDelegationId;
      const turns = await Promise.all([0, 1, 2, 3].map((i) => rpc('asker', 'SendMessage', msg(`answer ${i}`, { taskId: asked.id }), { node: nodes()[i % 2] })));
      for (const t of turns) expect([-32602, -32600]).not.toContain(t.error?.code); // never invalid_request after dispatch
      const quiet = await until(async () => {
        const r = await reservationsOfRoot(root);
        return r.held.length === 0 ? r : undefined;
      }, 800, 25, 'every turn\'s verdict');
      const invocations = quiet!.tree!.balances.find((b) => b.dimension === 'invocations')!;
      expect(invocations.reserved).toBe('0');
      // Every turn that reached the agent was admitted, and its reservation resolved (consumed or released).
      expect(Number(invocations.consumed)).toBeGreaterThanOrEqual(2);
    }, 60_000);

    it('SubscribeToTask on one node follows an interrupted task through a follow-up admitted on the other, to its verified COMPLETED (issue #25 item 5)', async () => {
      const asked = (await rpc('asker', 'SendMessage', msg('ask me across nodes'))).result!.task!;
      const res = await world.fetch(`${nodes()[0]}/agents/asker/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY, accept: 'text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: asked.id } }),
      });
      const events = parseSse(res.body as unknown as AsyncIterable<Uint8Array>);
      const shown = (data: string) => {
        const r = (JSON.parse(data) as { result: { task?: Task; statusUpdate?: Task & { taskId: string } } }).result;
        return { id: r.task?.id ?? r.statusUpdate?.taskId, state: (r.task ?? r.statusUpdate)?.status.state, outcome: (r.task ?? r.statusUpdate)?.metadata?.[OUTCOME] };
      };
      expect(shown((await events.next()).value!.data)).toMatchObject({ id: asked.id, state: 'TASK_STATE_INPUT_REQUIRED' });
      const done = (await rpc('asker', 'SendMessage', msg('answer on the other node', { taskId: asked.id }), { node: nodes()[1] })).result!.task!;
      expect(done.status.state).toBe('TASK_STATE_COMPLETED');
      const rest = [];
      for await (const ev of events) rest.push(shown(ev.data));
      expect(rest[rest.length - 1]).toMatchObject({ id: asked.id, state: 'TASK_STATE_COMPLETED', outcome: { outcome: 'succeeded', verified: true } });
    }, 60_000);

    it('a streaming caller that leaves mid-stream leaves no effect behind: the turn is still followed to its verdict', async () => {
      const ac = new AbortController();
      const res = await fetch(`${world.url}/agents/plodder/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY, accept: 'text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendStreamingMessage', params: msg('stream, then hang up') }),
        signal: ac.signal,
      });
      const reader = res.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      const id = /"id":"(att_[a-z0-9]+)"/.exec(first)![1]!;
      ac.abort(); // the caller leaves after the first event
      const done = await until(async () => ((await attempt(id))?.state === 'closed' ? attempt(id) : undefined), 600, 25, 'the verdict after the caller left');
      expect(done).toMatchObject({ outcome: 'succeeded' });
      expect(await withStore(async (s) => s.work.ofAttempt(id))).toEqual([]);
    }, 60_000);

    it('no body a caller received carries a downstream id or the contract chain', async () => {
      await assertNoDownstreamLeaks({ bodies: world.bodies, pending: world.pending, store: () => open(world) });
    });

    it('a node killed while following an effect: another node takes the follow-up over when its lease lapses and commits the verdict', async () => {
      // Last in the file: it kills the second node.
      const before = await sends('plodder');
      const r = await rpc('plodder', 'SendMessage', { ...msg('follow me after a crash'), configuration: { returnImmediately: true } }, { node: second.ready.url });
      expect(r.error).toBeUndefined();
      const id = r.result!.task!.id;
      await second.kill9();
      const done = await until(async () => ((await attempt(id))?.state === 'closed' ? attempt(id) : undefined), 600, 25, 'the surviving node\'s verdict');
      expect(done).toMatchObject({ outcome: 'succeeded' });
      expect(await withStore(async (s) => (await s.ledger.reservation(done!.reservation_id))?.status)).toBe('settled');
      expect(await withStore(async (s) => s.work.ofAttempt(id))).toEqual([]);
      expect(await sends('plodder')).toBe(before + 1); // followed, never sent again
    }, 60_000);
  });
}
