/** `baton push deliveries` and `baton push requeue ID`: the outbox, dead letters included. */
import type { Command } from 'commander';
import { redactedUrl } from '../../push/webhook-url.ts';
import { invalidRequest } from '../../errors.ts';
import { requeueRefused } from '../../push/model.ts';
import type { DeliveryRow, DeliveryStatus } from '../../store/port.ts';
import { withStore } from '../with-store.ts';
import type { CliContext } from '../context.ts';
import { table } from '../render/table.ts';

const STATUSES: readonly DeliveryStatus[] = ['pending', 'delivering', 'delivered', 'dead'];

/** The deliveries as a table; never the body (it holds no credentials) nor the webhook URL's userinfo or query. */
export function renderDeliveries(rows: ReadonlyArray<{ d: DeliveryRow; url?: string | undefined }>): string {
  if (rows.length === 0) return 'no deliveries';
  const cells = rows.map(({ d, url }) => [d.delivery_id, d.status, d.task_id, d.config_id, String(d.attempts), d.next_at, url ? safeUrl(url) : '-', d.last_error ?? '']);
  return table(['DELIVERY', 'STATUS', 'TASK', 'CONFIG', 'TRIES', 'NEXT', 'WEBHOOK', 'LAST ERROR'], cells);
}

function safeUrl(url: string): string {
  return `${redactedUrl(url)}${url.includes('?') ? '?…' : ''}`;
}

export function register(program: Command, ctx: CliContext): void {
  const push = program.command('push').description('push notifications to integrators: the durable outbox');
  push
    .command('deliveries')
    .description('deliveries, newest first (dead letters with --status dead)')
    .option('--status <status>', `only ${STATUSES.join(' | ')}`)
    .option('--task <id>', "only this Baton task's")
    .option('--limit <n>', 'at most this many', '100')
    .option('--json', 'print JSON (without bodies)')
    .action(async (opts: { status?: string; task?: string; limit: string; json?: boolean }) => {
      if (opts.status !== undefined && !STATUSES.includes(opts.status as DeliveryStatus)) throw invalidRequest('unknown delivery status', { status: opts.status, allowed: STATUSES });
      await withStore(ctx, async (store) => {
        const rows = await store.push.deliveries({ limit: Number(opts.limit), ...(opts.status ? { status: opts.status as DeliveryStatus } : {}), ...(opts.task ? { task_id: opts.task } : {}) });
        if (opts.json) {
          console.log(JSON.stringify(rows.map(({ body: _b, ...rest }) => rest), null, 2));
          return;
        }
        const withUrls = [];
        for (const d of rows) withUrls.push({ d, url: (await store.push.config(d.task_id, d.config_id))?.url });
        console.log(renderDeliveries(withUrls));
      });
    });
  push
    .command('requeue <delivery>')
    .description('send a dead-lettered delivery again (same id and body bytes, signed afresh), due now')
    .action(async (id: string) => {
      await withStore(ctx, async (store) => {
        if (!(await store.push.requeue(id, new Date().toISOString()))) throw requeueRefused(id, await store.push.delivery(id));
        console.log(`${id} requeued; a running gateway sends it on its next outbox pass`);
      });
    });
}
