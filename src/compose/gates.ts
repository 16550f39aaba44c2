/**
 * The human authority gates (src/gates) as configured: approvers, rules and
 * per-delegatee `requireApproval`, with the callers they name.
 */
import { callerActorRef } from '../contracts/identities.ts';
import type { Config } from '../config.ts';
import { HumanGates } from '../gates/approvals.ts';
import { randomIds } from '../records/ids.ts';
import type { ActorRef } from '../records/revision-ref.ts';
import { systemClock } from '../records/time.ts';
import type { Store } from '../store/port.ts';

/** Human authority gates (src/gates), when any approver, rule or delegatee `requireApproval` is configured. */
export function composeGates(config: Config, store: Store, gatewayActor: ActorRef): HumanGates | undefined {
  const a = config.approvals;
  if (a.approvers.length === 0 && a.rules.length === 0 && !config.delegatees.some((d) => d.requireApproval !== undefined)) return undefined;
  const callers = new Map(config.callers.map((c) => [c.id, c]));
  return new HumanGates({
    store,
    clock: systemClock,
    ids: randomIds,
    gatewayActor,
    config: a,
    callerOf: (id) => {
      const c = callers.get(id);
      return c && { id: c.id, actor: callerActorRef(c.id), via: c.apiKeySha256 ? 'api_key' : 'jwt', ...(c.preset ? { preset: c.preset } : {}), ...(c.upstream ? { upstream: c.upstream } : {}) };
    },
    requireApprovalOf: (id) => config.delegatees.find((d) => d.id === id)?.requireApproval,
  });
}
