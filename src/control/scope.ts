/**
 * RW-003 §1.2 control-plane streams. Each control event lives on exactly one
 * stream, addressed in the reserved projection scope
 * project_id = rw-control:<space_id>, branch_id = <scope_kind>:<scope_id>.
 * control_scope_ref repeats the semantic triple so nothing ever has to parse
 * an identifier to learn its scope.
 */
import { z } from 'zod';
import { Identifier } from '../records/ids.ts';

export const SCOPE_KINDS = ['space', 'agent', 'delegation', 'consent', 'policy', 'attempt'] as const;
export type ScopeKind = (typeof SCOPE_KINDS)[number];

/** Authority scopes project state and can be fenced; attempt streams are audit-only. */
export const AUTHORITY_KINDS: readonly ScopeKind[] = ['space', 'agent', 'delegation', 'consent', 'policy'];

export const ControlScopeRef = z.strictObject({
  space_id: Identifier,
  scope_kind: z.enum(SCOPE_KINDS),
  scope_id: Identifier,
});
export type ControlScopeRef = z.infer<typeof ControlScopeRef>;

/** The exact stream address of one scope. */
export interface StreamId {
  project_id: string;
  branch_id: string;
}

export function streamOf(scope: ControlScopeRef): StreamId {
  return { project_id: `rw-control:${scope.space_id}`, branch_id: `${scope.scope_kind}:${scope.scope_id}` };
}

export function isAuthorityScope(scope: ControlScopeRef): boolean {
  return scope.scope_kind !== 'attempt';
}

/** Stable key for maps and sorting; positions are only ever compared under the same key. */
export function streamKey(s: StreamId): string {
  return `${s.project_id}\u0000${s.branch_id}`;
}

/** Total order on streams, used to lock heads in the same order everywhere (no deadlocks). */
export function compareStreams(a: StreamId, b: StreamId): number {
  return a.project_id < b.project_id ? -1 : a.project_id > b.project_id ? 1 : a.branch_id < b.branch_id ? -1 : a.branch_id > b.branch_id ? 1 : 0;
}
