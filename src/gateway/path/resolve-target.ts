/**
 * Step 2: which delegatee, at which endpoint, under which verified card. A
 * card that no longer verifies (not a network failure) is a breaker signal
 * on the agent Baton last verified (RW-003 §7.3 card mismatch).
 */
import { isBatonError } from '../../errors.ts';
import type { Attempt } from '../attempts.ts';
import { LEGACY_VERSION } from '../legacy-remote.ts';
import { CARD_REJECTED, type ResolvedDelegatee } from '../delegatees.ts';
import type { PathDeps } from './deps.ts';
import type { Target } from './turn.ts';
import { chainPlacementOf } from '../chain-placement.ts';

export async function resolveTarget(deps: Pick<PathDeps, 'delegatees' | 'events'>, delegateeId: string): Promise<ResolvedDelegatee> {
  try {
    return await deps.delegatees.resolve(delegateeId);
  } catch (err) {
    const agent = deps.delegatees.lastCardId(delegateeId);
    const rejected = isBatonError(err) && (err.code !== 'unavailable' || err.details.reason === CARD_REJECTED);
    if (agent && rejected) await deps.events.emit({ type: 'signal', signal: { kind: 'card_rejected', agent, detail: err.message } });
    throw err;
  }
}

export function targetOf(d: ResolvedDelegatee): Target {
  const card = d.verification.card;
  const caps = card.capabilities as { streaming?: boolean; pushNotifications?: boolean } | undefined;
  return {
    delegatee_id: d.config.id,
    endpoint: d.endpoint,
    headers: d.headers,
    acceptance: d.config.acceptance,
    streaming: caps?.streaming === true,
    pushNotifications: caps?.pushNotifications === true,
    chainPlacement: chainPlacementOf(card),
  };
}

/**
 * Where an admitted attempt was sent, without re-verifying the card: for
 * following, stopping and reading back what already runs — which must work
 * exactly when the delegatee's card no longer would.
 */
export function pinnedTarget(deps: Pick<PathDeps, 'delegatees'>, attempt: Attempt): Target {
  const config = deps.delegatees.configOf(attempt.body.delegatee_id);
  let headers: Record<string, string> = {};
  try {
    headers = deps.delegatees.credentialsOf(attempt.body.delegatee_id);
  } catch {
    // No credential in the environment any more: try without; the read-back decides.
  }
  // A v0.3 delegatee is spoken to through the compatibility layer, whichever process admitted the attempt.
  if (attempt.body.remote.protocol_version === LEGACY_VERSION) headers = { ...{}, ...headers, 'a2a-version': LEGACY_VERSION };
  // Nothing sent to a pinned target carries a message (follow, cancel, read back): no chain goes with it.
  return { delegatee_id: attempt.body.delegatee_id, endpoint: attempt.body.remote.endpoint, headers, acceptance: config?.acceptance ?? {}, streaming: false, pushNotifications: false, chainPlacement: 'request' };
}
