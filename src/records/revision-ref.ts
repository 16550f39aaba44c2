/** RW-003 §2 RevisionRef: the exact {object_id, revision_id, content_digest} triple. */
import { z } from 'zod';
import { Digest } from './digest.ts';
import { Identifier } from './ids.ts';

export const RevisionRef = z.strictObject({
  object_id: Identifier,
  revision_id: Identifier,
  content_digest: Digest,
});
export type RevisionRef = z.infer<typeof RevisionRef>;

/** RW-003 §2 ActorRef: an exact RW-002 Actor revision. */
export const ActorRef = RevisionRef;
export type ActorRef = RevisionRef;

/** True when two refs name the same exact revision (all three parts). */
export function sameRevision(a: RevisionRef, b: RevisionRef): boolean {
  return a.object_id === b.object_id && a.revision_id === b.revision_id && a.content_digest === b.content_digest;
}
