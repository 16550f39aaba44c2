/**
 * `baton reconcile`: settle what Baton could not verify at the time.
 * Without options it re-reads every unresolved reservation's remote task
 * (two reads on the verification route) and settles only what now agrees;
 * `--resolve` records an operator's evidence-backed resolution instead.
 */
import type { Command } from 'commander';
import { invalidRequest, isBatonError } from '../../errors.ts';
import type { CliContext } from '../context.ts';
import { withGateway } from '../with-gateway.ts';

export function register(program: Command, ctx: CliContext): void {
  program
    .command('reconcile')
    .description('re-verify unknown or held effects by read-back, or resolve one with operator evidence')
    .option('--limit <n>', 'at most this many reservations', '100')
    .option('--resolve <reservation>', 'resolve one reservation by hand')
    .option('--as <resolution>', 'with --resolve: not_dispatched or consumed')
    .option('--note <text>', 'with --resolve: the evidence (ticket, log reference, confirmation)')
    .action(async (opts: { limit: string; resolve?: string; as?: string; note?: string }) =>
      withGateway(ctx, async (core, store) => {
        if (opts.resolve) {
          if (opts.as !== 'not_dispatched' && opts.as !== 'consumed') throw invalidRequest('--as must be not_dispatched or consumed');
          if (!opts.note) throw invalidRequest('--note with the evidence is required');
          const status = await core.dispatcher.resolveManually(opts.resolve, opts.as, opts.note, core.ownerActor);
          console.log(`${opts.resolve}  ${status}  (operator resolution recorded)`);
          return;
        }
        const pending = await store.ledger.unresolved(Number(opts.limit));
        if (pending.length === 0) console.log('nothing to reconcile');
        // Every item is tried and reported; one that fails does not stop the others (the exit code says so).
        let failed = 0;
        for (const r of pending) {
          try {
            const res = await core.dispatcher.reconcile(r.reservation_id);
            console.log(`${res.reservation_id}  ${res.status.padEnd(8)}  ${res.reason}`);
          } catch (err) {
            failed++;
            const code = isBatonError(err) ? err.code : 'error';
            console.log(`${r.reservation_id}  ${r.status.padEnd(8)}  failed (${code}): ${err instanceof Error ? err.message : String(err)}`);
          }
        }
        if (failed > 0) {
          console.error(`${failed} of ${pending.length} could not be reconciled`);
          process.exitCode = 1;
        }
      }),
    );
}
