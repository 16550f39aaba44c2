/**
 * `baton audit verify`: recomputes every record digest and every control
 * stream's hash chain from the stored bytes and reports each break.
 * Exit 0 when clean, 1 when any break was found (like `baton delegate show`
 * on an invalid chain), 2 when the audit could not run (main.ts: storage_error,
 * unreadable store).
 */
import type { Command } from 'commander';
import { auditStore } from '../../audit/scan.ts';
import type { AuditBreak, AuditReport, AuditWhere } from '../../audit/verify.ts';
import { withStore } from '../with-store.ts';
import type { CliContext } from '../context.ts';

export function register(program: Command, ctx: CliContext): void {
  const audit = program.command('audit').description('integrity of the append-only store (RW-003 §1, §1.2)');
  audit
    .command('verify')
    .description('recompute every record digest and control event chain; exit 1 on any break')
    .option('--json', 'print the report as JSON')
    .option('--max-breaks <n>', 'list at most this many breaks (all are counted)', '1000')
    .action(async (opts: { json?: boolean; maxBreaks: string }) => {
      const maxBreaks = Number(opts.maxBreaks);
      if (!Number.isInteger(maxBreaks) || maxBreaks < 0) throw new TypeError('--max-breaks: expected a whole number');
      const report = await withStore(ctx, (store) => auditStore(store.audit, { maxBreaks }, store.content));
      console.log(opts.json ? JSON.stringify(report, null, 2) : renderReport(report));
      if (report.break_count > 0) process.exitCode = 1;
    });
}

export function renderReport(r: AuditReport): string {
  const lines = [
    `records ${r.records_checked} (heads ${r.record_heads_checked})  events ${r.events_checked} in ${r.streams_checked} streams (heads ${r.control_heads_checked})` +
      (r.content_checked === undefined ? '' : `  content ${r.content_checked} (${r.content_purged ?? 0} purged by retention)`),
    ...r.breaks.map(renderBreak),
  ];
  if (r.break_count > r.breaks.length) lines.push(`… and ${r.break_count - r.breaks.length} more breaks not listed`);
  lines.push(r.break_count === 0 ? 'audit: clean' : `audit: ${r.break_count} break${r.break_count === 1 ? '' : 's'}`);
  return lines.join('\n');
}

function renderBreak(b: AuditBreak): string {
  return `BREAK ${b.kind}  ${renderWhere(b.where)}: ${b.detail}`;
}

function renderWhere(w: AuditWhere): string {
  if (w.record_id !== undefined) return `record ${w.record_id}${w.revision_id ? ` revision ${w.revision_id}` : ''}${w.seq ? ` (seq ${w.seq})` : ''}`;
  return `stream ${w.project_id ?? '?'} ${w.branch_id ?? '?'}${w.position ? ` position ${w.position}` : ''}${w.event_id ? ` event ${w.event_id}` : ''}`;
}
