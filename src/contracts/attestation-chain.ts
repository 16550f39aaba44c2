/**
 * Building, loading and verifying the ordered root → leaf
 * DelegationAttestationChain (RW-003 §8). "An unverifiable or broken chain
 * denies execution": verification rejects wrong order, gaps, cycles, stale
 * revisions, tampering, wrong signers, over-long chains, a child issued
 * before its parent and issue times beyond the clock-skew bound, and
 * re-proves attenuation on every hop.
 */
import { contextInvalidated, invalidRequest, limitExceeded } from '../errors.ts';
import { canonicalText } from '../records/canonical.ts';
import { refOf } from '../records/envelope.ts';
import { sameRevision, type RevisionRef } from '../records/revision-ref.ts';
import type { Clock } from '../records/time.ts';
import type { RecordStore } from '../store/port.ts';
import { attenuationDenied } from './attenuation.ts';
import { linkOf, type DelegationAttestationChain } from './attestation-link.ts';
import { compareHop } from './lineage.ts';
import { parseContract, type DelegationContract } from './model.ts';
import { verifyRecordSignatures, type ResolveSignerKey } from './signing.ts';

/** Absolute bound on chain length, whatever a root claims (root + 16 hops). */
export const MAX_CHAIN_LENGTH = 17;
/** Default tolerated clock skew for issue times in the future. */
export const DEFAULT_MAX_CLOCK_SKEW_MS = 60_000;

/** The current head of one delegation's revisions and its projected lifecycle. */
export interface AuthorityHead {
  ref: RevisionRef;
  status: 'active' | 'suspended' | 'revoked' | 'expired';
}

/** Current authority state; src/control/ projects it from the delegation streams. */
export interface AuthorityHeads {
  head(delegationId: string): Promise<AuthorityHead | undefined>;
}

export interface ChainVerifyDeps {
  clock: Clock;
  resolveSignerKey: ResolveSignerKey;
  maxClockSkewMs?: number;
  /** When given, every contract must still be its delegation's current revision. */
  heads?: AuthorityHeads;
}

declare const verified: unique symbol;
/** A chain that passed {@link verifyChain}; only that function makes one. */
export interface VerifiedChain {
  readonly contracts: readonly DelegationContract[];
  readonly chain: DelegationAttestationChain;
  readonly [verified]: true;
}

/** The attestation chain of already-verified contracts, root first. */
export function buildChain(contracts: readonly DelegationContract[]): DelegationAttestationChain {
  const links = contracts.map(linkOf);
  const first = links[0];
  const last = links[links.length - 1];
  if (!first || !last) throw new TypeError('a chain has at least one contract');
  return { root_ref: first.contract_ref, leaf_ref: last.contract_ref, links };
}

/** Verifies untrusted sealed contracts given root → leaf. */
export async function verifyChain(records: readonly unknown[], deps: ChainVerifyDeps): Promise<VerifiedChain> {
  if (records.length === 0) throw invalidRequest('empty delegation chain');
  if (records.length > MAX_CHAIN_LENGTH) throw limitExceeded('delegation chain is too long', { bound: 'depth', length: records.length });
  const contracts = records.map((r) => parseContract(r));
  checkShape(contracts);
  for (const c of contracts) await verifyRecordSignatures(c, deps.resolveSignerKey);
  checkTimes(contracts, deps);
  checkAncestry(contracts);
  checkHops(contracts);
  if (deps.heads) await checkHeads(contracts, deps.heads);
  return { contracts, chain: buildChain(contracts) } as unknown as VerifiedChain;
}

function checkShape(contracts: readonly DelegationContract[]): void {
  const root = contracts[0]!;
  if (root.body.lineage.kind !== 'root') throw invalidRequest('chain does not start at a root contract', { reason: 'order' });
  if (contracts.length > root.body.lineage.root_max_depth + 1) {
    throw limitExceeded('chain is longer than its root allows', { bound: 'depth', reason: 'too_long' });
  }
  const ids = contracts.map((c) => c.record_id);
  if (new Set(ids).size !== ids.length) throw invalidRequest('delegation chain contains a cycle', { reason: 'cycle' });
  contracts.forEach((child, i) => {
    if (i === 0) return;
    const lineage = child.body.lineage;
    if (lineage.kind !== 'child') throw invalidRequest('a root contract appears inside the chain', { reason: 'order', index: i });
    if (sameRevision(lineage.parent_ref, refOf(contracts[i - 1]!))) return;
    const elsewhere = contracts.some((c) => sameRevision(lineage.parent_ref, refOf(c)));
    throw invalidRequest(elsewhere ? 'delegation chain is out of order' : 'delegation chain has a gap', { reason: elsewhere ? 'order' : 'gap', index: i });
  });
}

function checkTimes(contracts: readonly DelegationContract[], deps: ChainVerifyDeps): void {
  const horizon = deps.clock.now().getTime() + (deps.maxClockSkewMs ?? DEFAULT_MAX_CLOCK_SKEW_MS);
  contracts.forEach((c, i) => {
    const at = Date.parse(c.issued_at);
    if (at > horizon) throw invalidRequest('contract is issued in the future beyond the clock-skew bound', { reason: 'clock_skew', index: i });
    const parent = contracts[i - 1];
    if (parent && at < Date.parse(parent.issued_at)) {
      throw invalidRequest('child contract is issued before its parent', { reason: 'issued_before_parent', index: i });
    }
  });
}

// Each contract signed the links of its ancestors; they must be exactly the chain given.
function checkAncestry(contracts: readonly DelegationContract[]): void {
  contracts.forEach((c, i) => {
    const expected = canonicalText(contracts.slice(0, i).map(linkOf));
    if (canonicalText(c.body.ancestry) !== expected) {
      throw invalidRequest('contract ancestry does not match the chain', { reason: 'ancestry', index: i });
    }
  });
}

function checkHops(contracts: readonly DelegationContract[]): void {
  contracts.forEach((child, i) => {
    const parent = contracts[i - 1];
    if (!parent) return;
    const failures = compareHop({ body: parent.body, ref: refOf(parent) }, child.body);
    if (failures.length > 0) throw attenuationDenied(failures, { index: i });
  });
}

async function checkHeads(contracts: readonly DelegationContract[], heads: AuthorityHeads): Promise<void> {
  for (const [i, c] of contracts.entries()) {
    const head = await heads.head(c.record_id);
    if (!head) throw invalidRequest('delegation is not known to the authority state', { reason: 'unresolved', index: i });
    if (!sameRevision(head.ref, refOf(c))) {
      throw contextInvalidated('delegation revision has been replaced', { reason: 'stale_revision', index: i, delegation_id: c.record_id });
    }
    if (head.status !== 'active') throw contextInvalidated(`delegation is ${head.status}`, { reason: head.status, index: i, delegation_id: c.record_id });
  }
}

/**
 * Loads the chain ending at `leaf` from the store, walking parent refs; every
 * fetched revision must carry the exact digest its child named.
 */
export async function loadChain(store: Pick<RecordStore, 'getRecord'>, leaf: RevisionRef): Promise<unknown[]> {
  const out: unknown[] = [];
  const seen = new Set<string>();
  let next: RevisionRef | undefined = leaf;
  while (next) {
    if (out.length >= MAX_CHAIN_LENGTH) throw limitExceeded('delegation chain is too long', { bound: 'depth' });
    if (seen.has(next.object_id)) throw invalidRequest('delegation chain contains a cycle', { reason: 'cycle' });
    seen.add(next.object_id);
    const record = await store.getRecord(next.object_id, next.revision_id);
    if (!record || record.content_digest !== next.content_digest) {
      throw invalidRequest('delegation chain names a revision that cannot be resolved', { reason: 'unresolved', object_id: next.object_id });
    }
    out.unshift(record);
    const lineage = parseContract(record).body.lineage;
    next = lineage.kind === 'child' ? lineage.parent_ref : undefined;
  }
  return out;
}
