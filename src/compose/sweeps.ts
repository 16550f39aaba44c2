/**
 * The serving gateway's periodic passes: the revocation sweep (RW-003 §7:
 * running attempts whose fences moved are stopped), then the approvals sweep
 * (approved effects recorded elsewhere are forwarded from here), every
 * `revocationSweepMs`, never overlapping; and the retention purges
 * (src/retention/schedule.ts). Returns the function that stops them all.
 */
import type { Config } from '../config.ts';
import type { Dispatcher } from '../gateway/dispatcher.ts';
import type { Logger } from '../log.ts';
import { randomIds } from '../records/ids.ts';
import type { ActorRef } from '../records/revision-ref.ts';
import { systemClock } from '../records/time.ts';
import { schedulePurges } from '../retention/schedule.ts';
import type { Store } from '../store/port.ts';

export function scheduleSweeps(config: Config, deps: { dispatcher: Dispatcher; store: Store; logger: Logger; actor: ActorRef }): () => void {
  const { dispatcher, logger } = deps;
  let sweeping = false;
  const sweep = setInterval(() => {
    if (sweeping) return; // never overlap passes
    sweeping = true;
    // The sweep walks the durable work queue: attempts started on any node, before a restart, or by a CLI reassignment.
    dispatcher
      .sweepRevocations()
      .then((n) => n > 0 && logger.info({ cancelled: n }, 'revocation propagated to running attempts'))
      .catch((err) => logger.warn({ err }, 'revocation sweep failed'))
      // Approved effects recorded elsewhere (the CLI, another node) are forwarded from here.
      .then(() => dispatcher.sweepApprovals((task, err) => logger.warn({ task, err: err instanceof Error ? err.message : String(err) }, 'approved effect not admitted')))
      .catch((err) => logger.warn({ err }, 'approvals sweep failed'))
      .finally(() => (sweeping = false));
  }, config.revocationSweepMs);
  sweep.unref();
  const stopPurges = schedulePurges(config.retention, { store: deps.store, clock: systemClock, ids: randomIds, logger, actor: deps.actor });
  return () => {
    clearInterval(sweep);
    stopPurges();
  };
}
