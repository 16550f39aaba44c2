/** `baton control tail SPACE/KIND:ID`: read one control stream. */
import { ownerActorRef } from '../../contracts/identities.ts';
import type { Command } from 'commander';
import { SCOPE_KINDS, streamOf, type ScopeKind } from '../../control/scope.ts';
import { invalidRequest } from '../../errors.ts';
import { withStore } from '../with-store.ts';
import type { CliContext } from '../context.ts';

/** Parses `space/kind:id`; the CLI is the one place a human types a stream name. */
export function parseStreamArg(arg: string): { space_id: string; scope_kind: ScopeKind; scope_id: string } {
  const m = /^([^/]+)\/([a-z]+):(.+)$/.exec(arg);
  if (!m || !(SCOPE_KINDS as readonly string[]).includes(m[2]!)) {
    throw invalidRequest(`stream must look like SPACE/KIND:ID with KIND one of ${SCOPE_KINDS.join(', ')}`);
  }
  return { space_id: m[1]!, scope_kind: m[2] as ScopeKind, scope_id: m[3]! };
}

export function register(program: Command, ctx: CliContext): void {
  const control = program.command('control').description('RW-003 control streams');
  control
    .command('revoke <delegation>')
    .description('revoke a delegation: blocks new effects under it and every descendant; running tasks are cancelled')
    .requiredOption('--reason <text>', 'why (recorded in the event)')
    .action(async (delegation: string, opts: { reason: string }) => {
      const config = ctx.config();
      await withStore(ctx, async (store) => {
        // An imported delegation's stream is in its upstream owner's space (its ledger node says which).
        const space_id = (await store.ledger.node(delegation))?.space_id ?? config.spaceId;
        const scope = { space_id, scope_kind: 'delegation' as const, scope_id: delegation };
        if (!(await store.control.head(scope))) throw invalidRequest('no such delegation in this space', { delegation });
        const event = await store.control.appendControl({
          event_type: 'rw003.delegation.revoked',
          control_scope_ref: scope,
          actor_ref: ownerActorRef(config.ownerNamespace),
          payload: { reason: opts.reason.slice(0, 2048) },
        });
        console.log(`revoked ${delegation} at position ${event.position} (${event.event_id})`);
      });
    });
  control
    .command('tail <stream>')
    .description('events of one stream, e.g. `baton control tail space1/delegation:dlg_abc`')
    .option('--after <position>', 'only events after this position', '0')
    .option('--limit <n>', 'at most this many events', '100')
    .option('--json', 'print the events as JSON lines')
    .action(async (arg: string, opts: { after: string; limit: string; json?: boolean }) => {
      const scope = parseStreamArg(arg);
      await withStore(ctx, async (store) => {
        const head = await store.control.head(scope);
        const events = await store.control.readStream(streamOf(scope), { after: Number(opts.after), limit: Number(opts.limit) });
        if (opts.json) {
          for (const e of events) console.log(JSON.stringify(e));
          return;
        }
        console.log(`${streamOf(scope).project_id} ${streamOf(scope).branch_id}  head ${head?.position ?? 0}  state ${head?.state ?? 'unresolved'}`);
        for (const e of events) {
          console.log(`${String(e.position).padStart(6)}  ${e.recorded_at}  ${e.event_type.padEnd(36)}  ${e.event_digest.slice(0, 19)}…${e.outcome ? `  ${e.outcome}` : ''}`);
        }
      });
    });
}
