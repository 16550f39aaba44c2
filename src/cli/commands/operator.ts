/**
 * Operator actions from the command line — the same OperatorService the
 * operator API calls: delegation lifecycle and amendment, breakers,
 * delegation trees, attempt audit trails, checkpoints, reassignment and
 * escalations. The acting actor is the owner (whoever runs the CLI against
 * this store holds its files).
 */
import { ownerActorRef } from '../../contracts/identities.ts';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { SCOPE_KINDS, type ScopeKind } from '../../control/scope.ts';
import { invalidRequest } from '../../errors.ts';
import { BREAKER_TRIGGERS, type BreakerTrigger } from '../../control/breaker.ts';
import { CARD_STATES } from '../../operator/card-states.ts';
import { parseStrictJson } from '../../records/strict-json.ts';
import type { CliContext } from '../context.ts';
import { withGateway } from '../with-gateway.ts';
import { renderAudit, renderEscalations, renderTrees } from '../render/operator.ts';

const print = (value: unknown) => console.log(JSON.stringify(value, null, 2));

function scopeArg(arg: string): { kind: ScopeKind; id: string } {
  const m = /^([a-z]+):(.+)$/.exec(arg);
  if (!m || !(SCOPE_KINDS as readonly string[]).includes(m[1]!) || m[1] === 'attempt') throw invalidRequest('scope must look like KIND:ID (delegation, agent, space, policy or consent)');
  return { kind: m[1] as ScopeKind, id: m[2]! };
}

export function register(program: Command, ctx: CliContext): void {
  const by = () => ownerActorRef(ctx.config().ownerNamespace);
  const control = program.commands.find((c) => c.name() === 'control') ?? program.command('control').description('RW-003 control streams');
  for (const [name, lifecycle, what] of [
    ['suspend', 'suspended', 'suspend a delegation: new effects under it and its descendants are blocked until it is resumed'],
    ['resume', 'active', 'resume a suspended delegation'],
  ] as const) {
    control
      .command(`${name} <delegation>`)
      .description(what)
      .requiredOption('--reason <text>', 'why (recorded in the event)')
      .action(async (delegation: string, opts: { reason: string }) =>
        withGateway(ctx, async (core) => {
          const e = await core.operator.setDelegationLifecycle(delegation, lifecycle, opts.reason, by());
          console.log(`${delegation} ${lifecycle} at position ${e.position} (${e.event_id})`);
        }),
      );
  }
  control
    .command('amend <delegation>')
    .description('narrow a delegation: a new contract revision with the given terms (JSON or @file), recorded on its stream')
    .requiredOption('--terms <json>', 'terms to narrow, e.g. \'{"limits":{"max_tool_calls":3}}\' or @terms.json')
    .requiredOption('--reason <text>', 'why')
    .action(async (delegation: string, opts: { terms: string; reason: string }) =>
      withGateway(ctx, async (core) => {
        const text = opts.terms.startsWith('@') ? readFileSync(opts.terms.slice(1), 'utf8') : opts.terms;
        const { event, contract } = await core.operator.amendDelegation(delegation, parseStrictJson(text), opts.reason, by());
        console.log(`${delegation} amended: revision ${contract.revision_id} at position ${event.position}`);
      }),
    );

  const breaker = program.command('breaker').description('RW-003 §7.3 circuit breakers');
  breaker
    .command('trip <scope>')
    .description('trip a breaker on KIND:ID: blocks new effects, checkpoints running attempts, escalates; the gateway cancels them')
    .requiredOption('--trigger <trigger>', BREAKER_TRIGGERS.join(' | '))
    .requiredOption('--reason <text>', 'why')
    .action(async (arg: string, opts: { trigger: string; reason: string }) =>
      withGateway(ctx, async (core) => {
        const { kind, id } = scopeArg(arg);
        const r = await core.operator.tripBreaker(kind, id, opts.trigger as BreakerTrigger, opts.reason, by());
        console.log(`tripped ${kind}:${id} at position ${r.event.position}; checkpoints: ${r.checkpoints.join(', ') || 'none'}`);
      }),
    );
  breaker
    .command('reset <scope>')
    .description('reset a tripped breaker on KIND:ID')
    .requiredOption('--reason <text>', 'why')
    .action(async (arg: string, opts: { reason: string }) =>
      withGateway(ctx, async (core) => {
        const { kind, id } = scopeArg(arg);
        const e = await core.operator.resetBreaker(kind, id, opts.reason, by());
        console.log(`reset ${kind}:${id} at position ${e.position}`);
      }),
    );

  program
    .command('card-lifecycle <agentCardId> <state>')
    .description(`change a delegatee card's lifecycle on its agent stream (${CARD_STATES.join(' | ')})`)
    .requiredOption('--reason <text>', 'why')
    .action(async (card: string, state: string, opts: { reason: string }) =>
      withGateway(ctx, async (core) => {
        const e = await core.operator.setCardLifecycle(card, state as (typeof CARD_STATES)[number], opts.reason, by());
        console.log(`${card} ${state} at position ${e.position}`);
      }),
    );

  program
    .command('trees')
    .description('delegation trees, newest roots first, with budgets and the outcomes of their attempts')
    .option('--limit <n>', 'at most this many roots', '20')
    .option('--json', 'print JSON')
    .action(async (opts: { limit: string; json?: boolean }) =>
      withGateway(ctx, async (core) => {
        const trees = await core.operator.trees(Number(opts.limit));
        if (opts.json) print(trees);
        else console.log(renderTrees(trees));
      }),
    );

  const attempt = program.command('attempt').description('execution attempts');
  attempt
    .command('audit <id>')
    .description("an attempt's audit trail: revisions, input, decision, reservation, events, receipts, checkpoints, fences")
    .option('--json', 'print every record in full (JSON)')
    .action(async (id: string, opts: { json?: boolean }) =>
      withGateway(ctx, async (core) => {
        const audit = await core.operator.attemptAudit(id);
        if (opts.json) print(audit);
        else console.log(renderAudit(audit));
      }),
    );
  attempt
    .command('checkpoint <id>')
    .description('write a DelegationCheckpoint (RW-003 §7.2) for an attempt')
    .requiredOption('--reason <text>', 'why')
    .action(async (id: string, opts: { reason: string }) =>
      withGateway(ctx, async (core) => {
        const cp = await core.operator.checkpoint(id, opts.reason, by());
        console.log(`${cp.record_id} (sequence ${cp.body.sequence}) next safe action: ${cp.body.next_safe_action}`);
      }),
    );

  program
    .command('reassign <delegation>')
    .description('RW-003 §11.4: revoke, issue the next revision for another delegatee, resume from the checkpoint under fresh fences')
    .requiredOption('--to <delegatee>', 'the delegatee (configured id) that takes over')
    .requiredOption('--reason <text>', 'why')
    .option('--checkpoint <id>', 'resume from this checkpoint (default: the latest, or a new one)')
    .option('--resolve-previous <resolution>', 'first record an operator resolution of the previous effect: not_dispatched or consumed')
    .option('--note <text>', 'with --resolve-previous: the evidence')
    .action(async (delegation: string, opts: { to: string; reason: string; checkpoint?: string; resolvePrevious?: string; note?: string }) =>
      withGateway(ctx, async (core) => {
        if (opts.resolvePrevious !== undefined && opts.resolvePrevious !== 'consumed' && opts.resolvePrevious !== 'not_dispatched') throw invalidRequest('--resolve-previous must be not_dispatched or consumed');
        if (opts.resolvePrevious && !opts.note) throw invalidRequest('--note with the evidence is required with --resolve-previous');
        const r = await core.operator.reassign(
          delegation,
          { to: opts.to, reason: opts.reason, ...(opts.checkpoint ? { checkpoint: opts.checkpoint } : {}), ...(opts.resolvePrevious ? { resolvePrevious: { as: opts.resolvePrevious as 'consumed' | 'not_dispatched', note: opts.note! } } : {}) },
          by(),
        );
        print({ checkpoint: r.checkpoint, revoked_at: r.revoked.position, reassigned_at: r.reassigned.position, contract_revision: r.contract.revision_id, attempt: r.attempt.record_id, state: r.attempt.body.state });
      }),
    );

  const esc = program.command('escalations').description('what Baton handed to the operator').option('--state <state>', 'open | acknowledged').option('--limit <n>', 'at most this many', '100').option('--json', 'print JSON (the escalation records)');
  esc.action(async (opts: { state?: string; limit: string; json?: boolean }) =>
    withGateway(ctx, async (core) => {
      const list = await core.operator.escalationList(opts.state === 'open' || opts.state === 'acknowledged' ? opts.state : undefined, Number(opts.limit));
      console.log(opts.json ? JSON.stringify(list, null, 2) : renderEscalations(list));
    }),
  );
  esc
    .command('ack <id>')
    .description('acknowledge an escalation (a new revision; the original stays)')
    .requiredOption('--note <text>', 'what was done')
    .action(async (id: string, opts: { note: string }) =>
      withGateway(ctx, async (core) => {
        const e = await core.operator.acknowledge(id, opts.note, by());
        console.log(`${e.record_id} ${e.body.state}`);
      }),
    );
}
