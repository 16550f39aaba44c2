/**
 * The control scopes a contract fences (RW-003 §1.2, §5.1 control_scopes):
 * whatever its source or parent fenced, plus its own delegation stream and
 * the executing agent's stream. Because a child inherits the parent's list,
 * every descendant effect fences every ancestor delegation stream, which is
 * what makes a parent revocation stop all descendants (RW-003 §8).
 */
import { canonicalText } from '../records/canonical.ts';
import type { ControlScopeRef } from './obligations.ts';

/** `inherited` plus this contract's delegation and agent scopes, without duplicates. */
export function ownScopes(spaceId: string, delegationId: string, cardObjectId: string, inherited: readonly ControlScopeRef[]): ControlScopeRef[] {
  const mine: ControlScopeRef[] = [
    { space_id: spaceId, scope_kind: 'delegation', scope_id: delegationId },
    { space_id: spaceId, scope_kind: 'agent', scope_id: cardObjectId },
  ];
  const seen = new Set(inherited.map((s) => canonicalText(s)));
  return [...inherited, ...mine.filter((s) => !seen.has(canonicalText(s)))];
}
