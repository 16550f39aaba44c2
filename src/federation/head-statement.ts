/**
 * Signed control-head statements (issue #16; RW-003 §1.2 "If an external
 * system cannot participate in atomic fence validation, the executor MUST
 * recheck immediately before transmission"). An upstream gateway states,
 * under its contract keys, the current head and projected state of every
 * authority stream it issued a delegation under; the downstream binds those
 * heads into its PermissionDecision as remote fence entries and compares them
 * again after read-back. Pure: no I/O, an injected clock instant.
 */
import { z } from 'zod';
import { ControlBoundaryRef } from '../control/fence.ts';
import { ControlScopeRef, streamKey, streamOf } from '../control/scope.ts';
import { AUTHORITY_STATES, permitsEffects } from '../control/state.ts';
import { contextInvalidated } from '../errors.ts';
import { Identifier } from '../records/ids.ts';
import { UtcTime } from '../records/time.ts';

export const HEAD_STATEMENT_TYPE = 'baton.control_heads/v1';
/** Clocks of two organisations differ; a statement from further in the future than this is refused. */
export const CLOCK_SKEW_MS = 5_000;

export const HeadEntry = z.strictObject({
  scope: ControlScopeRef,
  /** Absent when the upstream holds no such stream: unresolved, never permitting. */
  boundary: ControlBoundaryRef.nullable(),
  state: z.enum(AUTHORITY_STATES),
});
export type HeadEntry = z.infer<typeof HeadEntry>;

export const HeadStatement = z.strictObject({
  typ: z.literal(HEAD_STATEMENT_TYPE),
  /** The upstream gateway's actor object id (the contracts' signer). */
  iss: Identifier,
  /** The downstream gateway's actor object id: a statement is not replayable to another party. */
  aud: Identifier,
  /** The delegation the downstream acts under (the upstream's leaf for it). */
  subject: Identifier,
  issued_at: UtcTime,
  /** The staleness the upstream allows (its card/contract side of the agreement), in ms. */
  max_staleness_ms: z.number().int().nonnegative().max(3_600_000),
  heads: z.array(HeadEntry).min(1).max(256),
});
export type HeadStatement = z.infer<typeof HeadStatement>;

/** One entry of a PermissionDecision's remote fence: whose statement, which head, in what state. */
export const RemoteFenceEntry = z.strictObject({
  upstream: Identifier,
  scope: ControlScopeRef,
  boundary: ControlBoundaryRef,
  state: z.enum(AUTHORITY_STATES),
});
export type RemoteFenceEntry = z.infer<typeof RemoteFenceEntry>;

export interface StatementExpectation {
  iss: string;
  aud: string;
  subject: string;
  /** Every scope the remote fence must cover. */
  required: readonly ControlScopeRef[];
  now: Date;
  /** The downstream's own bound; the stricter of it and the upstream's applies. */
  maxStalenessMs: number;
}

/**
 * The rule: right parties and subject, fresh enough, every required scope
 * present with a head in a permitting state. Returns the remote fence;
 * throws context_invalidated listing every failure otherwise.
 */
export function remoteFenceOf(s: HeadStatement, e: StatementExpectation): RemoteFenceEntry[] {
  const failures: Array<{ reason: string; branch_id?: string; state?: string }> = [];
  if (s.iss !== e.iss || s.aud !== e.aud || s.subject !== e.subject) failures.push({ reason: 'statement names other parties or another delegation' });
  const age = e.now.getTime() - Date.parse(s.issued_at);
  const allowed = Math.min(e.maxStalenessMs, s.max_staleness_ms) + CLOCK_SKEW_MS;
  if (age > allowed || age < -CLOCK_SKEW_MS) failures.push({ reason: 'stale' });
  const byStream = new Map(s.heads.map((h) => [streamKey(streamOf(h.scope)), h]));
  const out: RemoteFenceEntry[] = [];
  for (const scope of e.required) {
    const branch_id = streamOf(scope).branch_id;
    const h = byStream.get(streamKey(streamOf(scope)));
    if (!h || !h.boundary) failures.push({ reason: 'unresolved', branch_id });
    else if (!permitsEffects(h.state)) failures.push({ reason: 'not_permitting', branch_id, state: h.state });
    else out.push({ upstream: s.iss, scope, boundary: h.boundary, state: h.state });
  }
  if (failures.length > 0) throw contextInvalidated('upstream control heads do not permit the effect', { failures });
  return out;
}

/** Post-effect recheck: true when every bound head is still the statement's head and permits. */
export function remoteFenceHolds(bound: readonly RemoteFenceEntry[], now: HeadStatement): boolean {
  const byStream = new Map(now.heads.map((h) => [streamKey(streamOf(h.scope)), h]));
  return bound.every((b) => {
    const h = byStream.get(streamKey(streamOf(b.scope)));
    return !!h?.boundary && permitsEffects(h.state) && h.boundary.position === b.boundary.position && h.boundary.event_id === b.boundary.event_id && h.boundary.event_digest === b.boundary.event_digest;
  });
}
