/**
 * The periodic purge (retention.contentDays): every purgeIntervalMs, content
 * older than the retention period is purged, recorded as a `schedule` purge.
 * Passes never overlap; a failed pass is logged and the next one retries.
 * With several nodes each purges; a purge that finds nothing still leaves its record.
 */
import type { Logger } from '../log.ts';
import type { ActorRef } from '../records/revision-ref.ts';
import { cutoffFor, purgeContent, type PurgeDeps, type RetentionConfig } from './purge.ts';

export function schedulePurges(config: RetentionConfig, deps: PurgeDeps & { logger: Logger; actor: ActorRef }): () => void {
  const days = config.contentDays;
  if (days === undefined) return () => undefined;
  let running = false;
  const pass = () => {
    if (running) return;
    running = true;
    purgeContent(deps, cutoffFor(days, deps.clock.now()), deps.actor, 'schedule')
      .then((r) => {
        if (r.purged + r.purged_deliveries > 0) deps.logger.info({ purged: r.purged, purged_deliveries: r.purged_deliveries, before: r.before, purge_id: r.purge_id }, 'retention: content purged');
        if (!r.reclaimed) deps.logger.warn({ purge_id: r.purge_id }, 'retention: the WAL could not be truncated (a reader held it); the next pass retries');
      })
      .catch((err: unknown) => deps.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'retention: purge failed; the next pass retries'))
      .finally(() => (running = false));
  };
  const timer = setInterval(pass, config.purgeIntervalMs);
  timer.unref();
  pass();
  return () => clearInterval(timer);
}
