/**
 * What a verdict reads besides the store's own rows (DESIGN §6 "Read-back
 * before outcome", RW-003 §1.2): the delegatee's task, re-read on the
 * separate verification route, and a downstream Baton's consumption receipt
 * in it; whether the fences taken at admission still stand, here and
 * (separate stores) upstream; and the task view Baton keeps.
 */
import { checkFences, type ControlFenceSet } from '../../control/fence.ts';
import { streamOf, type ControlScopeRef } from '../../control/scope.ts';
import type { ReadBack } from '../../attempts/outcome.ts';
import { fingerprint, TaskView } from '../../attempts/task-view.ts';
import type { StoredTaskView } from '../../attempts/record.ts';
import { RECORD_LIMITS } from '../../records/limits.ts';
import type { JsonValue } from '../../records/strict-json.ts';
import type { Store } from '../../store/port.ts';
import { CONTRACT_EXTENSION, OUTCOME_METADATA } from '../present.ts';
import type { ConsumptionEvidence } from '../../federation/consumption.ts';
import { inSpan, turnIds } from '../../telemetry/tracing.ts';
import { RemoteFailure, RemoteRpcError, type RemoteClient } from '../remote.ts';
import type { PathDeps } from './deps.ts';
import type { Json, Turn } from './turn.ts';

export async function readBack(remote: RemoteClient, endpoint: string, taskId: string, headers: Record<string, string> = {}): Promise<ReadBack & { raw?: JsonValue }> {
  try {
    const raw = await remote.call(endpoint, 'GetTask', { id: taskId }, { readBack: true, headers });
    const parsed = TaskView.safeParse(raw);
    if (!parsed.success) return { kind: 'unavailable', reason: 'read-back returned no task' };
    return { kind: 'task', task: parsed.data, fingerprint: fingerprint(parsed.data), raw };
  } catch (err) {
    if (err instanceof RemoteFailure || err instanceof RemoteRpcError) return { kind: 'unavailable', reason: err.message };
    throw err;
  }
}

/** Are the fences taken at admission still the heads, and do they still permit? */
export async function fencesCurrent(store: Store, fence: ControlFenceSet, scopes: readonly ControlScopeRef[]): Promise<boolean> {
  const heads = await store.control.heads([...fence, ...scopes.map(streamOf)]);
  return checkFences(fence, scopes, heads).length === 0;
}

/** Separate stores: the upstream's heads, refetched after the read-back, must equal those bound at admission (issue #16). */
export async function remoteFenceCurrent(deps: Pick<PathDeps, 'federation'>, turn: Pick<Turn, 'remote_fence'>): Promise<boolean> {
  if (!turn.remote_fence) return true;
  if (!deps.federation) return false;
  return deps.federation.stillHolds(turn.remote_fence.entries, turn.remote_fence.subject);
}

/** Room the stored view may take in an attempt record (RECORD_LIMITS leaves the rest to the envelope and body). */
const VIEW_BUDGET_BYTES = RECORD_LIMITS.maxRecordBytes - 16 * 1024;

/**
 * UTF-8 length of the view's canonical bytes. JSON.stringify writes the same
 * members, numbers and escapes in another key order, so the same length, for
 * any value JCS can write — and the view is read strictly (no lone surrogate)
 * and is canonicalised when its attempt is sealed, which refuses the rest.
 * Natively, not by a second canonical walk (issue #24).
 */
const viewBytes = (view: object): number => Buffer.byteLength(JSON.stringify(view), 'utf8');

/**
 * The remote task as Baton keeps it for its own task view: status,
 * artifacts, history — without the contract chains Baton attached to the
 * messages it forwarded (they are in the contract records already). When it
 * would not fit an attempt record, history goes first, then artifacts; their
 * digests stay in the receipt.
 */
export function storedView(task: Json): StoredTaskView {
  const { status, artifacts, history } = task as { status?: StoredTaskView['status']; artifacts?: unknown[]; history?: unknown[] };
  const view: StoredTaskView = { status: status ?? { state: 'TASK_STATE_UNSPECIFIED' }, ...(artifacts ? { artifacts } : {}), ...(history ? { history: history.map(withoutChain) } : {}) };
  if (viewBytes(view) <= VIEW_BUDGET_BYTES) return view;
  const { history: _h, ...lean } = view;
  if (viewBytes(lean) <= VIEW_BUDGET_BYTES) return { ...{}, ...lean, truncated: 'history' };
  return { status: view.status, truncated: 'history,artifacts' };
}

function withoutChain(message: unknown): unknown {
  if (!message || typeof message !== 'object' || Array.isArray(message)) return message;
  const m = message as { metadata?: Record<string, unknown> };
  if (!m.metadata || !(CONTRACT_EXTENSION in m.metadata)) return message;
  const { [CONTRACT_EXTENSION]: _chain, ...metadata } = m.metadata;
  return { ...{}, ...m, metadata };
}

/**
 * Separate stores (issue #16): the downstream Baton's signed consumption
 * receipt, carried in its read-back's outcome metadata, settles this turn's
 * reservation — never above it (src/federation/federation.ts).
 */
export async function consumptionOf(deps: Pick<PathDeps, 'federation'>, turn: Turn, back: ReadBack & { raw?: JsonValue }, reserved: Record<string, string>): Promise<ConsumptionEvidence | undefined> {
  if (!deps.federation || back.kind !== 'task') return undefined;
  const meta = (back.raw as { metadata?: Record<string, { consumptionReceipt?: unknown } | undefined> } | undefined)?.metadata;
  return deps.federation.settleFromReceipt(turn.attempt.body, turn.remoteTaskId ?? turn.attempt.body.remote.task_id, meta?.[OUTCOME_METADATA]?.consumptionReceipt, reserved);
}

/** The verdict's read-back, announced with its duration (upstream latency, DESIGN "read-back before outcome"). */
export async function timedReadBack(deps: Pick<PathDeps, 'remote' | 'events'>, turn: Turn, taskId: string): Promise<ReadBack & { raw?: JsonValue }> {
  const started = performance.now();
  const back = await inSpan('baton.read_back', turnIds(turn), async (span) => {
    const b = await readBack(deps.remote, turn.target.endpoint, taskId, turn.target.headers);
    span.setAttribute('baton.read_back', b.kind);
    return b;
  });
  await deps.events.emit({ type: 'upstream', call: 'read_back', delegatee: turn.attempt.body.delegatee_id, seconds: (performance.now() - started) / 1000, ok: back.kind === 'task' });
  return back;
}
