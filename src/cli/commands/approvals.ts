/**
 * `baton approvals`: the human gate's queue from the command line — the same
 * OperatorService the operator API and console call. The acting approver is
 * named with `--as` and must be a configured approver; whoever runs the CLI
 * holds the store's files, so this is the owner vouching for that operator.
 * An approval is recorded here and forwarded by the serving gateway's sweep.
 */
import { operatorActorRef } from '../../contracts/identities.ts';
import type { Command } from 'commander';
import { invalidRequest } from '../../errors.ts';
import { REQUEST_STATES } from '../../gates/records.ts';
import type { RequestState } from '../../gates/rules.ts';
import type { CliContext } from '../context.ts';
import { renderApproval, renderApprovals, renderOutcome } from '../render/approvals.ts';
import { withGateway } from '../with-gateway.ts';

const print = (value: unknown) => console.log(JSON.stringify(value, null, 2));

export function register(program: Command, ctx: CliContext): void {
  const approvals = program.command('approvals').description('effects held for a named human authority (RW-003 §6 T3/T4)');
  approvals
    .command('list')
    .description('the approvals queue, newest first')
    .option('--state <state>', REQUEST_STATES.join(' | '))
    .option('--limit <n>', 'at most this many', '100')
    .option('--json', 'print JSON')
    .action(async (opts: { state?: string; limit: string; json?: boolean }) =>
      withGateway(ctx, async (core) => {
        if (opts.state !== undefined && !(REQUEST_STATES as readonly string[]).includes(opts.state)) throw invalidRequest(`--state must be one of ${REQUEST_STATES.join(', ')}`);
        const list = await core.operator.listApprovals({ limit: Number(opts.limit), ...(opts.state ? { state: opts.state as RequestState } : {}) });
        console.log(opts.json ? JSON.stringify(list, null, 2) : renderApprovals(list));
      }),
    );
  approvals
    .command('show <task>')
    .description('the exact effect preview: delegatee and card digest, message digest and rendering, scope, budget, expiry')
    .option('--json', 'print JSON')
    .action(async (task: string, opts: { json?: boolean }) =>
      withGateway(ctx, async (core) => {
        const d = await core.operator.showApproval(task);
        console.log(opts.json ? JSON.stringify(d, null, 2) : renderApproval(d));
      }),
    );
  for (const [name, what] of [
    ['approve', 'approve the exact preview (its digest, from `approvals show`); the serving gateway then forwards it'],
    ['deny', 'deny: the task ends REJECTED and nothing is forwarded'],
  ] as const) {
    approvals
      .command(`${name} <task>`)
      .description(what)
      .requiredOption('--as <operator>', 'the approver acting (a configured approvals.approvers operator)')
      .requiredOption('--preview <digest>', 'the preview digest you decided on (sha256:…)')
      .requiredOption('--note <text>', 'why (recorded in the AuthorityDecision)')
      .option('--json', 'print JSON')
      .action(async (task: string, opts: { as: string; preview: string; note: string; json?: boolean }) =>
        withGateway(ctx, async (core) => {
          const by = operatorActorRef(opts.as);
          const o = name === 'approve' ? await core.operator.approve(task, opts.preview, opts.note, by, { forward: false }) : await core.operator.deny(task, opts.preview, opts.note, by);
          if (opts.json) print(o);
          else console.log(renderOutcome(o));
        }),
      );
  }
  approvals
    .command('review <task>')
    .description('T4: an independent reviewer decides on a verified effect before it is projected succeeded')
    .requiredOption('--as <operator>', 'the reviewer acting (a configured approver with reviewer: true)')
    .requiredOption('--decision <decision>', 'approve | deny')
    .requiredOption('--note <text>', 'why')
    .option('--json', 'print JSON')
    .action(async (task: string, opts: { as: string; decision: string; note: string; json?: boolean }) =>
      withGateway(ctx, async (core) => {
        if (opts.decision !== 'approve' && opts.decision !== 'deny') throw invalidRequest('--decision must be approve or deny');
        const r = await core.operator.review(task, opts.decision, opts.note, operatorActorRef(opts.as));
        if (opts.json) print(r);
        else console.log(`${r.task_id} reviewed: ${opts.decision}; outcome ${r.outcome ?? 'pending'}`);
      }),
    );
}
