/** `baton ledger show ROOT` and `baton ledger unresolved`. */
import type { Command } from 'commander';
import { invalidRequest } from '../../errors.ts';
import { BAR_LEGEND, renderBudgetTree } from '../render/ledger.ts';
import { withStore } from '../with-store.ts';
import type { CliContext } from '../context.ts';

export function register(program: Command, ctx: CliContext): void {
  const ledger = program.command('ledger').description('shared root budgets (ADR-0014)');
  ledger
    .command('show <root>')
    .description('the delegation tree under ROOT with ceilings, consumed and reserved amounts')
    .option('--json', 'print JSON')
    .action(async (root: string, opts: { json?: boolean }) => {
      await withStore(ctx, async (store) => {
        const tree = await store.ledger.tree(root);
        if (!tree) throw invalidRequest('no budget node with that id', { root });
        console.log(opts.json ? JSON.stringify(tree, null, 2) : `${renderBudgetTree(tree)}\n\n${BAR_LEGEND}`);
      });
    });
  ledger
    .command('unresolved')
    .description('reservations still held or unknown: the reconciliation queue')
    .option('--limit <n>', 'at most this many', '100')
    .action(async (opts: { limit: string }) => {
      await withStore(ctx, async (store) => {
        for (const r of await store.ledger.unresolved(Number(opts.limit))) {
          console.log(`${r.reservation_id}  ${r.status.padEnd(7)}  effect ${r.effect_id}  root ${r.root_id}  ${JSON.stringify(r.amounts)}  since ${r.created_at}`);
        }
      });
    });
}
