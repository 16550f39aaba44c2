/** The `baton` command tree (no side effects: main.ts parses). Each command family lives in ./commands/<noun>.ts. */
import { Command } from 'commander';
import { cliContext } from './context.ts';
import { VERSION } from '../version.ts';
import { addExamples } from './examples.ts';
import { register as registerServe } from './commands/serve.ts';
import { register as registerInit } from './commands/init.ts';
import { register as registerKeys } from './commands/keys.ts';
import { register as registerCards } from './commands/cards.ts';
import { register as registerDelegate } from './commands/delegate.ts';
import { register as registerLedger } from './commands/ledger.ts';
import { register as registerControl } from './commands/control.ts';
import { register as registerReconcile } from './commands/reconcile.ts';
import { register as registerPush } from './commands/push.ts';
import { register as registerOperator } from './commands/operator.ts';
import { register as registerAudit } from './commands/audit.ts';
import { register as registerConfig } from './commands/config.ts';
import { register as registerApprovals } from './commands/approvals.ts';

export function buildProgram(): Command {
  const program = new Command('baton')
    .description('A2A-native delegation gateway')
    .version(VERSION, '-V, --version', 'print the version')
    .option('-c, --config <file>', 'configuration file (YAML or JSON); default baton.config.yaml if present')
    .showHelpAfterError();

  const ctx = cliContext(() => program.opts<{ config?: string }>().config);
  for (const register of [registerServe, registerInit, registerKeys, registerCards, registerDelegate, registerLedger, registerControl, registerReconcile, registerPush, registerOperator, registerAudit, registerConfig, registerApprovals]) register(program, ctx);
  addExamples(program);
  return program;
}

