/**
 * DelegationCheckpoints (RW-003 §7.2): what an operator records of an
 * attempt before stopping or reassigning it — exact input, fenced heads,
 * the remote task as read back now, the reservation's state and the budget
 * node — written as an immutable record and announced on the attempt stream.
 */
import { checkpointBody, type CheckpointBody, type ReconciliationState } from '../attempts/checkpoint.ts';
import type { fingerprint } from '../attempts/task-view.ts';
import { streamOf, type ControlScopeRef } from '../control/scope.ts';
import { invalidRequest } from '../errors.ts';
import { attemptOf, remoteTaskIdOf } from '../gateway/attempts.ts';
import type { DelegateeRegistry } from '../gateway/delegatees.ts';
import { readBack } from '../gateway/path/read-back.ts';
import type { RemoteClient } from '../gateway/remote.ts';
import { refOf, sealRecord, type SealedRecord } from '../records/envelope.ts';
import type { IdSource } from '../records/ids.ts';
import type { ActorRef } from '../records/revision-ref.ts';
import { schemaRefFor } from '../records/schema-ref.ts';
import type { Clock } from '../records/time.ts';
import type { Store } from '../store/port.ts';

export type Checkpoint = SealedRecord<CheckpointBody>;

export interface CheckpointDeps {
  store: Store;
  delegatees: DelegateeRegistry;
  remote: RemoteClient;
  ids: IdSource;
  clock: Clock;
  spaceId: string;
}

export class Checkpoints {
  constructor(private readonly deps: CheckpointDeps) {}

  private scope(attemptId: string): ControlScopeRef {
    return { space_id: this.deps.spaceId, scope_kind: 'attempt', scope_id: attemptId };
  }

  /** Writes a checkpoint of `attemptId` and records it on the attempt's stream. */
  async write(attemptId: string, reason: string, by: ActorRef): Promise<Checkpoint> {
    const attempt = attemptOf(await this.deps.store.getRecord(attemptId));
    if (!attempt) throw invalidRequest('no such attempt', { attempt: attemptId.slice(0, 128) });
    // A running turn's task id is on its work row until the verdict records it on the attempt.
    const taskId = await remoteTaskIdOf(this.deps.store, attempt);
    const a = taskId === attempt.body.remote.task_id ? attempt.body : { ...{}, ...attempt.body, remote: { ...{}, ...attempt.body.remote, task_id: taskId } };
    const reservation = await this.deps.store.ledger.reservation(a.reservation_id);
    const node = findNode(await this.deps.store.ledger.tree(a.root_ref.object_id), a.delegation_ref.object_id);
    const { remote, remoteError } = await this.readRemote(a.delegatee_id, taskId);
    const stream = streamOf(this.scope(attemptId));
    const sequence = (await this.deps.store.control.readStream(stream, { limit: 10_000 })).filter((e) => e.event_type === 'rw003.execution.checkpointed').length + 1;
    const cpId = this.deps.ids.next('cp');
    const body = checkpointBody({
      checkpointId: cpId,
      attempt: a,
      sequence,
      ...(remote ? { remote } : {}),
      ...(remoteError ? { remoteError } : {}),
      reservation: (reservation?.status ?? 'none') as ReconciliationState,
      balances: node?.balances ?? [],
      reason,
    });
    const record = sealRecord<CheckpointBody>(
      { type: 'delegation_checkpoint', issuedBy: by, lifecycle: 'recorded', body },
      { ids: { next: (p) => (p === 'rev' ? this.deps.ids.next('rev') : cpId) }, clock: this.deps.clock },
    );
    await this.deps.store.putRecord(record);
    await this.deps.store.control.appendControl({
      event_type: 'rw003.execution.checkpointed',
      control_scope_ref: this.scope(attemptId),
      actor_ref: by,
      produced_records: [refOf(record)],
      fence_set: a.fence_set,
      payload: { sequence, reason: reason.slice(0, 512) },
    });
    return record;
  }

  /** The remote task as read back now on the verification route, or why it could not be. */
  private async readRemote(delegateeId: string, taskId: string | undefined): Promise<{ remote?: ReturnType<typeof fingerprint>; remoteError?: string }> {
    if (taskId === undefined) return {};
    try {
      const target = await this.deps.delegatees.resolve(delegateeId);
      const back = await readBack(this.deps.remote, target.endpoint, taskId, target.headers);
      return back.kind === 'task' ? { remote: back.fingerprint } : { remoteError: back.reason };
    } catch (err) {
      return { remoteError: err instanceof Error ? err.message : String(err) };
    }
  }

  /** The newest checkpoint recorded on an attempt's stream. */
  async latest(attemptId: string): Promise<Checkpoint | undefined> {
    const events = await this.deps.store.control.readStream(streamOf(this.scope(attemptId)), { limit: 10_000 });
    const last = events.filter((e) => e.event_type === 'rw003.execution.checkpointed').pop()?.produced_records[0];
    return last ? this.parse(await this.deps.store.getRecord(last.object_id, last.revision_id)) : undefined;
  }

  /** A checkpoint by id, which must belong to `attemptId`. */
  async load(id: string, attemptId: string): Promise<Checkpoint> {
    const cp = this.parse(await this.deps.store.getRecord(id));
    if (!cp || cp.body.attempt_id !== attemptId) throw invalidRequest('no such checkpoint for this delegation', { checkpoint: id.slice(0, 128) });
    return cp;
  }

  private parse(record: Awaited<ReturnType<Store['getRecord']>>): Checkpoint | undefined {
    return record && record.schema_ref === schemaRefFor('delegation_checkpoint') ? (record as unknown as Checkpoint) : undefined;
  }
}

export function findNode<T extends { node_id: string; children: T[] }>(tree: T | undefined, id: string): T | undefined {
  if (!tree) return undefined;
  if (tree.node_id === id) return tree;
  for (const c of tree.children) {
    const f = findNode(c, id);
    if (f) return f;
  }
  return undefined;
}
