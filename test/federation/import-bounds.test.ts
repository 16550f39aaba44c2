/**
 * The local bounds a downstream puts on a chain imported from a
 * separate-store upstream (issue 25 item 14): owner binding, horizon and the
 * clamped child terms. The e2e side is e2e/federation-partner.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { DelegationContract } from '../../src/contracts/model.ts';
import { checkImportedOwner, clampedChildTerms, importBounds, importedNotAfter } from '../../src/federation/import-bounds.ts';
import { expectCode } from '../helpers/errors.ts';

const NOW = new Date('2026-12-04T04:00:00.000Z');
const DAY = 86_400_000;

/** An upstream leaf as far as the bounds read it: a 24 h horizon and a 10^12 invocation budget (the red team's chain). */
function leaf(over: { issued_at?: string; owner?: { space_id: string; namespace: string } } = {}): DelegationContract {
  return {
    record_id: 'dlg_up',
    issued_at: over.issued_at ?? NOW.toISOString(),
    body: {
      owner: { access_domain: 'org_a', config_revision: 'r1', ...(over.owner ?? { space_id: 'space_a', namespace: 'org_a' }) },
      limits: { not_after: new Date(NOW.getTime() + DAY).toISOString(), max_invocations: 1e12, max_protected_operations: 1e12, max_concurrency: 1000 },
      budget_ceilings: [{ name: 'invocations', unit: 'invocation', ceiling: '1000000000000' }, { name: 'tokens', unit: 'token', ceiling: '5' }],
      subdelegation_policy: { allowed: true, max_remaining_depth: 4 },
    },
  } as unknown as DelegationContract;
}

const local = { space_id: 'space_b', namespace: 'org_b' };

describe('import bounds', () => {
  it('without a preset: the default preset\'s bounds, accounted in one namespace per upstream', () => {
    const b = importBounds({ callerId: 'org-a' });
    expect(b).toMatchObject({ lifetimeSeconds: 3600, maxInvocations: 100, depth: 1, namespace: 'upstream:org-a', issuance: { preset_id: 'upstream:org-a', max_active_roots: 64, max_per_minute: 600 } });
    expect(importBounds({ callerId: 'org-a', ownerNamespace: 'org_a' }).namespace).toBe('org_a');
  });

  it('a chain naming the downstream\'s own space or namespace, or another owner than the configured one, is refused', () => {
    const binding = { callerId: 'org-a' };
    expectCode(() => checkImportedOwner([leaf({ owner: { space_id: 'space_b', namespace: 'org_a' } })], local, binding), 'invalid_request');
    expectCode(() => checkImportedOwner([leaf({ owner: { space_id: 'space_a', namespace: 'org_b' } })], local, binding), 'invalid_request');
    expectCode(() => checkImportedOwner([leaf({ owner: { space_id: 'space_a', namespace: 'fresh_ns_1' } })], local, { ...binding, ownerNamespace: 'org_a' }), 'invalid_request');
    expectCode(() => checkImportedOwner([leaf()], local, { ...binding, spaceId: 'space_z' }), 'invalid_request');
    expect(() => checkImportedOwner([leaf()], local, { ...binding, ownerNamespace: 'org_a', spaceId: 'space_a' })).not.toThrow();
  });

  it('the imported horizon is at most the preset lifetime from the leaf\'s issuance; a leaf dated in the future is refused', () => {
    const b = importBounds({ callerId: 'org-a' });
    expect(importedNotAfter(leaf(), b, NOW)).toBe(new Date(NOW.getTime() + 3600_000).toISOString());
    expectCode(() => importedNotAfter(leaf({ issued_at: new Date(NOW.getTime() + 10 * 60_000).toISOString() }), b, NOW), 'invalid_request');
  });

  it('the child asks for the leaf\'s terms clamped: invocations, operations, concurrency, depth and the invocations budget', () => {
    const b = importBounds({ callerId: 'org-a' });
    const terms = clampedChildTerms(leaf(), b, '2026-12-04T05:00:00.000Z');
    expect(terms.limits).toEqual({ not_after: '2026-12-04T05:00:00.000Z', max_invocations: 100, max_protected_operations: 100, max_concurrency: 8 });
    expect(terms.budget_ceilings).toEqual([{ name: 'invocations', unit: 'invocation', ceiling: '100' }, { name: 'tokens', unit: 'token', ceiling: '5' }]);
    expect(terms.subdelegation_policy).toEqual({ max_remaining_depth: 0 });
  });
});
