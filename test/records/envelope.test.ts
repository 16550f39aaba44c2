import { describe, expect, it } from 'vitest';
import { ERROR_CODES, BatonError } from '../../src/errors.ts';
import { WIRE_CODES, errorBody } from '../../src/http/error-map.ts';
import canonicalize from 'canonicalize';
import { computeContentDigest, openEnvelope, refOf, sealRecord, withSignatures } from '../../src/records/envelope.ts';
import { checkIdentifier, randomIds, sequentialIds } from '../../src/records/ids.ts';
import { recordTypeOf, schemaRefFor } from '../../src/records/schema-ref.ts';
import { manualClock } from '../../src/records/time.ts';
import { freezeCanonical, isCanonicalFrozen } from '../../src/records/canonical.ts';
import { digestOf, sha256Digest } from '../../src/records/digest.ts';
import { expectCode } from '../helpers/errors.ts';

const actor = { object_id: 'actor_owner', revision_id: 'rev_1', content_digest: `sha256:${'a'.repeat(64)}` };
const deps = { ids: sequentialIds('env'), clock: manualClock('2026-12-01T10:00:00.000Z') };

describe('RW-003 §3 envelope', () => {
  it('seals every required field and a digest over everything but digest and signatures', () => {
    const rec = sealRecord({ type: 'grant', body: { scope: ['read'] }, issuedBy: actor, lifecycle: 'active' }, deps);
    expect(rec).toMatchObject({
      schema_ref: 'rw-agent-delegation/0.1.1#grant',
      issued_by_actor_ref: actor,
      issued_at: '2026-12-01T10:00:00.000Z',
      lifecycle_assertion: 'active',
    });
    expect(rec.record_id).toMatch(/^grant_/);
    expect(rec.prior_revision_ref).toBeUndefined();
    expect(rec.content_digest).toBe(computeContentDigest(rec));
    expect(openEnvelope(structuredClone(rec))).toStrictEqual(rec);
  });

  it('sealed is frozen, but what the caller passed in stays its own (a config binding may still change)', () => {
    const binding = { namespace: 'ns', config_revision: 'r1' };
    const body = { owner: binding, scope: ['read'] };
    const rec = sealRecord({ type: 'grant', body, issuedBy: actor, lifecycle: 'active' }, deps);
    expect(Object.isFrozen(rec) && Object.isFrozen(rec.body)).toBe(true);
    expect(Object.isFrozen(binding) || Object.isFrozen(body) || Object.isFrozen(body.scope)).toBe(false);
    binding.config_revision = 'r2';
    expect(rec.body.owner.config_revision).toBe('r1');
    expect(rec.content_digest).toBe(computeContentDigest(rec));
  });

  it('a signed copy keeps the digest, leaves the sealed record as it was, and its digest covers no signature', () => {
    const rec = sealRecord({ type: 'grant', body: { scope: ['read'] }, issuedBy: actor, lifecycle: 'active' }, deps);
    const sig = { protected: 'eyJhbGciOiJFUzI1NiJ9', signature: 'c2ln' };
    const signed = withSignatures(rec, [sig]);
    expect(signed).toStrictEqual({ ...rec, signatures: [sig] });
    expect(isCanonicalFrozen(signed)).toBe(true);
    expect('signatures' in rec).toBe(false);
    expect(computeContentDigest(signed)).toBe(rec.content_digest);
    expect(openEnvelope(structuredClone(signed)).content_digest).toBe(rec.content_digest);
    // The digest text is the record's own bytes, written once (issue #15), and equal to the reference.
    const { content_digest: _d, ...unsigned } = rec;
    expect(rec.content_digest).toBe(sha256Digest(canonicalize(unsigned)!));
  });

  it('a later revision must name its prior, and keeps the record id', () => {
    const first = sealRecord({ type: 'grant', body: { n: 1 }, issuedBy: actor, lifecycle: 'active' }, deps);
    expectCode(() => sealRecord({ type: 'grant', body: { n: 2 }, issuedBy: actor, lifecycle: 'active', recordId: first.record_id }, deps), 'invalid_request');
    const second = sealRecord({ type: 'grant', body: { n: 2 }, issuedBy: actor, lifecycle: 'active', recordId: first.record_id, prior: refOf(first) }, deps);
    expect(second.record_id).toBe(first.record_id);
    expect(second.revision_id).not.toBe(first.revision_id);
    expect(second.prior_revision_ref).toStrictEqual(refOf(first));
  });

  it('detects tampering with any covered field', () => {
    const rec = sealRecord({ type: 'grant', body: { scope: ['read'] }, issuedBy: actor, lifecycle: 'active' }, deps);
    type Mutable = Record<string, unknown> & { body: Record<string, unknown> };
    for (const mutate of [
      (r: Mutable) => (r.body.scope = ['write']),
      (r: Mutable) => (r.issued_at = '2026-12-01T10:00:01.000Z'),
      (r: Mutable) => (r.lifecycle_assertion = 'revoked'),
      (r: Mutable) => (r.extra = true),
    ]) {
      const copy = structuredClone(rec) as unknown as Mutable;
      mutate(copy);
      expectCode(() => openEnvelope(copy), 'invalid_request');
    }
  });

  it('never serves a digest computed before the record was frozen', () => {
    const rec = structuredClone(sealRecord({ type: 'grant', body: { n: 1 }, issuedBy: actor, lifecycle: 'active' }, deps)) as Record<string, unknown> & { body: { n: number } };
    const before = computeContentDigest(rec);
    rec.body.n = 2;
    freezeCanonical(rec);
    expect(computeContentDigest(rec)).not.toBe(before);
    const { content_digest: _d, ...rest } = rec;
    expect(computeContentDigest(rec)).toBe(digestOf(rest));
  });

  it('retains unknown fields (RW-003 §3) and covers them by the digest', () => {
    const rec = sealRecord({ type: 'grant', body: { scope: ['read'] }, issuedBy: actor, lifecycle: 'active' }, deps) as Record<string, unknown>;
    const withExtra: Record<string, unknown> = { ...rec, x_vendor: { note: 'kept' } };
    withExtra.content_digest = computeContentDigest(withExtra);
    expect(openEnvelope(withExtra)).toHaveProperty('x_vendor', { note: 'kept' });
  });

  it('fails closed on an unsupported schema version', () => {
    const rec = sealRecord({ type: 'grant', body: {}, issuedBy: actor, lifecycle: 'active' }, deps) as Record<string, unknown>;
    const future: Record<string, unknown> = { ...rec, schema_ref: 'rw-agent-delegation/0.2.0#grant' };
    future.content_digest = computeContentDigest(future);
    expectCode(() => openEnvelope(future), 'unsupported');
    expectCode(() => recordTypeOf('rw-agent-delegation/0.1.1#nonsense'), 'unsupported');
    expect(recordTypeOf(schemaRefFor('delegation_contract'))).toBe('delegation_contract');
  });

  it('rejects a malformed envelope with invalid_request', () => {
    expectCode(() => openEnvelope({ record_id: 'x' }), 'invalid_request');
    expectCode(() => openEnvelope(null), 'invalid_request');
  });

  // The refusals reach callers: each names its fault (and the malformed one, where, at most 20 issues).
  it('names each refusal', () => {
    expect(expectCode(() => sealRecord({ type: 'grant', body: {}, issuedBy: actor, lifecycle: 'active', recordId: 'grant_x' }, deps), 'invalid_request').message).toBe(
      'a later revision must name its prior revision',
    );
    const rec = sealRecord({ type: 'grant', body: { n: 1 }, issuedBy: actor, lifecycle: 'active' }, deps);
    const tampered = expectCode(() => openEnvelope({ ...rec, body: { n: 2 } }), 'invalid_request');
    expect([tampered.message, tampered.details]).toStrictEqual(['record content digest does not match its bytes', { record_id: rec.record_id }]);
    const malformed = expectCode(() => openEnvelope({ ...rec, issued_by_actor_ref: { object_id: 7 } }), 'invalid_request');
    expect(malformed.message).toBe('record envelope is malformed');
    expect(malformed.details.issues).toContainEqual(expect.objectContaining({ path: 'issued_by_actor_ref.object_id', message: expect.any(String) }));
    // Eight empty signatures and six wrong fields: 22 issues, 20 reported.
    const wrong = { record_id: 1, revision_id: 1, issued_at: 1, lifecycle_assertion: 1, body: 1, issued_by_actor_ref: 1 };
    const many = expectCode(() => openEnvelope({ ...rec, ...wrong, signatures: Array.from({ length: 8 }, () => ({})) }), 'invalid_request');
    expect(many.details.issues).toHaveLength(20);
  });
});

describe('identifiers', () => {
  it('random ids are opaque and never repeat', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 10_000; i++) seen.add(randomIds.next('dlg'));
    expect(seen.size).toBe(10_000);
    expect([...seen][0]).toMatch(/^dlg_[0-9a-v]{26}$/);
    expect(() => randomIds.next('Bad-Prefix')).toThrow(TypeError);
  });

  it('rejects controls, lone surrogates, empty and oversize identifiers', () => {
    expect(checkIdentifier('agent:émile/1')).toBe('agent:émile/1');
    expectCode(() => checkIdentifier(''), 'invalid_request');
    expectCode(() => checkIdentifier('a\u0000b'), 'invalid_request');
    expectCode(() => checkIdentifier('a\nb'), 'invalid_request');
    expectCode(() => checkIdentifier('a\u0085b'), 'invalid_request');
    expectCode(() => checkIdentifier('a\u2028b'), 'invalid_request');
    expectCode(() => checkIdentifier('a\ud800'), 'invalid_request');
    expect(checkIdentifier('x'.repeat(2048))).toHaveLength(2048);
    expectCode(() => checkIdentifier('x'.repeat(2049)), 'limit_exceeded');
    expectCode(() => checkIdentifier('é'.repeat(1025)), 'limit_exceeded');
  });
});

describe('error vocabulary', () => {
  it('has exactly the ADR-0014 codes, each with one wire mapping', () => {
    expect([...ERROR_CODES].sort()).toEqual(
      ['authentication_required', 'context_invalidated', 'deny', 'interaction_required', 'invalid_request', 'limit_exceeded', 'storage_error', 'unavailable', 'unsupported'],
    );
    for (const code of ERROR_CODES) expect(WIRE_CODES[code]).toBeDefined();
    expect(WIRE_CODES.deny.http).toBe(403);
    expect(WIRE_CODES.authentication_required.http).toBe(401);
    expect(WIRE_CODES.unavailable.http).toBe(503);
  });

  it('never carries the cause onto the wire', () => {
    const err = new BatonError('deny', 'not allowed', { dimension: 'spend' }, { cause: new Error('secret-token-123') });
    expect(errorBody(err)).toEqual({ error: { code: 'deny', message: 'not allowed', details: { dimension: 'spend' } } });
    expect(JSON.stringify(errorBody(err))).not.toContain('secret-token-123');
    expect(JSON.stringify(err)).not.toContain('secret-token-123');
  });
});
