/**
 * The gateway's identity across nodes. Several nodes may serve one gateway
 * from one store, but only as one identity: the same own-card actor, the
 * same public URL and the same signing keys. A node presenting another URL
 * or its own keys would re-announce Baton's card on its agent stream (moving
 * that head, invalidating every fence taken on it, cancelling running work
 * on the other nodes) and sign contracts the others' callers cannot verify.
 * Pure: the store applies {@link decideIdentity} atomically at start.
 */
import { z } from 'zod';
import { storageError } from '../errors.ts';

export const GatewayIdentity = z.strictObject({
  /** The own card's agent actor (object id): one identity row per gateway sharing a store. */
  gateway_id: z.string().min(1),
  /** The configured publicUrl, or null for a single node that derives it from its listen address. */
  public_url: z.string().nullable(),
  /** Every signing key id the node holds (retired ones included). */
  kids: z.array(z.string()).min(1),
});
export type GatewayIdentity = z.infer<typeof GatewayIdentity>;

/**
 * The identity to store when `mine` starts against a store holding `stored`;
 * throws storage_error when the store belongs to another gateway identity.
 * Keys may only grow (a rotation adds one); a node that lacks one of the
 * cluster's keys does not share its key directory or key source.
 */
export function decideIdentity(stored: GatewayIdentity | undefined, mine: GatewayIdentity): GatewayIdentity {
  if (stored === undefined) return mine;
  const differs: string[] = [];
  if (stored.public_url !== mine.public_url) differs.push('public_url');
  const missing = stored.kids.filter((k) => !mine.kids.includes(k));
  if (missing.length > 0) differs.push('signing_keys');
  if (differs.length > 0) {
    throw storageError('the store belongs to another identity of this gateway: every node must present the same publicUrl and signing keys', {
      reason: 'identity_mismatch',
      gateway_id: stored.gateway_id,
      differs,
      stored_public_url: stored.public_url,
      missing_kids: missing,
    });
  }
  return { ...{}, ...mine, kids: [...new Set([...stored.kids, ...mine.kids])].sort() };
}
