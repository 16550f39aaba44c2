/**
 * Contract cost, in this process: mint + sign a child of an issued root and
 * re-verify the two-contract chain (what Baton does per delegated task), and
 * chain verification (signatures, order, attenuation, expiry, heads, the
 * operation check) at chain lengths 1..4. Heads are answered from memory so
 * the figures are the contract work alone; the storage reads Baton adds are
 * in the per-request accounting.
 */
import { dirname } from 'node:path';
import { rmSync } from 'node:fs';
import { evaluateChain, type OperationRequest } from '../src/contracts/admission.ts';
import type { AuthorityHeads } from '../src/contracts/attestation-chain.ts';
import { mintChild } from '../src/contracts/mint.ts';
import type { DelegationContract } from '../src/contracts/model.ts';
import { refOf } from '../src/records/envelope.ts';
import type { RevisionRef } from '../src/records/revision-ref.ts';
import { actors, childRequest, world } from '../test/contracts/fixtures.ts';
import { round } from './lib/stats.ts';

export interface ContractResults {
  mintSignPerSec: number;
  verifyPerSec: number;
  mintSignVerifyPerSec: number;
  mintSignUs: number;
  verifyUs: number;
  verifyByDepth: Array<{ contracts: number; perSec: number; meanUs: number }>;
  notes: string[];
}

const OP: OperationRequest = { operation: 'a2a.SendMessage', resource: { kind: 'project', project_id: 'PRJ-1' }, effect_class: 'read', data_class: 'internal' };

/** Runs `fn` back to back for `ms` after `warm` unmeasured calls; returns calls/s and mean µs. */
async function timed(ms: number, warm: number, fn: () => Promise<unknown>): Promise<{ perSec: number; meanUs: number }> {
  for (let i = 0; i < warm; i++) await fn();
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < ms) {
    await fn();
    n++;
  }
  const elapsed = performance.now() - start;
  return { perSec: round((n * 1000) / elapsed, 0), meanUs: round((elapsed * 1000) / n, 1) };
}

export async function benchContracts(quick: boolean): Promise<ContractResults> {
  const ms = quick ? 700 : 2_500;
  const w = await world();
  const dbDir = dirname(w.store.handle.name);
  try {
    const known = new Map<string, RevisionRef>();
    const note = (c: DelegationContract) => known.set(c.record_id, refOf(c));
    const heads: AuthorityHeads = { head: async (id) => (known.has(id) ? { ref: known.get(id)!, status: 'active' } : undefined) };
    const adm = { ...w.adm, heads };

    const root = (await w.issue()).contract;
    note(root);
    const rootChain = await evaluateChain([root], adm);
    const mint = async () => (await mintChild(rootChain, childRequest('b'), actors.agentA, w.mintDeps)).contract;

    const mintOnly = await timed(ms, 20, mint);
    const sample = await mint();
    note(sample);
    const verifyOnly = await timed(ms, 20, () => evaluateChain([root, sample], adm, OP));
    const both = await timed(ms, 20, async () => {
      const child = await mint();
      note(child);
      await evaluateChain([root, child], adm, OP);
    });

    // Chains of 1..4 contracts: root → b (by agent A) → c (by agent B) → a (by agent C).
    const chain: DelegationContract[] = [root];
    const notes: string[] = [];
    const hops: Array<['a' | 'b' | 'c', typeof actors.agentA]> = [
      ['b', actors.agentA],
      ['c', actors.agentB],
      ['a', actors.agentC],
    ];
    for (const [who, by] of hops) {
      try {
        const parent = await evaluateChain(chain, adm);
        const child = (await mintChild(parent, childRequest(who), by, w.mintDeps)).contract;
        note(child);
        chain.push(child);
      } catch (err) {
        notes.push(`chain stopped at ${chain.length} contracts: ${err instanceof Error ? err.message : String(err)}`);
        break;
      }
    }
    const verifyByDepth: ContractResults['verifyByDepth'] = [];
    for (let n = 1; n <= chain.length; n++) {
      const r = await timed(quick ? 500 : 1_500, 20, () => evaluateChain(chain.slice(0, n), adm, OP));
      verifyByDepth.push({ contracts: n, ...r });
    }
    notes.push('ES256 via jose (WebCrypto); heads answered from memory; one sequential caller.');
    return {
      mintSignPerSec: mintOnly.perSec,
      verifyPerSec: verifyOnly.perSec,
      mintSignVerifyPerSec: both.perSec,
      mintSignUs: mintOnly.meanUs,
      verifyUs: verifyOnly.meanUs,
      verifyByDepth,
      notes,
    };
  } finally {
    await w.store.close();
    rmSync(dbDir, { recursive: true, force: true });
  }
}
