/**
 * Outcome projection (RW-003 §1.1 "Outcome", §10.3; DESIGN "Read-back before
 * outcome"). A remote terminal state is an observation; only a read-back
 * through a separate route that agrees with it, plus the contract's
 * acceptance checks, may project `succeeded`. Unknown stays unknown: it is
 * never turned into `failed` to allow a retry and never releases budget.
 */
import type { Outcome } from '../control/event.ts';
import { isInterrupted, isTerminal, type TaskFingerprint, type TaskView } from './task-view.ts';

/** What the contract requires of the delegatee's result before it counts. */
export interface AcceptanceCriteria {
  /** At least this many artifacts. */
  minArtifacts?: number;
  /** Every artifact part must be one of these media types. */
  allowedMediaTypes?: readonly string[];
}

export type Observation =
  /** The request never left Baton (connect refused, DNS, TLS before any byte). */
  | { kind: 'not_transmitted' }
  /** Sent, then no usable answer: timeout, reset, garbage. */
  | { kind: 'lost'; reason: string }
  /** A task (or status update) the remote reported. */
  | { kind: 'task'; task: TaskView; fingerprint: TaskFingerprint };

export type ReadBack = { kind: 'unavailable'; reason: string } | { kind: 'task'; task: TaskView; fingerprint: TaskFingerprint };

/** How the ledger reservation is settled for this projection. */
export type Settlement = 'release' | 'consume' | 'hold';

export interface Projection {
  /** Absent while the attempt stays open (non-terminal or interrupted). */
  outcome?: Outcome;
  settlement: Settlement;
  reasons: string[];
  acceptance: Array<{ check: string; passed: boolean }>;
}

const open = (reason: string): Projection => ({ settlement: 'hold', reasons: [reason], acceptance: [] });

export function checkAcceptance(task: TaskView, criteria: AcceptanceCriteria): Array<{ check: string; passed: boolean }> {
  const artifacts = task.artifacts ?? [];
  const out: Array<{ check: string; passed: boolean }> = [];
  if (criteria.minArtifacts !== undefined) out.push({ check: `artifacts>=${criteria.minArtifacts}`, passed: artifacts.length >= criteria.minArtifacts });
  if (criteria.allowedMediaTypes) {
    const allowed = new Set(criteria.allowedMediaTypes);
    const ok = artifacts.every((a) => a.parts.every((p) => p.mediaType === undefined || p.mediaType === '' || allowed.has(p.mediaType)));
    out.push({ check: 'media_types', passed: ok });
  }
  return out;
}

/**
 * The pure projection. Settlement is conservative: a verified terminal
 * result consumes the whole reservation (no trusted measurement exists on
 * A2A), only a request that provably never left releases it, and anything
 * uncertain holds it for reconciliation.
 */
export function project(observation: Observation, readBack: ReadBack | undefined, criteria: AcceptanceCriteria = {}): Projection {
  if (observation.kind === 'not_transmitted') return { outcome: 'failed', settlement: 'release', reasons: ['never transmitted'], acceptance: [] };
  if (observation.kind === 'lost') return { outcome: 'unknown', settlement: 'hold', reasons: [`lost after transmission: ${observation.reason}`], acceptance: [] };

  const seen = observation.fingerprint;
  if (isInterrupted(seen.state)) return open(`interrupted: ${seen.state}`);
  if (!isTerminal(seen.state)) return open(`not terminal: ${seen.state}`);
  if (!readBack || readBack.kind === 'unavailable') {
    return { outcome: 'unknown', settlement: 'hold', reasons: [`read-back unavailable${readBack ? `: ${readBack.reason}` : ''}`], acceptance: [] };
  }
  const back = readBack.fingerprint;
  if (back.task_id !== seen.task_id) return { outcome: 'unknown', settlement: 'hold', reasons: ['read-back returned another task'], acceptance: [] };
  if (back.state !== seen.state) {
    return { outcome: 'unknown', settlement: 'hold', reasons: [`read-back state ${back.state} disagrees with observed ${seen.state}`], acceptance: [] };
  }
  if (back.artifacts_digest !== seen.artifacts_digest || back.status_digest !== seen.status_digest) {
    return { outcome: 'partially_applied', settlement: 'hold', reasons: ['read-back artifacts or status differ from the observation'], acceptance: [] };
  }
  switch (seen.state) {
    case 'TASK_STATE_COMPLETED': {
      const acceptance = checkAcceptance(readBack.task, criteria);
      const failed = acceptance.filter((a) => !a.passed);
      if (failed.length > 0) return { outcome: 'failed', settlement: 'consume', reasons: failed.map((f) => `acceptance failed: ${f.check}`), acceptance };
      return { outcome: 'succeeded', settlement: 'consume', reasons: ['read-back agrees; acceptance passed'], acceptance };
    }
    case 'TASK_STATE_CANCELED':
      // A cancel acknowledgement is not proof nothing happened: outputs mean it partly did.
      return back.artifact_count > 0
        ? { outcome: 'partially_applied', settlement: 'hold', reasons: ['cancelled with outputs'], acceptance: [] }
        : { outcome: 'cancelled', settlement: 'consume', reasons: ['read-back confirms cancelled'], acceptance: [] };
    default:
      return { outcome: 'failed', settlement: 'consume', reasons: [`read-back confirms ${seen.state}`], acceptance: [] };
  }
}

/**
 * RW-003 §1.2: when a control head moved while the effect ran (a racing
 * revocation, suspension, trip or policy change), the result is not an
 * authorised success — `succeeded` becomes `unknown` and its reservation is
 * held until reconciled. Other outcomes stand as they are.
 */
export function withFences(p: Projection, fencesCurrent: boolean): Projection {
  if (fencesCurrent || p.outcome !== 'succeeded') return p;
  return { ...{}, ...p, outcome: 'unknown', settlement: 'hold', reasons: [...p.reasons, 'a control head moved after admission'] };
}
