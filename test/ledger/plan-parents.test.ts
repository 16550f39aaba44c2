/**
 * Which parents the path must read before planning a task's admission
 * (src/ledger/plan.ts unplacedParents): only those of new nodes that
 * neither the fence nor the budgets themselves open — none for a fresh root
 * and child, the hot path, so it reads nothing (e2e/statements-suite.ts).
 */
import { describe, expect, it } from 'vitest';
import { streamOf } from '../../src/control/scope.ts';
import { delegationScope, unplacedParents } from '../../src/ledger/plan.ts';
import type { OpenBudgetRequest } from '../../src/ledger/types.ts';

const actor = { object_id: 'actor_owner', revision_id: 'rev_1', content_digest: `sha256:${'a'.repeat(64)}` };
const node = (node_id: string, parent_id?: string): OpenBudgetRequest => ({
  node_id,
  ...(parent_id ? { parent_id } : {}),
  space_id: 'sp',
  owner_namespace: 'ns',
  not_after: '2099-01-01T00:00:00.000Z',
  dimensions: [{ name: 'units', unit: 'admission', ceiling: 5n }],
  actor_ref: actor,
  at: '2026-12-04T00:00:00.000Z',
});
const headOf = (id: string) => ({ ...streamOf(delegationScope('sp', id)), position: 1, event_id: `evt_${id}`, event_digest: `sha256:${'b'.repeat(64)}` });

describe('the parents a plan needs read', () => {
  it('none for a new root and its new child (each placed by the plan itself)', () => {
    expect(unplacedParents([node('root'), node('child', 'root')], [])).toStrictEqual([]);
  });

  it('the stored parent of a new child, once, whether or not the budgets name it', () => {
    expect(unplacedParents([node('root'), node('a', 'root'), node('b', 'root')], [headOf('root')])).toStrictEqual(['root']);
    expect(unplacedParents([node('a', 'root')], [])).toStrictEqual(['root']);
  });

  it('nothing for nodes that exist already (their stream has a head in the fence)', () => {
    expect(unplacedParents([node('root'), node('child', 'root')], [headOf('root'), headOf('child')])).toStrictEqual([]);
  });
});
