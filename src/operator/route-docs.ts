/**
 * The operator API's schemas and route descriptions: the router validates
 * bodies with these zod schemas and the OpenAPI document (openapi.ts) is
 * generated from the same objects, so the two cannot drift. Every route the
 * router registers must have an entry here (it refuses to register one that
 * has not).
 */
import { z } from 'zod';
import { SCOPE_KINDS } from '../control/scope.ts';
import { ERROR_CODES } from '../errors.ts';
import { Identifier } from '../records/ids.ts';
import { Digest } from '../records/digest.ts';
import { REQUEST_STATES } from '../gates/records.ts';
import { BREAKER_TRIGGERS, CARD_STATES } from './service.ts';

const Reason = z.string().min(1).max(2048);
export const bodies = {
  reason: z.strictObject({ reason: Reason }),
  amend: z.strictObject({ reason: Reason, terms: z.record(z.string(), z.unknown()) }),
  reassign: z.strictObject({
    to: Identifier,
    reason: Reason,
    checkpoint: Identifier.optional(),
    resolvePrevious: z.strictObject({ as: z.enum(['not_dispatched', 'consumed']), note: Reason }).optional(),
  }),
  card: z.strictObject({ lifecycle: z.enum(CARD_STATES), reason: Reason }),
  trip: z.strictObject({ trigger: z.enum(BREAKER_TRIGGERS), reason: Reason }),
  ack: z.strictObject({ note: Reason }),
  /** An approver decides on the exact preview they saw: its digest must be the request's. */
  approval: z.strictObject({ previewDigest: Digest.describe('the preview digest shown by GET /admin/approvals/{id}'), note: Reason }),
  review: z.strictObject({ decision: z.enum(['approve', 'deny']), note: Reason }),
  empty: z.strictObject({}),
  purge: z.strictObject({ before: z.string().min(10).max(64).describe('ISO 8601 date or instant: content stored before it is purged') }),
  refresh: z.strictObject({ delegatee: z.string().min(1).max(64).optional().describe('every delegatee when absent') }),
};

const Limit = z.string().regex(/^[1-9][0-9]*$/).describe('at most 1000; an invalid value means the default');
/** Query parameters (all optional strings on the wire). */
export const queries = {
  trees: z.object({ limit: Limit.optional() }),
  escalations: z.object({ state: z.enum(['open', 'acknowledged']).optional().describe('any other value lists every state'), limit: Limit.optional() }),
  approvals: z.object({ state: z.enum(REQUEST_STATES).optional().describe('any other value lists every state'), limit: Limit.optional() }),
  deliveries: z.object({ status: z.enum(['pending', 'delivering', 'delivered', 'dead']).optional(), task: z.string().optional(), limit: Limit.optional() }),
};

export const ScopeKind = z.enum(SCOPE_KINDS);
export const ErrorBody = z.object({ error: z.object({ code: z.enum(ERROR_CODES), message: z.string(), details: z.record(z.string(), z.unknown()) }) });

export interface RouteDoc {
  summary: string;
  body?: z.ZodType;
  query?: z.ZodObject;
  /** Success status (200 unless stated). */
  status?: number;
  /** Path parameters with a closed set of values. */
  params?: Record<string, z.ZodType>;
}

const scoped = { kind: ScopeKind };
/** Keyed by `METHOD /express/path`. */
export const ROUTE_DOCS: Readonly<Record<string, RouteDoc>> = {
  'GET /admin/trees': { summary: 'Recent delegation trees with budgets (ceiling, consumed, reserved)', query: queries.trees },
  'GET /admin/attempts/:id': { summary: 'Audit of one attempt: contract chain, decisions, outcome, receipts' },
  'POST /admin/attempts/:id/checkpoint': { summary: 'Record a checkpoint of a running attempt', body: bodies.reason, status: 201 },
  'POST /admin/delegations/:id/revoke': { summary: 'Revoke a delegation (and every descendant)', body: bodies.reason },
  'POST /admin/delegations/:id/suspend': { summary: 'Suspend a delegation', body: bodies.reason },
  'POST /admin/delegations/:id/resume': { summary: 'Resume a suspended delegation', body: bodies.reason },
  'POST /admin/delegations/:id/amend': { summary: 'Narrow a delegation\'s terms (a new contract revision)', body: bodies.amend },
  'POST /admin/delegations/:id/reassign': { summary: 'Reassign a delegation to another delegatee mid-execution', body: bodies.reassign },
  'POST /admin/cards/:id/lifecycle': { summary: 'Set a delegatee card\'s lifecycle state', body: bodies.card },
  'POST /admin/breakers/:kind/:id/trip': { summary: 'Trip a circuit breaker on a scope', body: bodies.trip, params: scoped },
  'POST /admin/breakers/:kind/:id/reset': { summary: 'Reset a circuit breaker on a scope', body: bodies.reason, params: scoped },
  'GET /admin/escalations': { summary: 'Escalations raised for operators', query: queries.escalations },
  'POST /admin/escalations/:id/acknowledge': { summary: 'Acknowledge an escalation', body: bodies.ack },
  'GET /admin/push/deliveries': { summary: 'Push deliveries in the outbox (bodies omitted)', query: queries.deliveries },
  'POST /admin/push/deliveries/:id/requeue': { summary: 'Requeue a dead or pending delivery now', body: bodies.empty },
  'POST /admin/reload': { summary: 'Re-read the configuration and apply pinned JWKS, delegatees, callers and presets as one snapshot; refused whole (400, every problem listed) when it has errors; changes needing a restart are listed', body: bodies.empty },
  'POST /admin/retention/purge': { summary: 'Purge message and task-view content, and delivered or dead push bodies, stored before a date; records, digests and chains stay, the purge is recorded', body: bodies.purge },
  'POST /admin/cards/refresh': { summary: "Re-fetch delegatees' cards now (one, or all) instead of after the cache's max-age", body: bodies.refresh },
  'GET /admin/approvals': { summary: 'Requests held for a named human authority (the approvals queue), newest first', query: queries.approvals },
  'GET /admin/approvals/:id': { summary: 'One request: the exact effect preview (delegatee and card digest, message digest and rendering, scope, budget, expiry), its decision and the task' },
  'POST /admin/approvals/:id/approve': { summary: 'Approve the exact preview (by its digest); the effect is then admitted and forwarded', body: bodies.approval },
  'POST /admin/approvals/:id/deny': { summary: 'Deny: the task ends REJECTED and nothing is forwarded', body: bodies.approval },
  'POST /admin/approvals/:id/review': { summary: 'T4: an independent reviewer\'s decision before a verified effect is projected succeeded', body: bodies.review },
  'POST /admin/audit/verify': { summary: 'Verify the hash chain and signatures of every stored record' },
};
