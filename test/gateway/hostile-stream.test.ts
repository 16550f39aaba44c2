/**
 * Hostile delegatees' streams on a real gateway with real SDK agents (issue
 * #25 items 15 and 19): a stream past the turn's bounds is closed and the
 * turn is `unknown` with the bound as its reason (the effect was sent, so its
 * reservation stays held); a stream that never ends releases its caller at
 * `follow.blockingWaitMs` with the WORKING task, and the durable follower
 * carries the turn to its verdict.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningAgent } from '../../e2e/agents/agent.ts';
import { startAgentsGateway, type AgentsGateway } from '../helpers/agents-gateway.ts';
import type { FloodStats } from '../../e2e/agents/flood.ts';
import { OUTCOME_METADATA } from '../../src/gateway/present.ts';
import type { Gateway } from '../../src/main.ts';
import { until } from '../helpers/until.ts';

const CALLER_KEY = 'hostile-stream-caller-key-not-a-secret';
const MAX_EVENTS = 40;
const MAX_BYTES = 256 * 1024;
let world: AgentsGateway;
let gw: Gateway;
let agents: Record<string, RunningAgent>;

beforeAll(async () => {
  // Small chunks: the event count is reached first; large ones: the byte bound is.
  world = await startAgentsGateway(
    'hostile-stream',
    CALLER_KEY,
    {
      many: { behaviour: 'artifact-flood', name: 'many', floodEventBytes: 1024 },
      large: { behaviour: 'artifact-flood', name: 'large', floodEventBytes: 32 * 1024 },
      endless: { behaviour: 'status-flood', name: 'endless', stepMs: 150, floodCount: 100_000 },
    },
    {
      remote: { maxTurnEvents: MAX_EVENTS, maxTurnBytes: MAX_BYTES },
      // A flood reaches its bound long before the wait; the endless agent's ~10 events in the wait stay under it.
      follow: { blockingWaitMs: 1_500, tickMs: 50 },
    },
  );
  ({ gw, agents } = world);
}, 60_000);
afterAll(async () => world?.close());

const headers = { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': CALLER_KEY };
const message = (text: string) => ({ messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] });
const rpc = (delegatee: string, method: string, params: unknown) =>
  fetch(`${gw.url}/agents/${delegatee}/a2a/jsonrpc`, { method: 'POST', headers: { ...headers, ...(method === 'SendStreamingMessage' ? { accept: 'text/event-stream' } : {}) }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });

type Task = { id: string; status: { state: string }; metadata: Record<string, { outcome: string | null; receipt: { objectId: string; revisionId: string } | null }> };
const getTask = async (delegatee: string, id: string): Promise<Task> => ((await (await rpc(delegatee, 'GetTask', { id })).json()) as { result: Task }).result;
const flood = async (id: string): Promise<FloodStats> => (await (await fetch(`${agents[id]!.url}/_test/flood`)).json()) as FloodStats;
/** The data of each SSE event of a whole stream. */
const events = (body: string) => body.split(/\n\n/).filter((e) => e.startsWith('data:')).map((e) => (JSON.parse(e.slice(5)) as { result: Record<string, unknown> }).result);

/** The turn's verdict as recorded: the receipt's outcome and reasons, and the state of the turn's reservation. */
async function verdictOf(delegatee: string, attemptId: string) {
  const meta = (await getTask(delegatee, attemptId)).metadata[OUTCOME_METADATA]!;
  const receipt = (await gw.store.getRecord(meta.receipt!.objectId, meta.receipt!.revisionId))!.body as { outcome: string; reasons: string[] };
  const attempt = (await gw.dispatcher.deps.attempts.get(attemptId))!;
  const reservation = await gw.store.ledger.reservation(attempt.body.reservation_id!);
  return { outcome: meta.outcome, reasons: receipt.reasons, reservation: reservation?.status, work: await gw.store.work.ofAttempt(attempt.record_id) };
}

describe('a stream past the turn\'s bounds is hostile input: closed, and the turn is unknown (item 15)', () => {
  it('past remote.maxTurnEvents: exactly that many events are read and relayed, the stream is closed, the reservation held', async () => {
    const res = await rpc('many', 'SendStreamingMessage', { message: message('flood me') });
    const got = events(await res.text());
    // Every event Baton read was relayed (task, WORKING, artifact chunks); the one past the bound was not.
    expect(got).toHaveLength(MAX_EVENTS + 1);
    expect(got.slice(0, MAX_EVENTS).every((e) => e.task !== undefined || e.statusUpdate !== undefined || e.artifactUpdate !== undefined)).toBe(true);
    // The stream ends with the verdict: the turn's final status, `unknown` under Baton's id.
    const final = got[MAX_EVENTS]!.statusUpdate as { taskId: string; status: { state: string }; metadata: Record<string, { outcome?: string }> };
    const last = { id: final.taskId };
    expect(last.id).toMatch(/^att_/);
    expect(final.status.state).toBe('TASK_STATE_WORKING');
    expect(final.metadata['urn:baton:outcome:v2']?.outcome).toBe('unknown');
    expect(JSON.stringify(final)).not.toContain('xxxx'); // the accumulated flood is not handed on
    // Baton closed the stream before the agent ended it (the agent then stopped by itself).
    expect(await until(async () => (await flood('many')).cuts === 1, 250, 20, 'the agent to see its stream closed')).toBe(true);
    const v = await verdictOf('many', last.id);
    expect(v.outcome).toBe('unknown');
    expect(v.reasons).toEqual([`lost after transmission: the delegatee's stream exceeded remote.maxTurnEvents (${MAX_EVENTS} events)`]);
    expect(v.reservation).toBe('unknown'); // held for reconciliation, not released
    expect(v.work).toHaveLength(0); // the verdict ended the follow-up: nobody reads the flood again
  });

  it('past remote.maxTurnBytes: a blocking caller gets Baton\'s task id, the turn unknown naming the byte bound', async () => {
    const res = await rpc('large', 'SendMessage', { message: message('flood me') });
    const body = (await res.json()) as { result?: { task: Task }; error?: unknown };
    expect(body.error).toBeUndefined();
    const task = body.result!.task;
    expect(task.id).toMatch(/^att_/);
    // Answered with the verdict itself: the turn is unknown, its reservation held.
    expect((task.metadata as Record<string, { outcome?: string }> | undefined)?.['urn:baton:outcome:v2']?.outcome).toBe('unknown');
    expect(JSON.stringify(task)).not.toContain('xxxx'); // none of the flood reaches the caller
    expect(await until(async () => (await flood('large')).cuts === 1, 250, 20, 'the agent to see its stream closed')).toBe(true);
    // Task and WORKING events plus 32 KiB chunks: the chunk that crosses 256 KiB is the 9th event carrying one.
    expect((await flood('large')).written).toBeGreaterThanOrEqual(2 + MAX_BYTES / (32 * 1024));
    const v = await verdictOf('large', task.id);
    expect(v.outcome).toBe('unknown');
    expect(v.reasons).toEqual([`lost after transmission: the delegatee's stream exceeded remote.maxTurnBytes (${MAX_BYTES} bytes)`]);
    expect(v.reservation).toBe('unknown');
  });
});

describe('a streamed forward has a deadline: follow.blockingWaitMs (item 19)', () => {
  it('a blocking SendMessage is answered WORKING with Baton\'s id; the follower carries the turn to its verdict', async () => {
    const res = await rpc('endless', 'SendMessage', { message: message('never done') });
    const task = ((await res.json()) as { result: { task: Task } }).result.task;
    expect(task.id).toMatch(/^att_/);
    expect(task.status.state).toBe('TASK_STATE_WORKING');
    // The stream was closed at the wait, while the agent was still sending.
    expect(await until(async () => (await flood('endless')).cuts === 1, 250, 20, 'the agent to see its stream closed')).toBe(true);
    await fetch(`${agents.endless!.url}/_test/release`, { method: 'POST' });
    const done = await until(async () => {
      const t = await getTask('endless', task.id);
      return t.status.state === 'TASK_STATE_COMPLETED' ? t : undefined;
    }, 250, 20, 'the verdict');
    expect(done!.metadata[OUTCOME_METADATA]!.outcome).toBe('succeeded');
  });

  it('a SendStreamingMessage caller is released too: its stream ends with the WORKING task', async () => {
    const res = await rpc('endless', 'SendStreamingMessage', { message: message('never done') });
    const got = events(await res.text());
    const last = got[got.length - 1]!.task as Task;
    expect(last.id).toMatch(/^att_/);
    expect(last.status.state).toBe('TASK_STATE_WORKING');
    expect(await until(async () => (await flood('endless')).cuts === 2, 250, 20, 'the agent to see its stream closed')).toBe(true);
    await fetch(`${agents.endless!.url}/_test/release`, { method: 'POST' });
    await until(async () => (await getTask('endless', last.id)).status.state === 'TASK_STATE_COMPLETED', 250, 20, 'the verdict');
  });
});
