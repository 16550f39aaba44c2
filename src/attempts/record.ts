/**
 * ExecutionAttempt and VerificationReceipt records (RW-003 §7, §10.3). An
 * attempt is an immutable record revised as it progresses: first when
 * admitted, again when the remote names its task, last when an outcome is
 * projected. Remote ids are stored beside Baton's, never instead of them.
 */
import { z } from 'zod';
import type { CardVerification } from '../cards/verify.ts';
import { ControlBoundaryRef } from '../control/fence.ts';
import { Outcome } from '../control/event.ts';
import { Digest } from '../records/digest.ts';
import { Identifier } from '../records/ids.ts';
import { RevisionRef } from '../records/revision-ref.ts';
import type { TaskFingerprint } from './task-view.ts';

/** RW-003 §10.3 observation of the card a delegation used. */
export interface CardObservation {
  /** The card form used; `mcp_discovery` for an MCP server (its initialize result and tool list, RW-003 §10.2: no card). */
  form: CardVerification['form'] | 'mcp_discovery';
  source: string;
  raw_digest: Digest;
  payload_digest: Digest;
  /** False only where the operator allowed an unsigned card; then every receipt says so. */
  signed: boolean;
  /** Where the identity came from: the card's signed extension, or the operator's attested facts. */
  identity: 'card_extension' | 'operator_attested';
  attested_by?: string;
  facts_digest?: Digest;
}

/**
 * The part of the remote task Baton keeps as its own task view (DESIGN:
 * GetTask answers from Baton's view, never live from the agent): status,
 * artifacts and history as last observed or verified. Presented only with
 * Baton's ids (src/gateway/present.ts).
 */
export interface StoredTaskView {
  [key: string]: unknown;
  status: { [key: string]: unknown; state: string };
  artifacts?: unknown[];
  history?: unknown[];
}

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
    /** The adapter (RW-003 §10.2): an A2A agent, or an MCP server's tool (src/mcp). */
    protocol: 'a2a' | 'mcp';
    /** RW-003 §10.3: the exact protocol version spoken (A2A 1.0, 0.3 through the SDK's compatibility layer; MCP's negotiated revision). */
    protocol_version: string;
    binding: 'JSONRPC' | 'streamable_http';
    card_ref: RevisionRef;
    /** The card observation the attempt was admitted on: form, digests, signed or not, identity source. */
    card?: CardObservation;
    extensions: string[];
    task_id?: string;
    context_id?: string;
    message_id?: string;
  };
  /** Baton's own context id shown to the caller (the caller's own, when it named one). */
  context_id: string;
  idempotency_key: string;
  state: 'dispatching' | 'open' | 'closed';
  observed?: TaskFingerprint;
  /**
   * Baton's task view: the last verified (or, for an interrupted turn, observed) remote task.
   * Stored apart from the record (view_digest; records/detached.ts) and attached again when read;
   * absent once retention purged it (`content_purged`).
   */
  view?: StoredTaskView;
  view_digest?: string;
  /** Set on read only, never stored: the view named by view_digest was purged by retention. */
  content_purged?: true;
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
  /** An operator's resolution of an effect Baton could not verify (ADR-0014: never automatic). */
  resolution?: { as: 'not_dispatched' | 'consumed'; receipt_ref: RevisionRef };
  /** Why a turn was refused by the delegatee without effect (its reservation was released). */
  refused?: { reason: string; at: string };
  /** The human approval this attempt was admitted under (src/gateway/path/gate.ts). */
  approval?: { decision_ref: RevisionRef; request_ref: RevisionRef; tier: string };
  /**
   * How the outcome was established: absent, read back on a separate route;
   * `observed`, an MCP tool without a configured read route — its result is
   * recorded but never verified (RW-003 §10.3, issue #26).
   */
  verification?: 'observed';
  /** An MCP tool call (src/mcp): the tool and the digest of its exact arguments (stored apart as the task input). */
  tool?: { server: string; name: string; arguments_digest: string };
  /** RW-003 §6 T4: the reviewer decision a verified success waits for before it is projected. */
  review?: { state: 'pending' | 'accepted' | 'rejected'; decision_ref?: RevisionRef; receipt_outcome?: Outcome };
}

const Fingerprint = z.looseObject({ task_id: z.string(), state: z.string(), status_digest: Digest, artifacts_digest: Digest, artifact_count: z.number() });

/**
 * The attempt body as read back from the store (STYLE: zod at every edge,
 * records included). Loose: later revisions may carry fields this build
 * does not know, and they must survive the next revision.
 */
export const AttemptBodySchema = z.looseObject({
  attempt_id: Identifier,
  space_id: z.string(),
  delegatee_id: z.string(),
  delegation_ref: RevisionRef,
  root_ref: RevisionRef,
  caller_id: z.string(),
  effect_id: Identifier,
  reservation_id: Identifier,
  fence_set: z.array(ControlBoundaryRef),
  remote: z.looseObject({
    endpoint: z.string(),
    protocol: z.enum(['a2a', 'mcp']),
    protocol_version: z.string(),
    binding: z.string(),
    card_ref: RevisionRef,
    extensions: z.array(z.string()),
    task_id: z.string().optional(),
    context_id: z.string().optional(),
    message_id: z.string().optional(),
  }),
  context_id: z.string(),
  idempotency_key: z.string(),
  state: z.enum(['dispatching', 'open', 'closed']),
  observed: Fingerprint.optional(),
  view: z.looseObject({ status: z.looseObject({ state: z.string() }), artifacts: z.array(z.unknown()).optional(), history: z.array(z.unknown()).optional() }).optional(),
  view_digest: Digest.optional(),
  outcome: Outcome.optional(),
  receipt_ref: RevisionRef.optional(),
  input_ref: RevisionRef.optional(),
  resumed_from: RevisionRef.optional(),
  reassigned_from: z.string().optional(),
  cancel_cause: z.looseObject({ cause: z.enum(['caller', 'revocation', 'breaker', 'reassignment', 'operator']), at: z.string(), detail: z.string().optional() }).optional(),
  resolution: z.looseObject({ as: z.enum(['not_dispatched', 'consumed']), receipt_ref: RevisionRef }).optional(),
  refused: z.looseObject({ reason: z.string(), at: z.string() }).optional(),
  approval: z.looseObject({ decision_ref: RevisionRef, request_ref: RevisionRef, tier: z.string() }).optional(),
  review: z.looseObject({ state: z.enum(['pending', 'accepted', 'rejected']), decision_ref: RevisionRef.optional(), receipt_outcome: Outcome.optional() }).optional(),
});

/** The caller's message as forwarded, minus the contract chain Baton attached: the attempt's exact input. */
export interface TaskInputBody {
  [key: string]: unknown;
  attempt_id: string;
  /** Null when stored apart (`content: 'apart'`, purgeable by retention) or, in older records, too large to keep; its digest fixes the input. */
  message: { [key: string]: unknown } | null;
  message_digest: string;
  content?: 'apart';
}

export interface ReceiptBody {
  [key: string]: unknown;
  /** A2A task read back with GetTask; an MCP call read back through its configured read route, or only observed. */
  profile: 'a2a-readback/1' | 'mcp-read-route/1' | 'mcp-observed/1';
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
  /** Separate stores (issue #16): the downstream Baton's consumption receipt and what it settled (src/federation/consumption.ts). */
  consumption?: { [key: string]: unknown; status: 'agreed' | 'capped' | 'missing' | 'refused'; settled: Record<string, string> };
  /** A follow-up turn's own message, and whether the delegatee evidently received it (issue #25 item 2). */
  follow_up?: { message_id: string; delivered: boolean };
}
