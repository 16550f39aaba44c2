/**
 * Core-derived identities for the local baseline (ADR-0014: "An
 * owner-approved local launch can identify a local actor without asserting
 * an organizational identity"). These refs are derived, never read from a
 * request, so a caller cannot choose who it is.
 */
import { digestOf } from '../records/digest.ts';
import type { RevisionRef } from '../records/revision-ref.ts';
import type { TrustedCaller } from './issuance.ts';
import type { OwnerBinding } from './model.ts';

/**
 * The gateway's own issuer Actor. Stable across key rotation: every key in
 * Baton's keyring signs for this actor, and key lookup is by kid.
 */
export function gatewayActorRef(owner: Pick<OwnerBinding, 'namespace'>): RevisionRef {
  return { object_id: 'actor_baton', revision_id: 'local', content_digest: digestOf({ actor: 'baton', owner: owner.namespace }) };
}

/**
 * Actors the owner's configuration vouches for (RW-003 §3 Actor): the owner
 * behind presets and revocations, each configured caller, each operator. The
 * configuration is their authority, so their revision is `rev_config`.
 */
function configuredActorRef(kind: 'owner' | 'caller' | 'operator', id: string): RevisionRef {
  return { object_id: `actor_${kind}_${id}`, revision_id: 'rev_config', content_digest: digestOf({ [kind]: id }) };
}
export const ownerActorRef = (namespace: string): RevisionRef => configuredActorRef('owner', namespace);
export const callerActorRef = (id: string): RevisionRef => configuredActorRef('caller', id);
export const operatorActorRef = (id: string): RevisionRef => configuredActorRef('operator', id);

/** The explicitly local caller of a direct CLI invocation (OS account name only). */
export function localCaller(user: string, owner: Pick<OwnerBinding, 'namespace'>): TrustedCaller {
  const id = user.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64) || 'unknown';
  return {
    actor: { object_id: `actor_local_${id}`, revision_id: 'local', content_digest: digestOf({ actor: 'local', user: id, owner: owner.namespace }) },
    subject: { subject_id: `local:${id}`, kind: 'local' },
  };
}

/** Parses the `object_id@revision_id#sha256:<hex>` text form of a RevisionRef (CLI input). */
export function parseRevisionRefText(text: string): RevisionRef | undefined {
  const m = /^([^@#\s]+)@([^@#\s]+)#(sha256:[0-9a-f]{64})$/.exec(text);
  return m ? { object_id: m[1]!, revision_id: m[2]!, content_digest: m[3]! } : undefined;
}
