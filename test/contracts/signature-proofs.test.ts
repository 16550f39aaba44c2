/**
 * Issue #24: a delegated call verified its freshly signed contracts three
 * times, encoding and hashing each signing input every time. A deep-frozen
 * record remembers, per signature, the key it was proven (or made) with
 * (src/records/verified-signatures.ts); counted here, never timed. The issuer
 * must still hold the key on every check, and anything but the very record
 * object and key material takes the full path.
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DelegationContract } from '../../src/contracts/model.ts';
import { sealContract, verifyRecordSignatures } from '../../src/contracts/signing.ts';
import { freezeCanonical } from '../../src/records/canonical.ts';
import { refOf } from '../../src/records/envelope.ts';
import { forgetVerifiedSignatures, verifiedSignatureStats } from '../../src/records/verified-signatures.ts';
import { expectCodeAsync } from '../helpers/errors.ts';
import { actors, childRequest, world } from './fixtures.ts';

/** sha256 digests computed in this worker while counting: every createHash(...).digest() and every one-shot hash(). */
const hashProto = Object.getPrototypeOf(createHash('sha256')) as { digest: (...a: unknown[]) => unknown };
const realDigest = hashProto.digest;
// The one-shot form is a module export: replaced on node:crypto itself, then synced into every ESM import of it.
const nodeCrypto = createRequire(import.meta.url)('node:crypto') as { hash: (...a: unknown[]) => unknown };
const realHash = nodeCrypto.hash;
let digests = 0;
beforeEach(() => {
  forgetVerifiedSignatures();
  digests = 0;
  hashProto.digest = function (this: unknown, ...a: unknown[]) {
    digests++;
    return realDigest.apply(this, a);
  };
  nodeCrypto.hash = (...a: unknown[]) => (digests++, realHash(...a));
  syncBuiltinESMExports();
});
afterEach(() => {
  hashProto.digest = realDigest;
  nodeCrypto.hash = realHash;
  syncBuiltinESMExports();
});

describe('signature proofs remembered on a sealed record', () => {
  it('a contract Baton just signed verifies with no ECDSA and no sha256, however often the chain is checked', async () => {
    const w = await world();
    const root = (await w.issue()).contract;
    const child = (await w.mint(refOf(root), childRequest('b'), actors.agentA)).contract;
    const before = { ...verifiedSignatureStats(), digests };
    for (let i = 0; i < 3; i++) for (const c of [root, child]) await verifyRecordSignatures(c, w.resolveSignerKey);
    const after = verifiedSignatureStats();
    expect(digests - before.digests).toBe(0);
    expect({ hits: after.hits - before.hits, misses: after.misses - before.misses, recordHits: after.recordHits - before.recordHits }).toStrictEqual({ hits: 0, misses: 0, recordHits: 6 });
  });

  it('sealing and signing a contract hashes once: its content digest (the signing input is not hashed again for the byte-keyed cache)', async () => {
    const w = await world();
    const root = (await w.issue()).contract;
    await verifyRecordSignatures(root, w.resolveSignerKey); // the public key's thumbprint, once per key
    const before = { ...verifiedSignatureStats(), digests };
    const again = await sealContract({ body: { ...root.body, delegation_id: 'dlg_again' } }, w.mintDeps);
    expect(digests - before.digests).toBe(1);
    expect(verifiedSignatureStats().size).toBe(before.size);
    await verifyRecordSignatures(again, w.resolveSignerKey);
    expect(verifiedSignatureStats()).toMatchObject({ hits: before.hits, misses: before.misses, recordHits: before.recordHits + 1 });
    expect(digests - before.digests).toBe(1);
  });

  it('an equal copy that is another object (decoded, parsed) is verified once, then answered by its own proof', async () => {
    const w = await world();
    const root = (await w.issue()).contract;
    const copy = freezeCanonical(structuredClone(root));
    // Sealing remembered the proof on the record only, so the copy is verified by ECDSA once.
    await verifyRecordSignatures(copy, w.resolveSignerKey);
    await verifyRecordSignatures(copy, w.resolveSignerKey);
    expect(verifiedSignatureStats()).toMatchObject({ hits: 0, misses: 1, recordHits: 1 });
    // Not frozen: never remembered by object, every check goes to the bytes (proven by the copy's check).
    const loose = structuredClone(root);
    await verifyRecordSignatures(loose, w.resolveSignerKey);
    await verifyRecordSignatures(loose, w.resolveSignerKey);
    expect(verifiedSignatureStats()).toMatchObject({ hits: 2, misses: 1, recordHits: 1 });
    // …so a change made after it verified is seen.
    (loose as { issued_at: string }).issued_at = '2026-10-01T12:00:00.001Z';
    expect((await expectCodeAsync(verifyRecordSignatures(loose, w.resolveSignerKey), 'invalid_request')).message).toBe('signature does not verify');
  });

  it('another key under the same kid, or a key the issuer no longer holds, is not answered by the remembered proof', async () => {
    const w = await world();
    const root = (await w.issue()).contract;
    await verifyRecordSignatures(root, w.resolveSignerKey);
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
    expect((await expectCodeAsync(verifyRecordSignatures(root, async () => other), 'invalid_request')).message).toBe('signature does not verify');
    expect((await expectCodeAsync(verifyRecordSignatures(root, async () => undefined), 'invalid_request')).message).toBe('record is signed by a key its issuer does not hold');
    await verifyRecordSignatures(root, w.resolveSignerKey);
  });

  it('a tampered copy of a proven record is refused', async () => {
    const w = await world();
    const root = (await w.issue()).contract;
    await verifyRecordSignatures(root, w.resolveSignerKey);
    const tampered = freezeCanonical({ ...structuredClone(root), issued_at: '2026-10-01T12:00:00.001Z' }) as DelegationContract;
    expect((await expectCodeAsync(verifyRecordSignatures(tampered, w.resolveSignerKey), 'invalid_request')).message).toBe('signature does not verify');
    const swapped = freezeCanonical({ ...structuredClone(root), signatures: [{ ...root.signatures![0]!, signature: root.signatures![0]!.signature.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) }] });
    await expectCodeAsync(verifyRecordSignatures(swapped, w.resolveSignerKey), 'invalid_request');
  });
});
