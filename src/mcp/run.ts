/**
 * Steps 5–7 of an MCP tool call (issue #26): forward, read back, verdict.
 * A call is forwarded with the contract chain in `_meta`; a tool the server
 * runs as an MCP Task (the Tasks extension) is started as one, its task id
 * recorded on the turn's work row, and polled — by this node while the
 * caller waits, then by any node's durable follower (RW-003 §10.2 "negotiated
 * Tasks polling"). The result is read back through the configured route and
 * the verdict commits in path/verify.ts's one transaction.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { fingerprint } from '../attempts/task-view.ts';
import { withFences, type Observation, type ReadBack } from '../attempts/outcome.ts';
import { BatonError } from '../errors.ts';
import type { ConsumptionEvidence } from '../federation/consumption.ts';
import type { Attempt } from '../gateway/attempts.ts';
import type { PathDeps } from '../gateway/path/deps.ts';
import { CONTRACT_EXTENSION, OUTCOME_METADATA } from '../gateway/present.ts';
import { handOver, noteRemoteTask } from '../gateway/path/run-turn.ts';
import type { Turn } from '../gateway/path/turn.ts';
import type { AdmittedTurn } from '../gateway/path/admit.ts';
import { fencesCurrent, remoteFenceCurrent } from '../gateway/path/read-back.ts';
import { commitVerdict, verdict, verdictReleased } from '../gateway/path/verify.ts';
import type { JsonValue } from '../records/strict-json.ts';
import { inputContentOf } from '../gateway/task-input.ts';
import { inSpan, turnIds, withTraceContext } from '../telemetry/tracing.ts';
import type { McpServerConfig, McpToolPolicy } from './config.ts';
import type { InFlightCalls } from './in-flight.ts';
import { callView, projectCall, type ReadOutcome } from './outcome.ts';
import { checkRead, readArguments } from './read-route.ts';
import type { CallResult, McpUpstream } from './upstream.ts';

type Json = { [k: string]: JsonValue };

export interface McpServerHandle {
  config: McpServerConfig;
  upstream: McpUpstream;
}

/** One call's parts after admission: where it goes, which tool, with which arguments. */
export interface CallParts {
  server: McpServerHandle;
  policy: McpToolPolicy;
  args: Json;
  /** The server runs this tool as an MCP Task. */
  asTask: boolean;
}

type RunDeps = { path: PathDeps; calls: InFlightCalls };
export type Sent = CallResult | { kind: 'pending' };

/** Forwards an admitted call (plain, or as an MCP Task followed until the caller's wait ends) and gives it its verdict. */
export async function runCall(deps: RunDeps, call: CallParts, turn: AdmittedTurn, cancelled?: AbortSignal): Promise<{ closed: Attempt; result?: Json }> {
  const { server, policy, args } = call;
  // RW-003 §10.2: the contract chain travels in extension metadata, as in an A2A message's (src/gateway/path/forward.ts).
  // The forward span is the server's parent: its W3C trace context travels in `_meta` too (`traceparent`, `tracestate`).
  const meta: Json = { [CONTRACT_EXTENSION]: { chain: turn.contracts as unknown as JsonValue } };
  const traced = (m: Json): Json => ({ ...{}, ...withTraceContext({}), ...m });
  const running = deps.calls.start(turn.attempt.body.attempt_id);
  const signal = cancelled ? AbortSignal.any([running.signal, cancelled]) : running.signal;
  const started = performance.now();
  let sent: Sent;
  try {
    sent = await inSpan('baton.forward', { ...{}, ...turnIds(turn), 'baton.mcp.tool': policy.name, 'baton.mcp.task': call.asTask }, async (span) => {
      const s = call.asTask ? await forwardTask(deps.path, call, turn, traced(meta), signal) : await server.upstream.call(policy.name, args, traced(meta), { signal });
      span.setAttribute('baton.forwarded', s.kind);
      return s;
    });
  } finally {
    running.done();
  }
  await deps.path.events.emit({ type: 'upstream', call: 'send', delegatee: server.config.id, seconds: (performance.now() - started) / 1000, ok: sent.kind === 'result' || sent.kind === 'pending' });
  if (sent.kind === 'not_executed') {
    await verdictReleased(deps.path, turn, sent.reason);
    throw new BatonError(sent.code !== undefined ? 'invalid_request' : 'unavailable', sent.reason, { server: server.config.id, tool: policy.name, attempt_id: turn.attempt.body.attempt_id, released: true });
  }
  // Still running as a task: the durable follower has it (its work row names the task); the caller is told so.
  if (sent.kind === 'pending') return { closed: await deps.path.attempts.latest(turn.attempt) };
  return judgeSent(deps.path, call, turn, sent);
}

/** The verdict of a call that came back: lost is `unknown` and held; a result is read back, projected and committed. */
export async function judgeSent(deps: PathDeps, call: CallParts, turn: Turn, sent: Exclude<CallResult, { kind: 'not_executed' }>): Promise<{ closed: Attempt; result?: Json }> {
  if (sent.kind === 'lost') return { closed: call.policy.readRoute ? await judgeLost(deps, call, turn, sent.reason) : await verdict(deps, turn, { kind: 'lost', reason: sent.reason }) };
  const { server, policy, args } = call;
  const view = callView(`${turn.attempt.body.attempt_id}:${turn.effect_id}`, sent.result);
  const readStarted = performance.now();
  const read = await inSpan('baton.read_back', turnIds(turn), async (span) => {
    const r = await readBackCall(server.upstream, policy, { arguments: args, result: sent.result });
    span.setAttribute('baton.read_back', r.outcome.kind);
    return r;
  });
  if (policy.readRoute) await deps.events.emit({ type: 'upstream', call: 'read_back', delegatee: server.config.id, seconds: (performance.now() - readStarted) / 1000, ok: read.outcome.kind === 'read' });
  const current = (await fencesCurrent(deps.store, turn.fence_set, turn.scopes)) && (await remoteFenceCurrent(deps, turn));
  const projected = projectCall(view, read.outcome, policy.acceptance);
  const projection = withFences(projected, current);
  const observation: Observation = { kind: 'task', task: view, fingerprint: fingerprint(view) };
  const consumption = projection.settlement === 'consume' ? await consumptionOf(deps, turn, sent.result) : undefined;
  const closed = await commitVerdict(deps, turn, {
    ...{}, ...(consumption ? { consumption } : {}),
    observation,
    back: read.back,
    projection,
    fencesCurrent: current,
    profile: policy.readRoute ? 'mcp-read-route/1' : 'mcp-observed/1',
    readback: projected.readback,
    shown: view as unknown as Json,
    ...(projected.verification && projection.outcome === projected.outcome ? { closing: { verification: projected.verification } } : {}),
  });
  return { closed, result: sent.result };
}

/**
 * A call cut after sending (a stop, a dropped connection, a timeout) is read
 * back where it can be (RW-003 §10.3: "cancellation, disconnect, or token
 * revocation MUST trigger read-back when effects may already have
 * escaped"): what the read route shows is recorded on the receipt as
 * evidence for reconciliation, but the outcome stays `unknown` and held —
 * unknown is never normalised by a read (ADR-0014).
 */
async function judgeLost(deps: PathDeps, call: CallParts, turn: Turn, reason: string): Promise<Attempt> {
  const read = await readBackCall(call.server.upstream, call.policy, { arguments: call.args, result: {} });
  const shows = read.outcome.kind === 'read' ? (read.outcome.check.agreed ? 'shows the change' : 'does not show the change') : read.outcome.kind === 'unavailable' ? `unavailable: ${read.outcome.reason}` : 'none';
  const current = (await fencesCurrent(deps.store, turn.fence_set, turn.scopes)) && (await remoteFenceCurrent(deps, turn));
  return commitVerdict(deps, turn, {
    observation: { kind: 'lost', reason },
    back: read.back,
    projection: { outcome: 'unknown', settlement: 'hold', reasons: [`lost after transmission: ${reason}`, `read route after the loss: ${shows}`], acceptance: [] },
    fencesCurrent: current,
    profile: 'mcp-read-route/1',
    readback: read.outcome.kind === 'read' ? (read.outcome.check.agreed ? 'agreed' : 'disagreed') : 'unavailable',
  });
}

/** Starts the call as an MCP Task, records the task id on the work row, and polls it for as long as the caller waits. */
async function forwardTask(deps: PathDeps, call: CallParts, turn: Turn, meta: Json, signal: AbortSignal): Promise<Sent> {
  const started = await call.server.upstream.startTask(call.policy.name, call.args, meta, { signal, ttlMs: deps.follow.maxFollowMs });
  if (started.kind !== 'task') return started;
  turn.remoteTaskId = started.taskId;
  await noteRemoteTask(deps, turn);
  return pollTask(deps, call.server.upstream, turn, started.taskId, Date.now() + call.server.config.callTimeoutMs, started.pollMs, signal);
}

const TERMINAL = new Set(['completed', 'failed']);

/**
 * Polls a task until it ends, is stopped or `until` passes. A stop cancels
 * the task (cooperatively: it proves nothing) and the call is `lost`, held
 * `unknown`; the server's own cancellation too. Past `until` the turn goes
 * back to the work queue, for any node's follower.
 */
export async function pollTask(deps: Pick<PathDeps, 'store' | 'node' | 'clock' | 'follow'>, upstream: McpUpstream, turn: Pick<Turn, 'effect_id'>, taskId: string, until: number, pollMs: number, signal?: AbortSignal): Promise<Sent> {
  const interval = Math.min(Math.max(pollMs, deps.follow.pollMinMs), deps.follow.pollMaxMs);
  for (;;) {
    if (signal?.aborted) {
      await upstream.cancelTask(taskId);
      return { kind: 'lost', reason: `the call was stopped while its task ran: ${String((signal.reason as Error | undefined)?.message ?? 'stopped')}`.slice(0, 512) };
    }
    const s = await upstream.taskStatus(taskId, signal);
    if (s.kind === 'status') {
      if (TERMINAL.has(s.status)) return upstream.taskResult(taskId);
      if (s.status === 'cancelled') return { kind: 'lost', reason: 'the server cancelled the task' };
    }
    if (Date.now() + interval > until) {
      await handOver(deps, turn, interval);
      return { kind: 'pending' };
    }
    await sleep(interval, undefined, signal ? { signal } : {}).catch(() => undefined);
  }
}

/**
 * Separate stores (issue #16): a downstream Baton's signed consumption
 * receipt, carried in its result's outcome metadata and naming its own
 * attempt, settles this turn's reservation — never above it.
 */
async function consumptionOf(deps: PathDeps, turn: Turn, result: Json): Promise<ConsumptionEvidence | undefined> {
  if (!deps.federation) return undefined;
  const r = await deps.store.ledger.reservation(turn.reservation_id);
  if (!r) return undefined;
  const theirs = ((result._meta as Json | undefined)?.[OUTCOME_METADATA] ?? undefined) as { attemptId?: unknown; consumptionReceipt?: unknown } | undefined;
  const task = typeof theirs?.attemptId === 'string' ? theirs.attemptId : undefined;
  return deps.federation.settleFromReceipt(turn.attempt.body, task, theirs?.consumptionReceipt, r.amounts);
}

/** The read route's verdict and the read-back the receipt records (its evidence digest). */
async function readBackCall(upstream: McpUpstream, policy: McpToolPolicy, call: { arguments: Json; result: Json }): Promise<{ outcome: ReadOutcome; back?: ReadBack & { raw?: JsonValue } }> {
  const route = policy.readRoute;
  if (!route) return { outcome: { kind: 'none' } };
  const formed = readArguments(route, call);
  const unavailable = (reason: string) => ({ outcome: { kind: 'unavailable' as const, reason }, back: { kind: 'unavailable' as const, reason } });
  if ('missing' in formed) return unavailable(`the call did not return ${formed.missing}`);
  const read = await upstream.call(route.tool, formed.arguments, {});
  if (read.kind !== 'result') return unavailable(read.reason);
  const readView = callView(`read:${route.tool}`, read.result);
  return { outcome: { kind: 'read', check: checkRead(route, call, read.result) }, back: { kind: 'task', task: readView, fingerprint: fingerprint(readView), raw: read.result } };
}

/**
 * The durable follower's part (src/gateway/follower.ts): a call whose task
 * outlived its caller's wait, or whose node stopped, is polled on by
 * whichever node claimed its work row — for half a lease at a time, until the
 * follow-up deadline — and judged as if it had come back at once. A call
 * with no recorded task cannot be followed: `unknown`, held (RW-003 §10.3).
 */
export async function followCall(deps: RunDeps & { servers: ReadonlyMap<string, McpServerHandle> }, turn: Turn, row: { deadline: string }): Promise<void> {
  const tool = turn.attempt.body.tool;
  const server = tool ? deps.servers.get(tool.server) : undefined;
  const policy = server?.config.tools.find((t) => t.name === tool?.name);
  const taskId = turn.remoteTaskId;
  if (!server || !policy || !taskId) {
    await verdict(deps.path, turn, { kind: 'lost', reason: 'the gateway stopped while the MCP tool call ran' });
    return;
  }
  const now = Date.now();
  const deadline = Date.parse(row.deadline);
  if (now >= deadline) {
    await server.upstream.cancelTask(taskId);
    await verdict(deps.path, turn, { kind: 'lost', reason: 'no terminal state before the follow-up deadline' });
    return;
  }
  const args = await argumentsOf(deps.path, turn.attempt);
  // While this node polls, a stop cancels the task here (src/gateway/stopper.ts); between polls the fence re-check decides.
  const running = deps.calls.start(turn.attempt.body.attempt_id);
  let sent: Sent;
  try {
    sent = await pollTask(deps.path, server.upstream, turn, taskId, Math.min(now + Math.floor(deps.path.follow.leaseMs / 2), deadline), deps.path.follow.pollMinMs, running.signal);
  } finally {
    running.done();
  }
  if (sent.kind === 'pending' || sent.kind === 'not_executed') return;
  await judgeSent(deps.path, { server, policy, args, asTask: true }, turn, sent);
}

/** The exact arguments the attempt forwarded, from its task input (stored apart; {} once retention purged them). */
async function argumentsOf(deps: Pick<PathDeps, 'store'>, attempt: Attempt): Promise<Json> {
  const ref = attempt.body.input_ref;
  const record = ref ? await deps.store.getRecord(ref.object_id, ref.revision_id) : undefined;
  const input = record ? await inputContentOf(record, deps.store.content) : { state: 'absent' as const };
  const args = input.state === 'present' ? input.message.arguments : undefined;
  return args && typeof args === 'object' && !Array.isArray(args) ? (args as Json) : {};
}
