/**
 * The parts of a sealed record (issue #27 mutants): every lifecycle assertion
 * and id prefix, the exact schema_ref of every record type, the Digest form,
 * digests of frozen and unfrozen values, and the checks decodeRecord makes on
 * stored bytes (storage_error, never a record someone acts on).
 */
import { describe, expect, it } from 'vitest';
import { canonicalText, freezeCanonical } from '../../src/records/canonical.ts';
import { decodeRecord, rememberStored } from '../../src/records/decode.ts';
import { Digest, digestOf, sha256Digest } from '../../src/records/digest.ts';
import { LifecycleAssertion, sealRecord } from '../../src/records/envelope.ts';
import { sequentialIds } from '../../src/records/ids.ts';
import { BATON_SCHEMA_FAMILY, RECORD_TYPES, recordTypeOf, SCHEMA_FAMILY, schemaRefFor } from '../../src/records/schema-ref.ts';
import { manualClock } from '../../src/records/time.ts';
import { expectCode } from '../helpers/errors.ts';

const actor = { object_id: 'actor_owner', revision_id: 'rev_1', content_digest: `sha256:${'a'.repeat(64)}` };
const deps = { ids: sequentialIds('parts'), clock: manualClock('2026-12-01T10:00:00.000Z') };

describe('sealRecord', () => {
  it('prefixes the record id by type and the revision id with rev', () => {
    const prefixes = {
      agent_card: 'card',
      delegation_contract: 'dlg',
      permission_decision: 'pd',
      execution_attempt: 'att',
      delegation_checkpoint: 'cp',
      delegation_attestation: 'dat',
      verification_receipt: 'vr',
      control_event: 'evt',
      grant: 'grant',
      escalation: 'esc',
      task_input: 'in',
      retention_purge: 'rp',
      approval_request: 'apr',
      authority_decision: 'ad',
    } as const;
    expect(Object.keys(prefixes).sort()).toStrictEqual([...RECORD_TYPES].sort());
    for (const [type, prefix] of Object.entries(prefixes)) {
      const rec = sealRecord({ type: type as keyof typeof prefixes, body: {}, issuedBy: actor, lifecycle: 'recorded' }, deps);
      expect(rec.record_id).toMatch(new RegExp(`^${prefix}_parts_\\d{6}$`));
      expect(rec.revision_id).toMatch(/^rev_parts_\d{6}$/);
    }
  });

  it('knows exactly the RW-003 lifecycle assertions', () => {
    const all = ['proposed', 'active', 'issued', 'suspended', 'revoked', 'retired', 'superseded', 'expired', 'recorded'];
    expect(LifecycleAssertion.options).toStrictEqual(all);
    for (const l of all) expect(LifecycleAssertion.parse(l)).toBe(l);
    expect(LifecycleAssertion.safeParse('').success).toBe(false);
  });
});

describe('schema refs', () => {
  it('places Baton\'s own types under its family and the RW-003 types under RW-003\'s', () => {
    const baton = new Set(['escalation', 'task_input', 'retention_purge', 'approval_request', 'authority_decision']);
    expect(BATON_SCHEMA_FAMILY).toBe('baton-records/0.1');
    for (const t of RECORD_TYPES) {
      expect(schemaRefFor(t)).toBe(`${baton.has(t) ? 'baton-records/0.1' : SCHEMA_FAMILY}#${t}`);
      expect(recordTypeOf(schemaRefFor(t))).toBe(t);
    }
  });

  it('refuses any other schema_ref as unsupported, naming at most 256 characters of it', () => {
    const long = `${SCHEMA_FAMILY}#${'x'.repeat(300)}`;
    const err = expectCode(() => recordTypeOf(long), 'unsupported');
    expect([err.message, err.details]).toStrictEqual(['unsupported schema version', { schema_ref: long.slice(0, 256) }]);
    expect(expectCode(() => recordTypeOf(`${BATON_SCHEMA_FAMILY}#grant`), 'unsupported').details).toStrictEqual({ schema_ref: 'baton-records/0.1#grant' });
  });
});

describe('digests', () => {
  const hex = 'a'.repeat(64);
  it('the Digest form is exactly sha256:<64 lowercase hex>', () => {
    expect(Digest.safeParse(`sha256:${hex}`).success).toBe(true);
    for (const bad of [`xsha256:${hex}`, `sha256:${hex}0`, `sha256:${'A'.repeat(64)}`, `sha512:${hex}`]) {
      const r = Digest.safeParse(bad);
      expect(r.success).toBe(false);
      expect(r.error?.issues[0]?.message).toBe('expected sha256:<64 lowercase hex>');
    }
  });

  it('an unfrozen value is digested afresh each time; a frozen one once, to the same digest', () => {
    const v: Record<string, unknown> = { a: 1 };
    expect(digestOf(v)).toBe(sha256Digest('{"a":1}'));
    v.a = 2;
    expect(digestOf(v)).toBe(sha256Digest('{"a":2}'));
    expect(digestOf('x')).toBe(sha256Digest('"x"'));
    const f = freezeCanonical({ b: [1] });
    expect(digestOf(f)).toBe(sha256Digest('{"b":[1]}'));
    expect(digestOf(f)).toBe(sha256Digest('{"b":[1]}'));
  });
});

describe('decodeRecord', () => {
  const stored = () => {
    const rec = sealRecord({ type: 'grant', body: { n: 1 }, issuedBy: actor, lifecycle: 'active' }, deps);
    const document = canonicalText(rec);
    return { rec, document, row: { record_id: rec.record_id, revision_id: rec.revision_id, content_digest: rec.content_digest, document } };
  };

  it('answers a row this process stored with the record itself', () => {
    const { rec, document, row } = stored();
    rememberStored(rec, document);
    expect(decodeRecord(row)).toBe(rec);
  });

  it('does not remember an unfrozen record, and remembers what it decoded', () => {
    const { rec, document, row } = stored();
    const copy = structuredClone(rec);
    rememberStored(copy, document);
    const first = decodeRecord(row);
    expect(first).not.toBe(copy);
    expect(Object.isFrozen(first)).toBe(true);
    expect(first).toStrictEqual(rec);
    expect(decodeRecord(row)).toBe(first);
  });

  it('a remembered record is not served for a row with another digest', () => {
    const { rec, document, row } = stored();
    rememberStored(rec, document);
    const err = expectCode(() => decodeRecord({ ...row, content_digest: `sha256:${'b'.repeat(64)}` }), 'storage_error');
    expect([err.message, err.details]).toStrictEqual(['stored record does not match its digest', { revision_id: rec.revision_id }]);
  });

  it('refuses bytes that are not JSON, or whose digest member is not the row\'s', () => {
    const { rec, row } = stored();
    const bad = expectCode(() => decodeRecord({ ...row, document: '{"a":' }), 'storage_error');
    expect([bad.message, bad.details]).toStrictEqual(['stored record is not valid JSON', { revision_id: rec.revision_id }]);
    expect(bad.cause).toBeInstanceOf(SyntaxError);
    const forged = canonicalText({ ...rec, content_digest: `sha256:${'c'.repeat(64)}` });
    const err = expectCode(() => decodeRecord({ ...row, document: forged }), 'storage_error');
    expect([err.message, err.details]).toStrictEqual(['stored record does not match its digest', { revision_id: rec.revision_id }]);
  });
});
