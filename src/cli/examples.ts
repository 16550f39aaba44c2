/**
 * One example per command, shown at the end of its --help. Kept in one table
 * so a command without an example stands out (test/cli/output.test.ts walks
 * every command and fails on a missing one).
 */
import type { Command } from 'commander';

export const EXAMPLES: Readonly<Record<string, string>> = {
  serve: 'baton --config /etc/baton/baton.yaml serve --port 9000',
  init: 'BATON_DATA_DIR=/var/lib/baton baton init',
  'keys list': 'baton keys list --json',
  'keys rotate': 'baton keys rotate --alg EdDSA',
  'keys retire': 'baton keys retire kid_2026-01 --grace 12h',
  'cards sign': 'baton cards sign --out ./well-known',
  'cards verify': 'baton cards verify https://agent.example/.well-known/agent-card.json --jwks agent.jwks.json',
  'delegate issue': "baton delegate issue --preset local-direct --delegatee-card 'card_x@r3#sha256:…' --delegatee-actor 'actor_x@r1#sha256:…' --operator 'op_x@r1#sha256:…' --objective 'Summarise PRJ-1' --resource PRJ-1",
  'delegate show': 'baton delegate show dlg_01J…',
  'ledger show': 'baton ledger show dlg_01J… --json',
  'ledger unresolved': 'baton ledger unresolved --limit 20',
  'control revoke': "baton control revoke dlg_01J… --reason 'credentials leaked'",
  'control tail': 'baton control tail default/delegation:dlg_01J… --after 3',
  'control suspend': "baton control suspend dlg_01J… --reason 'incident 42'",
  'control resume': "baton control resume dlg_01J… --reason 'incident 42 closed'",
  'control amend': 'baton control amend dlg_01J… --terms @terms.json --reason \'narrow to 3 tool calls\'',
  reconcile: 'baton reconcile --limit 50',
  'push deliveries': 'baton push deliveries --status dead --json',
  'push requeue': 'baton push requeue dlv_01J…',
  'breaker trip': "baton breaker trip agent:card_x --trigger operator --reason 'suspicious output'",
  'breaker reset': "baton breaker reset agent:card_x --reason 'verified fixed'",
  'card-lifecycle': "baton card-lifecycle card_x retired --reason 'replaced by card_y'",
  trees: 'baton trees --limit 5            (add --json for machines)',
  'attempt audit': 'baton attempt audit att_01J…     (add --json for the full records)',
  'attempt checkpoint': "baton attempt checkpoint att_01J… --reason 'before reassignment'",
  reassign: "baton reassign dlg_01J… --to backup-agent --reason 'primary down'",
  escalations: 'baton escalations --state open --json',
  'escalations ack': "baton escalations ack esc_01J… --note 'reconciled by hand'",
  'audit verify': 'baton audit verify --json',
  'approvals list': 'baton approvals list --state pending      (add --json for machines)',
  'approvals show': 'baton approvals show att_01J…     (add --json for machines)',
  'approvals approve': "baton approvals approve att_01J… --as alice --preview sha256:… --note 'checked the payment reference'",
  'approvals deny': "baton approvals deny att_01J… --as alice --preview sha256:… --note 'wrong account'",
  'approvals review': "baton approvals review att_01J… --as bob --decision approve --note 'read-back matches the ledger'",
  'config check': 'baton config check --config baton.config.yaml',
};

/** Every runnable command (one with an action), by its full name. */
export function runnableCommands(program: Command): Array<[string, Command]> {
  const out: Array<[string, Command]> = [];
  const walk = (c: Command, prefix: string) => {
    for (const s of c.commands) {
      const name = prefix ? `${prefix} ${s.name()}` : s.name();
      if ((s as unknown as { _actionHandler?: unknown })._actionHandler) out.push([name, s]);
      walk(s, name);
    }
  };
  walk(program, '');
  return out;
}

/** Appends each command's example to its --help. */
export function addExamples(program: Command): void {
  for (const [name, cmd] of runnableCommands(program)) {
    const example = EXAMPLES[name];
    if (example) cmd.addHelpText('after', `\nExample:\n  $ ${example}`);
  }
}
