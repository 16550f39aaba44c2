/**
 * The human gate's records (RW-003 §1.1: a gate resolves to an RW-002
 * AuthorityDecision). An ApprovalRequest is revised as it moves (pending →
 * approved/denied → admitted/refused); each AuthorityDecision is immutable
 * and names the exact request revision and preview digest it decided on.
 * Read back through these schemas (STYLE: zod at every edge, records too).
 */
import { z } from 'zod';
import { Digest } from '../records/digest.ts';
import type { SealedRecord } from '../records/envelope.ts';
import { RevisionRef } from '../records/revision-ref.ts';
import { schemaRefFor } from '../records/schema-ref.ts';
import { GatedTier } from './policy.ts';

export const REQUEST_STATES = ['pending', 'approved', 'denied', 'admitted', 'refused', 'expired', 'withdrawn'] as const;

const Preview = z.looseObject({
  tier: GatedTier,
  operation: z.string(),
  caller_id: z.string(),
  delegatee: z.looseObject({ id: z.string(), card_object_id: z.string(), card_digest: z.string() }),
  message_digest: Digest,
  /** Kept apart from the record (content.ts): present once read back, absent in the sealed record. */
  rendering: z.string().optional(),
  scope: z.unknown(),
  budget: z.unknown(),
  expires_at: z.string(),
});

export const ApprovalRequestBody = z.looseObject({
  /** Baton's task id the caller holds; the admitted attempt takes exactly this id. */
  task_id: z.string(),
  context_id: z.string(),
  caller_id: z.string(),
  caller_principal: z.string(),
  delegatee_id: z.string(),
  tier: GatedTier,
  operation: z.string(),
  /**
   * The exact SendMessage params to forward: the message only (what the
   * preview shows and its digest covers; issue 25 item 18). Kept apart from
   * the record by digest (`params_digest`, `rendering_digest`, `content:
   * 'apart'`; content.ts) and purgeable; older records hold them inline.
   */
  params: z.record(z.string(), z.unknown()).optional(),
  params_digest: Digest.optional(),
  rendering_digest: Digest.optional(),
  content: z.enum(['apart', 'purged']).optional(),
  preview: Preview,
  preview_digest: Digest,
  /** Authority heads seen at request time: the admission fences on exactly these (RW-003 §1.2). */
  fence_set: z.array(z.record(z.string(), z.unknown())),
  requested_at: z.string(),
  expires_at: z.string(),
  state: z.enum(REQUEST_STATES),
  decision_ref: RevisionRef.optional(),
  attempt_id: z.string().optional(),
  refusal: z.looseObject({ code: z.string(), rule: z.string(), reason: z.string(), at: z.string() }).optional(),
  /**
   * The gateway (its actor id) that held the effect, carried by every
   * revision. Gateways of several organisations can share one store (README
   * "one shared ledger"): only this gateway's approvers decide it and only
   * its nodes admit it — another would forward it under its own name.
   * Absent on requests from before (everyone's, as the work queue's legacy rows).
   */
  gateway_id: z.string().optional(),
});
export type ApprovalRequestBody = z.infer<typeof ApprovalRequestBody> & { [key: string]: unknown };

export const Approver = z.looseObject({ actor_ref: RevisionRef, operator_id: z.string(), principal_id: z.string(), role: z.string() });

export const AuthorityDecisionBody = z.looseObject({
  /** `approval` clears the pre-effect gate; `review` is T4's post-effect reviewer decision. */
  kind: z.enum(['approval', 'review']),
  decision: z.enum(['approve', 'deny']),
  task_id: z.string(),
  /** The exact request revision decided on (approval), or the attempt revision reviewed (review). */
  subject_ref: RevisionRef,
  preview_digest: Digest,
  approver: Approver,
  decided_at: z.string(),
  /** After this the approval no longer admits anything (a fresh approval is needed). */
  expires_at: z.string(),
  note: z.string().max(2048),
  /** For a review: the read-back receipt the reviewer saw. */
  evidence_ref: RevisionRef.optional(),
});
export type AuthorityDecisionBody = z.infer<typeof AuthorityDecisionBody> & { [key: string]: unknown };

export type ApprovalRequest = SealedRecord<ApprovalRequestBody>;
export type AuthorityDecision = SealedRecord<AuthorityDecisionBody>;

export const REQUEST_SCHEMA = schemaRefFor('approval_request');
export const DECISION_SCHEMA = schemaRefFor('authority_decision');

/** A task id and its request record share a suffix: `att_X` ↔ `apr_X`. */
export const requestIdOf = (taskId: string): string => `apr_${taskId.replace(/^att_/, '')}`;
