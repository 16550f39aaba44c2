/**
 * Step 3: the authority a new task runs under (ADR-0014 "Decision"): a root
 * from the caller's owner preset, or — for an upstream gateway — the
 * contract chain it presented, verified under its pinned keys; then the
 * attenuated child for the delegatee. Minted here, stored by the admission.
 */
import { digestOf } from '../../records/digest.ts';
import type { JsonValue } from '../../records/strict-json.ts';
import type { PreparedAuthority } from '../authority.ts';
import type { Caller } from '../callers.ts';
import type { ResolvedDelegatee } from '../delegatees.ts';
import { CONTRACT_EXTENSION } from '../present.ts';
import { inputMessage } from '../task-input.ts';
import { chainOf } from '../wire.ts';
import type { PathDeps } from './deps.ts';
import type { Json } from './turn.ts';

export async function bindAuthority(deps: Pick<PathDeps, 'authority' | 'cards'>, caller: Caller, resolved: ResolvedDelegatee, message: Json): Promise<PreparedAuthority> {
  const presented = ((message.metadata as Json | undefined) ?? {})[CONTRACT_EXTENSION] as JsonValue | undefined;
  if (presented !== undefined && caller.upstream) {
    const self = (await deps.cards.get(resolved.config.id)).option;
    return deps.authority.prepareAdopt(caller, chainOf(presented), self, resolved.option, objectiveOf(message));
  }
  return deps.authority.prepareOpen(caller, resolved.option, objectiveOf(message));
}

/**
 * RW-003 §9 minimal data (issue 25 item 16): a signed contract is kept for
 * good, so its objective names the caller's message by digest — the key of
 * its task_input content (gateway/task-input.ts), which retention may purge —
 * never by its text.
 */
export function objectiveOf(message: Json): string {
  return `A2A message ${digestOf(inputMessage(message))}`;
}
