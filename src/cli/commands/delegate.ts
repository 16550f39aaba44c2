/**
 * `baton delegate issue --preset …` issues a signed root Delegation Contract
 * from an owner preset for this direct invocation (ADR-0014 local baseline)
 * and stores it; `baton delegate show ID` prints its verified root → leaf
 * attestation chain as a tree. The CLI operator is the owner here, which is
 * why `--preset` may select the preset; an agent-facing entry point never
 * lets the caller pick one.
 */
import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import type { IssueOptions } from './delegate-run.ts';

const collect = (v: string, acc: string[]): string[] => [...acc, v];

export function register(program: Command, ctx: CliContext): void {
  const delegate = program.command('delegate').description('Delegation Contracts: trusted issuance and attestation chains');

  delegate
    .command('issue')
    .description('issue a signed root contract from an owner preset ("local-direct" or a preset JSON file) and store it')
    .requiredOption('--preset <name|file>', 'local-direct, or a preset file (machine presets need the gateway coordinator)')
    .requiredOption('--delegatee-card <ref>', 'exact Agent Card revision: object_id@revision_id#sha256:<hex>')
    .requiredOption('--delegatee-actor <ref>', 'exact agent Actor revision')
    .requiredOption('--operator <ref>', 'exact accountable operator revision')
    .requiredOption('--objective <text>', 'one verifiable outcome, for people (no policy effect)')
    .option('--objective-type <type>', 'machine-readable objective type', 'a2a.task')
    .option('--operation <op>', 'registered operation (repeatable; local-direct default a2a.SendMessage, a2a.GetTask)', collect, [])
    .option('--resource <selector>', 'project, project/object or project/object@revision (repeatable; required for local-direct)', collect, [])
    .option('--data-class <class>', 'data class (repeatable; default public)', collect, [])
    .option('--input <ref>', 'exact input revision (repeatable)', collect, [])
    .option('--purpose <text>', 'audit/display text; never evaluated')
    .option('--json', 'print the whole signed contract')
    .action(async (o: IssueOptions) => (await import('./delegate-run.ts')).issue(ctx.config(), o));

  delegate
    .command('show <id>')
    .description('print the verified root → leaf attestation chain of a delegation as a tree')
    .option('--revision <id>', 'a specific revision instead of the newest')
    .action(async (id: string, o: { revision?: string }) => (await import('./delegate-run.ts')).show(ctx.config(), id, o.revision));
}
