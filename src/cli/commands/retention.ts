/**
 * `baton retention purge --before DATE`: purges message and task-view content
 * stored before DATE (records, digests and chains stay; the purge is itself
 * recorded). `baton retention status` shows how much content is held.
 */
import { ownerActorRef } from '../../contracts/identities.ts';
import type { Command } from 'commander';
import { randomIds } from '../../records/ids.ts';
import { systemClock } from '../../records/time.ts';
import { cutoffFor, purgeContent } from '../../retention/purge.ts';
import type { CliContext } from '../context.ts';
import { withStore } from '../with-store.ts';

export function register(program: Command, ctx: CliContext): void {
  const retention = program.command('retention').description('data retention: purge message and task-view content, keep every record and chain');
  retention
    .command('purge')
    .description('purge content stored before a date (or older than the configured retention.contentDays); audited')
    .option('--before <date>', 'ISO 8601 date or instant, e.g. 2026-01-31 or 2026-01-31T12:00:00Z')
    .option('--json', 'print the result as JSON')
    .action(async (o: { before?: string; json?: boolean }) => {
      const config = ctx.config();
      const days = config.retention.contentDays;
      if (o.before === undefined && days === undefined) throw new TypeError('give --before DATE, or configure retention.contentDays');
      const before = o.before !== undefined ? new Date(o.before) : cutoffFor(days!, systemClock.now());
      const r = await withStore(ctx, (store) => purgeContent({ store, clock: systemClock, ids: randomIds }, before, ownerActorRef(config.ownerNamespace), 'operator'));
      if (o.json) return console.log(JSON.stringify(r, null, 2));
      console.log(
        `purged ${r.purged} content item${r.purged === 1 ? '' : 's'} and ${r.purged_deliveries} delivered push bod${r.purged_deliveries === 1 ? 'y' : 'ies'} stored before ${r.before} (recorded as ${r.purge_id}); held ${r.stats.stored}, purged overall ${r.stats.purged}`,
      );
      if (!r.reclaimed) console.log('note: a reader kept the SQLite WAL from being truncated; older copies of purged bytes may remain in it until the next purge');
    });
  retention
    .command('status')
    .description('how much message and task-view content is held, and how much retention has purged')
    .action(async () => {
      const s = await withStore(ctx, (store) => store.content.stats());
      console.log(`content held ${s.stored}, purged ${s.purged}; retention.contentDays ${ctx.config().retention.contentDays ?? 'unset (kept)'}`);
    });
}
