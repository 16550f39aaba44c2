/**
 * DelegationCheckpoint (RW-003 §7.2): what a resumer needs to continue
 * safely, or to refuse to. Pure: the caller gathers the observations; this
 * module decides what the checkpoint says and, on resume, what no longer
 * holds. Baton keeps no RW-002 research project, so the project position is
 * recorded as not applicable rather than invented.
 */
import type { ControlBoundaryRef, StreamHead } from '../control/fence.ts';
import { streamKey } from '../control/scope.ts';
import type { RevisionRef } from '../records/revision-ref.ts';
import type { AttemptBody } from './record.ts';
import type { TaskFingerprint } from './task-view.ts';

export type ReconciliationState = 'settled' | 'held' | 'unknown' | 'released' | 'consumed' | 'none';

export interface CheckpointBody {
  [key: string]: unknown;
  checkpoint_id: string;
  delegation_ref: RevisionRef;
  root_ref: RevisionRef;
  attempt_id: string;
  /** Monotonic per attempt: 1 for the first checkpoint. */
  sequence: number;
  input_revisions: RevisionRef[];
  last_project_position: null;
  control_fence_set: ControlBoundaryRef[];
  completed: { criteria: string[]; outputs: Array<{ artifacts_digest: string; artifact_count: number }> };
  pending: { attempt_state: AttemptBody['state']; remote_state: string | null };
  uncertainty: string[];
  failures: string[];
  remaining_budget: Array<{ dimension: string; remaining: string }>;
  external_operations: Array<{ kind: 'a2a_task'; endpoint: string; task_id: string | null; context_id: string | null; message_id: string | null; reconciliation: ReconciliationState }>;
  next_safe_action: 'continue' | 'reconcile' | 'reassign' | 'none';
  gates: string[];
}

export interface CheckpointFacts {
  checkpointId: string;
  attempt: AttemptBody;
  sequence: number;
  /** The remote task as last read, if it could be read. */
  remote?: TaskFingerprint;
  remoteError?: string;
  reservation: ReconciliationState;
  balances: ReadonlyArray<{ dimension: string; ceiling: string; consumed: string; reserved: string }>;
  /** Why the checkpoint is taken (breaker, revocation, operator). */
  reason: string;
}

export function checkpointBody(f: CheckpointFacts): CheckpointBody {
  const a = f.attempt;
  const uncertain = f.reservation === 'held' || f.reservation === 'unknown';
  const uncertainty = [
    ...(uncertain ? [`reservation ${a.reservation_id} is ${f.reservation}: the effect may have happened`] : []),
    ...(f.remote === undefined ? [`remote task could not be read${f.remoteError ? `: ${f.remoteError}` : ''}`] : []),
  ];
  return {
    checkpoint_id: f.checkpointId,
    delegation_ref: a.delegation_ref,
    root_ref: a.root_ref,
    attempt_id: a.attempt_id,
    sequence: f.sequence,
    input_revisions: a.input_ref ? [a.input_ref] : [],
    last_project_position: null,
    control_fence_set: a.fence_set,
    completed: {
      criteria: a.outcome === 'succeeded' ? ['readback_agreed', 'acceptance'] : [],
      outputs: f.remote && f.remote.artifact_count > 0 ? [{ artifacts_digest: f.remote.artifacts_digest, artifact_count: f.remote.artifact_count }] : [],
    },
    pending: { attempt_state: a.state, remote_state: f.remote?.state ?? null },
    uncertainty,
    failures: [f.reason, ...(f.remoteError ? [f.remoteError] : [])].slice(0, 16),
    remaining_budget: f.balances.map((b) => ({ dimension: b.dimension, remaining: (BigInt(b.ceiling) - BigInt(b.consumed) - BigInt(b.reserved)).toString() })),
    external_operations: [
      {
        kind: 'a2a_task',
        endpoint: a.remote.endpoint,
        task_id: a.remote.task_id ?? null,
        context_id: a.remote.context_id ?? null,
        message_id: a.remote.message_id ?? null,
        reconciliation: f.reservation,
      },
    ],
    next_safe_action: a.state === 'closed' && !uncertain ? 'none' : uncertain ? 'reconcile' : 'continue',
    gates: uncertain ? ['reconcile the held reservation before any retry or reassignment (RW-003 §7.1)'] : [],
  };
}

/**
 * RW-003 §7.2 resume validation: everything the checkpoint relied on must
 * still hold. `moved` lists fenced streams allowed to have advanced (the
 * delegation being reassigned); any other head change, an unreconciled
 * external operation, a changed input or an exhausted budget stops the resume.
 */
export function resumeFailures(
  cp: CheckpointBody,
  now: {
    heads: ReadonlyMap<string, StreamHead>;
    moved: ReadonlySet<string>;
    inputDigest: string | undefined;
    expectedInputDigest: string | undefined;
    reservation: ReconciliationState;
    remaining: ReadonlyArray<{ dimension: string; remaining: bigint }>;
  },
): string[] {
  const out: string[] = [];
  for (const b of cp.control_fence_set) {
    const key = streamKey(b);
    if (now.moved.has(key)) continue;
    const h = now.heads.get(key);
    if (!h || h.position !== b.position || h.event_id !== b.event_id) out.push(`control head ${b.branch_id} moved since the checkpoint (was ${b.position}, now ${h?.position ?? 'missing'})`);
    else if (h.state !== 'active') out.push(`control scope ${b.branch_id} is ${h.state}`);
  }
  if (now.expectedInputDigest === undefined) out.push('the checkpoint names no exact input');
  else if (now.inputDigest !== now.expectedInputDigest) out.push('the input no longer matches the checkpoint (input fixity)');
  if (now.reservation === 'held' || now.reservation === 'unknown') out.push('the previous attempt has an unreconciled external effect');
  const empty = now.remaining.filter((r) => r.remaining <= 0n).map((r) => r.dimension);
  if (empty.length > 0) out.push(`no budget left on: ${empty.join(', ')}`);
  return out;
}
