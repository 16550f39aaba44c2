/**
 * ExecutionAttempt and VerificationReceipt records (RW-003 §7, §10.3). An
 * attempt is an immutable record revised as it progresses: first when
 * admitted, again when the remote names its task, last when an outcome is
 * projected. Remote ids are stored beside Baton's, never instead of them.
 */
import type { ControlBoundaryRef } from '../control/fence.ts';
import type { Outcome } from '../control/event.ts';
import type { Digest } from '../records/digest.ts';
import type { RevisionRef } from '../records/revision-ref.ts';
import type { TaskFingerprint } from '../attempts/task-view.ts';
import type { CardObservation } from './delegatee-identity.ts';

export interface AttemptBody {
  [key: string]: unknown;
  attempt_id: string;
  space_id: string;
  delegatee_id: string;
  delegation_ref: RevisionRef;
  root_ref: RevisionRef;
  caller_id: string;
  effect_id: string;
  reservation_id: string;
  fence_set: ControlBoundaryRef[];
  remote: {
    endpoint: string;
    protocol: 'a2a';
    /** RW-003 §10.3: the exact protocol version spoken (0.3 through the SDK's compatibility layer). */
    protocol_version: '1.0' | '0.3';
    binding: 'JSONRPC';
    card_ref: RevisionRef;
    /** The card observation the attempt was admitted on: form, digests, signed or not, identity source. */
    card?: CardObservation;
    extensions: string[];
    task_id?: string;
    context_id?: string;
    message_id?: string;
  };
  /** Baton's own context id shown to the caller. */
  context_id: string;
  idempotency_key: string;
  state: 'dispatching' | 'open' | 'closed';
  observed?: TaskFingerprint;
  outcome?: Outcome;
  receipt_ref?: RevisionRef;
  /** The exact input this attempt forwarded (a task_input record). */
  input_ref?: RevisionRef;
  /** The checkpoint a resumed attempt continues from (RW-003 §7.2). */
  resumed_from?: RevisionRef;
  /** The attempt this one replaces after a reassignment (RW-003 §11.4); never rewritten. */
  reassigned_from?: string;
  /** Why the attempt was asked to stop, first cause only (ADR-0014). */
  cancel_cause?: { cause: 'caller' | 'revocation' | 'breaker' | 'reassignment' | 'operator'; at: string; detail?: string };
}

/** The caller's message as forwarded, minus the contract chain Baton attached: the attempt's exact input. */
export interface TaskInputBody {
  [key: string]: unknown;
  attempt_id: string;
  /** Null when the message is too large to keep; its digest still fixes the input. */
  message: { [key: string]: unknown } | null;
  message_digest: string;
}

export interface ReceiptBody {
  [key: string]: unknown;
  profile: 'a2a-readback/1';
  attempt_id: string;
  delegation_ref: RevisionRef;
  /** The card observation the verified attempt ran on (RW-003 §10.3): signed or not, identity source. */
  card?: CardObservation;
  expected?: TaskFingerprint;
  observed?: TaskFingerprint;
  readback: 'agreed' | 'disagreed' | 'unavailable' | 'not_applicable';
  acceptance: Array<{ check: string; passed: boolean }>;
  fences_current: boolean;
  verifier_ref: RevisionRef;
  checked_at: string;
  evidence_digest: Digest | null;
  outcome: Outcome;
  reasons: string[];
  /** RW-003 §1.1: a read-back records no project mutation. */
  no_project_mutation: true;
}
