/**
 * Step 3: the authority a new task runs under (ADR-0014 "Decision"): a root
 * from the caller's owner preset, or — for an upstream gateway — the
 * contract chain it presented, verified under its pinned keys; then the
 * attenuated child for the delegatee. Minted here, stored by the admission.
 */
import type { JsonValue } from '../../records/strict-json.ts';
import type { PreparedAuthority } from '../authority.ts';
import type { Caller } from '../callers.ts';
import type { ResolvedDelegatee } from '../delegatees.ts';
import { CONTRACT_EXTENSION } from '../present.ts';
import { chainOf, textOf } from '../wire.ts';
import type { PathDeps } from './deps.ts';
import type { Json } from './turn.ts';

export async function bindAuthority(deps: Pick<PathDeps, 'authority' | 'cards'>, caller: Caller, resolved: ResolvedDelegatee, message: Json): Promise<PreparedAuthority> {
  const presented = ((message.metadata as Json | undefined) ?? {})[CONTRACT_EXTENSION] as JsonValue | undefined;
  if (presented !== undefined && caller.upstream) {
    const self = (await deps.cards.get(resolved.config.id)).option;
    return deps.authority.prepareAdopt(caller, chainOf(presented), self, resolved.option, textOf(message));
  }
  return deps.authority.prepareOpen(caller, resolved.option, textOf(message));
}
