/**
 * Read-back before outcome (DESIGN §6, RW-003 §9 post-effect verification):
 * re-read the remote task on the separate verification route, re-check the
 * control fences (a racing revocation makes the result unknown, never
 * authorised success, RW-003 §1.2), project the outcome, write the
 * VerificationReceipt, append rw003.execution.terminal and settle the ledger.
 */
import { project, type AcceptanceCriteria, type Observation, type Projection, type ReadBack } from '../attempts/outcome.ts';
import { fingerprint, TaskView } from '../attempts/task-view.ts';
import type { ControlEventInput } from '../control/event.ts';
import { checkFences, type ControlFenceSet, type StreamHead } from '../control/fence.ts';
import { streamKey, streamOf, type ControlScopeRef } from '../control/scope.ts';
import { digestOf } from '../records/digest.ts';
import { refOf, sealRecord, type SealedRecord } from '../records/envelope.ts';
import type { IdSource } from '../records/ids.ts';
import type { ActorRef } from '../records/revision-ref.ts';
import type { JsonValue } from '../records/strict-json.ts';
import { utc, type Clock } from '../records/time.ts';
import type { Store } from '../store/port.ts';
import type { AttemptBody, ReceiptBody } from './attempt-record.ts';
import { RemoteFailure, RemoteRpcError, type RemoteClient } from './remote.ts';

export interface VerifierDeps {
  store: Store;
  remote: RemoteClient;
  clock: Clock;
  ids: IdSource;
  gatewayActor: ActorRef;
}

export interface Verdict {
  projection: Projection;
  receipt: SealedRecord<ReceiptBody>;
  /** The attempt's closing revision, committed with the receipt. */
  closed: SealedRecord<AttemptBody>;
  /** The read-back task the verdict was based on, when there was one. */
  evidence?: JsonValue;
}

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
  const heads = new Map<string, StreamHead>();
  for (const b of fence) {
    const h = await store.control.streamHead(b);
    if (h) heads.set(streamKey(b), h);
  }
  for (const s of scopes) {
    const h = await store.control.head(s);
    if (h) heads.set(streamKey(streamOf(s)), h);
  }
  return checkFences(fence, scopes, heads).length === 0;
}

/** Projects, records and settles one attempt observation. */
export async function verifyAttempt(
  attempt: SealedRecord<AttemptBody>,
  observation: Observation,
  ctx: { endpoint: string; headers: Record<string, string>; criteria: AcceptanceCriteria; scopes: readonly ControlScopeRef[] },
  deps: VerifierDeps,
  /** Seals (does not store) the attempt's closing revision for this verdict. */
  close: (receipt: SealedRecord<ReceiptBody>, projection: Projection) => SealedRecord<AttemptBody>,
): Promise<Verdict | undefined> {
  const back = observation.kind === 'task' ? await readBack(deps.remote, ctx.endpoint, observation.task.id, ctx.headers) : undefined;
  const first = project(observation, back, ctx.criteria);
  if (first.outcome === undefined) return undefined; // still open: nothing to verify yet
  const current = await fencesCurrent(deps.store, attempt.body.fence_set, ctx.scopes);
  const projection: Projection & { outcome: NonNullable<Projection['outcome']> } =
    !current && first.outcome === 'succeeded'
      ? { ...first, outcome: 'unknown', settlement: 'hold', reasons: [...first.reasons, 'a control head moved after admission'] }
      : { ...first, outcome: first.outcome };
  const at = utc(deps.clock.now());
  const receipt = sealRecord<ReceiptBody>(
    {
      type: 'verification_receipt',
      issuedBy: deps.gatewayActor,
      lifecycle: 'recorded',
      body: {
        profile: 'a2a-readback/1',
        attempt_id: attempt.body.attempt_id,
        delegation_ref: attempt.body.delegation_ref,
        ...(attempt.body.remote.card ? { card: attempt.body.remote.card } : {}),
        ...(observation.kind === 'task' ? { expected: observation.fingerprint } : {}),
        ...(back?.kind === 'task' ? { observed: back.fingerprint } : {}),
        readback: back === undefined ? 'not_applicable' : back.kind === 'unavailable' ? 'unavailable' : projection.outcome === 'succeeded' || projection.outcome === 'failed' || projection.outcome === 'cancelled' ? 'agreed' : 'disagreed',
        acceptance: projection.acceptance,
        fences_current: current,
        verifier_ref: deps.gatewayActor,
        checked_at: at,
        evidence_digest: back?.kind === 'task' && back.raw !== undefined ? digestOf(back.raw) : null,
        outcome: projection.outcome,
        reasons: projection.reasons,
        no_project_mutation: true,
      },
    },
    deps,
  );
  const terminal = {
    event_type: 'rw003.execution.terminal' as const,
    control_scope_ref: { space_id: attempt.body.space_id, scope_kind: 'attempt' as const, scope_id: attempt.body.attempt_id },
    actor_ref: deps.gatewayActor,
    produced_records: [refOf(receipt)],
    outcome: projection.outcome,
    idempotency_key: `terminal:${receipt.record_id}`,
    payload: { reasons: projection.reasons },
  };
  const closed = close(receipt, projection);
  await commit(attempt, projection, { receipt, closed, terminal }, deps);
  return { projection, receipt, closed, ...(back?.kind === 'task' && back.raw !== undefined ? { evidence: back.raw } : {}) };
}


/**
 * One transaction for the verdict: the settlement, the receipt, the attempt's
 * closing revision and the terminal observation (RW-003 §1.1: the receipt and
 * the outcome it justifies are never apart). If another gateway process
 * sharing the ledger settled first, resolve-once holds and only the records
 * are written.
 */
async function commit(
  attempt: SealedRecord<AttemptBody>,
  p: Projection,
  out: { receipt: SealedRecord<ReceiptBody>; closed: SealedRecord<AttemptBody>; terminal: ControlEventInput },
  deps: VerifierDeps,
): Promise<void> {
  const at = utc(deps.clock.now());
  const id = attempt.body.reservation_id;
  const records = [out.receipt, out.closed];
  const current = await deps.store.ledger.reservation(id);
  if (!current || (current.status !== 'held' && current.status !== 'unknown')) {
    for (const r of records) await deps.store.putRecord(r);
    await deps.store.control.appendControl(out.terminal);
    return;
  }
  const outcome =
    p.settlement === 'release'
      ? ({ kind: 'not_dispatched' } as const)
      : p.settlement === 'consume'
        ? ({ kind: 'measured', actual: new Map(Object.entries(current.amounts).map(([k, v]) => [k, BigInt(v)])) } as const)
        : ({ kind: 'unknown' } as const);
  await deps.store.ledger.settle({ reservation_id: id, outcome, evidence: refOf(out.receipt), at, records, events: [out.terminal] });
}
