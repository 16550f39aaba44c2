/**
 * A turn rebuilt from the store alone — its work-queue row, its reservation,
 * the PermissionDecision that admitted it and the attempt — so any node can
 * continue it after the node that admitted it died or handed it over.
 */
import { z } from 'zod';
import { ControlBoundaryRef } from '../../control/fence.ts';
import type { ControlScopeRef } from '../../control/scope.ts';
import { loadChain } from '../../contracts/attestation-chain.ts';
import { parseContract } from '../../contracts/model.ts';
import { RemoteFenceEntry } from '../../federation/head-statement.ts';
import { recordAt } from '../../store/record-at.ts';
import type { Attempt } from '../attempts.ts';
import type { PathDeps } from './deps.ts';
import { pinnedTarget } from './resolve-target.ts';
import type { Turn } from './turn.ts';

// Built once: a zod schema made per call costs more than the parse itself (issue #15).
const FenceSet = ControlBoundaryRef.array();
const RemoteFenceSet = RemoteFenceEntry.array();
/** A follow-up turn's own message, as its PermissionDecision names it (src/gateway/path/admit.ts). */
const FollowUpOf = z.object({ message_id: z.string().min(1) });

/** Undefined when the turn's reservation is already resolved (its verdict was committed elsewhere). */
export async function rebuildTurn(deps: Pick<PathDeps, 'store' | 'attempts' | 'delegatees' | 'federation'>, ref: { attempt_id: string; reservation_id: string; remote_task_id?: string | null }): Promise<Turn | undefined> {
  const [attempt, r] = await Promise.all([deps.attempts.get(ref.attempt_id), deps.store.ledger.reservation(ref.reservation_id)]);
  if (!attempt || !r || (r.status !== 'held' && r.status !== 'unknown')) return undefined;
  const decision = await recordAt(deps.store, r.decision_ref);
  const fence = FenceSet.parse(decision?.body.fence_set ?? []);
  const { scopes, subject } = await fencedScopes(deps, attempt);
  const remote = RemoteFenceSet.parse(decision?.body.remote_fence_set ?? []);
  const followUp = FollowUpOf.optional().parse(decision?.body.follow_up);
  const remoteTaskId = attempt.body.remote.task_id ?? ref.remote_task_id;
  return {
    attempt,
    effect_id: r.effect_id,
    reservation_id: r.reservation_id,
    fence_set: fence,
    scopes,
    // Separate stores: the upstream heads this turn was admitted under, for the post-effect recheck.
    ...(remote.length > 0 ? { remote_fence: { subject: subject ?? '', entries: remote } } : {}),
    target: pinnedTarget(deps, attempt),
    ...(remoteTaskId ? { remoteTaskId } : {}),
    // A follow-up's work row carries the task id only once the delegatee evidently received its message (run-turn.ts noteRemoteTask).
    ...(followUp ? { followUp: { messageId: followUp.message_id, delivered: ref.remote_task_id != null } } : {}),
  };
}

/** The authority scopes an attempt fenced, re-derived from its stored leaf contract. */
export async function scopesOf(deps: Pick<PathDeps, 'store' | 'federation'>, attempt: Attempt): Promise<ControlScopeRef[]> {
  return (await fencedScopes(deps, attempt)).scopes;
}

/**
 * The local scopes, and for a chain imported from a separate-store upstream
 * the subject of its head statements: the upstream's own streams are not in
 * this store, so they are never re-checked here (issue #16).
 */
async function fencedScopes(deps: Pick<PathDeps, 'store' | 'federation'>, attempt: Attempt): Promise<{ scopes: ControlScopeRef[]; subject?: string }> {
  const child = await deps.store.getRecord(attempt.body.delegation_ref.object_id, attempt.body.delegation_ref.revision_id);
  if (!child) return { scopes: [] };
  const leaf = parseContract(child);
  if (deps.federation && leaf.body.lineage.kind === 'child') {
    const contracts = (await loadChain(deps.store, attempt.body.delegation_ref)).map((r) => parseContract(r));
    const split = deps.federation.split(contracts);
    if (split) return { scopes: split.local, subject: contracts[split.upstreamLeaf]!.record_id };
  }
  return { scopes: leaf.body.control_scopes as ControlScopeRef[] };
}
