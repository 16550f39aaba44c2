/**
 * RW-003 §1.2 ControlFenceSet: the exact heads of every applicable authority
 * stream, bound to one permission evaluation or effect. The append boundary
 * validates it atomically; any moved head, missing stream or non-permitting
 * state fails closed. Positions are compared only within the same stream.
 */
import { z } from 'zod';
import { contextInvalidated, invalidRequest } from '../errors.ts';
import { Digest } from '../records/digest.ts';
import { Identifier } from '../records/ids.ts';
import { compareStreams, isAuthorityScope, streamKey, streamOf, type ControlScopeRef, type StreamId } from './scope.ts';
import { permitsEffects, type AuthorityState } from './state.ts';

export const ControlBoundaryRef = z.strictObject({
  project_id: z.string().min(1).max(2048),
  branch_id: z.string().min(1).max(2048),
  position: z.number().int().nonnegative(),
  event_id: Identifier,
  event_digest: Digest,
});
export type ControlBoundaryRef = z.infer<typeof ControlBoundaryRef>;
export type ControlFenceSet = readonly ControlBoundaryRef[];

/** Current head of one stream as the store sees it inside the admission transaction. */
export interface StreamHead extends ControlBoundaryRef {
  state: AuthorityState;
}

/**
 * Normalises boundaries into a fence set: sorted by stream, one per stream.
 * Two different boundaries for one stream, or an attempt branch, is invalid.
 */
export function fenceSetOf(boundaries: Iterable<ControlBoundaryRef>): ControlFenceSet {
  const byStream = new Map<string, ControlBoundaryRef>();
  for (const b of boundaries) {
    if (b.branch_id.startsWith('attempt:')) throw invalidRequest('attempt audit streams are never fenced', { branch_id: b.branch_id });
    const key = streamKey(b);
    const seen = byStream.get(key);
    if (seen && (seen.position !== b.position || seen.event_id !== b.event_id || seen.event_digest !== b.event_digest)) {
      throw invalidRequest('fence set holds two heads for one stream', { branch_id: b.branch_id });
    }
    byStream.set(key, b);
  }
  return [...byStream.values()].sort(compareStreams);
}

/** True when the set is already sorted and duplicate-free (the wire form must be). */
export function isCanonicalFenceSet(set: ControlFenceSet): boolean {
  return set.every((b, i) => i === 0 || compareStreams(set[i - 1]!, b) < 0);
}

export interface FenceFailure {
  branch_id: string;
  reason: 'missing_from_fence_set' | 'unresolved' | 'head_moved' | 'not_permitting';
  state?: AuthorityState;
}

/**
 * The pure admission rule for fences. `required` are the authority scopes
 * derived from trusted state (never the caller's list alone); `heads` are read
 * under lock by the adapter. Returns every failure, not only the first.
 */
export function checkFences(
  fenceSet: ControlFenceSet,
  required: readonly ControlScopeRef[],
  heads: ReadonlyMap<string, StreamHead>,
): FenceFailure[] {
  const failures: FenceFailure[] = [];
  const fenced = new Map(fenceSet.map((b) => [streamKey(b), b]));
  for (const scope of required) {
    if (!isAuthorityScope(scope)) continue;
    const s = streamOf(scope);
    if (!fenced.has(streamKey(s))) failures.push({ branch_id: s.branch_id, reason: 'missing_from_fence_set' });
  }
  for (const b of fenceSet) {
    const head = heads.get(streamKey(b));
    if (!head || head.state === 'unresolved') failures.push({ branch_id: b.branch_id, reason: 'unresolved' });
    else if (head.position !== b.position || head.event_id !== b.event_id || head.event_digest !== b.event_digest) {
      failures.push({ branch_id: b.branch_id, reason: 'head_moved' });
    } else if (!permitsEffects(head.state)) failures.push({ branch_id: b.branch_id, reason: 'not_permitting', state: head.state });
  }
  return failures;
}

/** Throws context_invalidated listing every failing stream. */
export function assertFences(fenceSet: ControlFenceSet, required: readonly ControlScopeRef[], heads: ReadonlyMap<string, StreamHead>): void {
  if (!isCanonicalFenceSet(fenceSet)) throw invalidRequest('fence set must be sorted and duplicate-free');
  const failures = checkFences(fenceSet, required, heads);
  if (failures.length > 0) throw contextInvalidated('control fence is stale or does not permit the effect', { failures });
}

/** Streams a fence check must read, in lock order. */
export function streamsToRead(fenceSet: ControlFenceSet, required: readonly ControlScopeRef[]): StreamId[] {
  const all = new Map<string, StreamId>();
  for (const b of fenceSet) all.set(streamKey(b), { project_id: b.project_id, branch_id: b.branch_id });
  for (const r of required.filter(isAuthorityScope)) all.set(streamKey(streamOf(r)), streamOf(r));
  return [...all.values()].sort(compareStreams);
}
