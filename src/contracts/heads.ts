/**
 * A default {@link AuthorityHeads} over the record store: the newest stored
 * revision of a delegation is its head and its lifecycle assertion its state.
 * RW-003 §3 says the projected lifecycle is authoritative, so once the
 * delegation control streams exist (src/control/) they should supply heads
 * instead; this adapter is for the CLI and for deployments before then.
 */
import { refOf } from '../records/envelope.ts';
import type { RecordStore } from '../store/port.ts';
import type { AuthorityHead, AuthorityHeads } from './attestation-chain.ts';

const STATUS: Record<string, AuthorityHead['status']> = { revoked: 'revoked', suspended: 'suspended', expired: 'expired' };

export function storeHeads(store: Pick<RecordStore, 'getRecord'>): AuthorityHeads {
  return {
    async head(delegationId) {
      const record = await store.getRecord(delegationId);
      if (!record) return undefined;
      return { ref: refOf(record), status: STATUS[record.lifecycle_assertion] ?? 'active' };
    },
  };
}
