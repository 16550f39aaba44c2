/**
 * A turn rebuilt from the store alone — its work-queue row, its reservation,
 * the PermissionDecision that admitted it and the attempt — so any node can
 * continue it after the node that admitted it died or handed it over.
 */
import { ControlBoundaryRef } from '../../control/fence.ts';
import type { ControlScopeRef } from '../../control/scope.ts';
import { parseContract } from '../../contracts/model.ts';
import type { Attempt } from '../attempts.ts';
import type { PathDeps } from './deps.ts';
import { pinnedTarget } from './resolve-target.ts';
import type { Turn } from './turn.ts';

/** Undefined when the turn's reservation is already resolved (its verdict was committed elsewhere). */
export async function rebuildTurn(deps: Pick<PathDeps, 'store' | 'attempts' | 'delegatees'>, ref: { attempt_id: string; reservation_id: string }): Promise<Turn | undefined> {
  const [attempt, r] = await Promise.all([deps.attempts.get(ref.attempt_id), deps.store.ledger.reservation(ref.reservation_id)]);
  if (!attempt || !r || (r.status !== 'held' && r.status !== 'unknown')) return undefined;
  const decision = await deps.store.getByDigest(r.decision_ref.content_digest);
  const fence = ControlBoundaryRef.array().parse(decision?.body.fence_set ?? []);
  return {
    attempt,
    effect_id: r.effect_id,
    reservation_id: r.reservation_id,
    fence_set: fence,
    scopes: await scopesOf(deps, attempt),
    target: pinnedTarget(deps, attempt),
    ...(attempt.body.remote.task_id ? { remoteTaskId: attempt.body.remote.task_id } : {}),
  };
}

/** The authority scopes an attempt fenced, re-derived from its stored leaf contract. */
export async function scopesOf(deps: Pick<PathDeps, 'store'>, attempt: Attempt): Promise<ControlScopeRef[]> {
  const child = await deps.store.getRecord(attempt.body.delegation_ref.object_id, attempt.body.delegation_ref.revision_id);
  return child ? (parseContract(child).body.control_scopes as ControlScopeRef[]) : [];
}
