/**
 * Who a delegatee is (src/gateway/delegatee-identity.ts): the signed card's
 * RW-003 extension wins; otherwise the operator's attested facts; an
 * unsigned card's claims are never identity.
 */
import { describe, expect, it } from 'vitest';
import type { CardVerification } from '../../src/cards/verify.ts';
import { identityOf, OperatorFacts } from '../../src/gateway/delegatee-identity.ts';
import { digestOf } from '../../src/records/digest.ts';
import { expectCode } from '../helpers/errors.ts';

const D = (c: string) => `sha256:${c.repeat(64)}` as const;
const facts = OperatorFacts.parse({
  attested_by: 'principal_acme_ops',
  agent_actor_ref: { object_id: 'actor_summariser', revision_id: 'rev_3', content_digest: digestOf({ a: 1 }) },
  accountable_operator: { operator_principal_ref: 'principal_vendor', resolution: 'declared', evidence_ref: 'contract_41', effective_from: '2026-01-01T00:00:00Z' },
});
const verification = (over: Partial<CardVerification> = {}): CardVerification =>
  ({ form: 'public', source: 'https://a.example/.well-known/agent-card.json', origin: 'https://a.example', raw_digest: D('1'), payload_digest: D('2'), verified_keys: [], skipped_signatures: [], verified_at: '2026-01-01T00:00:00Z', card: {}, signed: true, ...over }) as CardVerification;
const rw003 = {
  agent_card_id: 'card_own',
  revision_id: 'rev_9',
  agent_actor_ref: { object_id: 'actor_own', revision_id: 'rev_1', content_digest: digestOf({ b: 2 }) },
  accountable_operator: { operator_principal_ref: 'principal_own', resolution: 'verified', evidence_ref: 'x', effective_from: '2026-01-01T00:00:00Z' },
  lifecycle: { state: 'active' },
} as unknown as NonNullable<CardVerification['rw003']>;

describe('identityOf', () => {
  it('a signed card carrying the RW-003 extension wins over the operator’s facts', () => {
    const id = identityOf('summariser', verification({ rw003 }), facts);
    expect(id.option.card_ref).toEqual({ object_id: 'card_own', revision_id: 'rev_9', content_digest: D('2') });
    expect(id.option.actor_ref.object_id).toBe('actor_own');
    expect(id.observation).toEqual({ form: 'public', source: 'https://a.example/.well-known/agent-card.json', raw_digest: D('1'), payload_digest: D('2'), signed: true, identity: 'card_extension' });
  });

  it('a plain signed card takes the operator’s facts, recorded as operator-attested under the attester', () => {
    const id = identityOf('summariser', verification(), facts);
    expect(id.option.actor_ref.object_id).toBe('actor_summariser');
    expect(id.option.card_ref.object_id).toBe('card_summariser');
    expect(id.option.card_ref.content_digest).toBe(D('2'));
    expect(id.lifecycle).toEqual({ agent_card_id: 'card_summariser', state: 'active' });
    expect(id.observation).toMatchObject({ signed: true, identity: 'operator_attested', attested_by: 'principal_acme_ops', facts_digest: digestOf(facts) });
    // Another attester makes another operator reference; another card makes another revision.
    const other = identityOf('summariser', verification(), { ...facts, attested_by: 'principal_someone_else' });
    expect(other.option.operator_ref.content_digest).not.toBe(id.option.operator_ref.content_digest);
    expect(identityOf('summariser', verification({ payload_digest: D('3') }), facts).option.card_ref.revision_id).not.toBe(id.option.card_ref.revision_id);
  });

  it('a plain card without facts is unsupported, naming the config key to set', () => {
    const e = expectCode(() => identityOf('summariser', verification(), undefined), 'unsupported');
    expect(e.message).toMatch(/delegatees\[\]\.rw003/);
  });

  it('an unsigned card’s own RW-003 claims are never its identity', () => {
    expectCode(() => identityOf('summariser', verification({ signed: false, rw003 }), undefined), 'unsupported');
    const id = identityOf('summariser', verification({ signed: false, rw003 }), facts);
    expect(id.option.actor_ref.object_id).toBe('actor_summariser');
    expect(id.observation).toMatchObject({ signed: false, identity: 'operator_attested' });
  });

  it('operator facts are zod-checked: no email as principal, non-active lifecycle needs a reason', () => {
    expect(OperatorFacts.safeParse({ ...facts, attested_by: 'ops@example.org' }).success).toBe(false);
    expect(OperatorFacts.safeParse({ ...facts, lifecycle: { state: 'suspended' } }).success).toBe(false);
  });
});
