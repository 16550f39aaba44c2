/**
 * A child delegation as the operator amends or reassigns it: its contract,
 * its ancestors re-verified now, what its ledger node has left, and the
 * signer Baton mints the next revision with (RW-003 §5, §11.4).
 */
import { loadChain } from '../contracts/attestation-chain.ts';
import { parseContract, type DelegationContract } from '../contracts/model.ts';
import { defaultScopeRegistry } from '../contracts/scope.ts';
import { invalidRequest } from '../errors.ts';
import { findNode } from './checkpoints.ts';
import type { OperatorDeps } from './deps.ts';

export class Lineage {
  constructor(private readonly deps: Pick<OperatorDeps, 'store' | 'authority' | 'keyring' | 'clock' | 'ids' | 'gatewayActor'>) {}

  /** The delegation's current contract; only a child can be amended or reassigned. */
  async contract(id: string): Promise<DelegationContract> {
    const record = await this.deps.store.getRecord(id);
    if (!record) throw invalidRequest('no such delegation', { delegation: id.slice(0, 128) });
    const c = parseContract(record);
    if (c.body.lineage.kind !== 'child') throw invalidRequest('only a child delegation can be amended or reassigned; revoke a root instead');
    return c;
  }

  /** The contract's ancestors, re-verified now (their heads must still permit effects). */
  async parentChain(c: DelegationContract) {
    if (c.body.lineage.kind !== 'child') throw new TypeError('root has no parent');
    const records = await loadChain(this.deps.store, c.body.lineage.parent_ref);
    return this.deps.authority.evaluate(records.map((r) => parseContract(r)));
  }

  /** What a delegation's ledger node has left per dimension: ceiling minus consumed and reserved. */
  async remaining(rootId: string, nodeId: string): Promise<Map<string, bigint>> {
    const node = findNode(await this.deps.store.ledger.tree(rootId), nodeId);
    return new Map((node?.balances ?? []).map((b) => [b.dimension, BigInt(b.ceiling) - BigInt(b.consumed) - BigInt(b.reserved)]));
  }

  mintDeps() {
    const k = this.deps.keyring.current('ES256');
    return { clock: this.deps.clock, ids: this.deps.ids, signer: { actorRef: this.deps.gatewayActor, kid: k.kid, alg: 'ES256' as const, key: k.privateKey }, registry: defaultScopeRegistry };
  }
}
