import { describe, expect, it } from 'vitest';
import { renderChainTree } from '../../src/contracts/render-tree.ts';
import { refOf } from '../../src/records/envelope.ts';
import { actors, childRequest, world } from './fixtures.ts';

describe('renderChainTree', () => {
  it('renders root → leaf as an indented tree with revisions, signers and authority', async () => {
    const w = await world();
    const root = await w.issue();
    const child = await w.mint(refOf(root.contract), childRequest('b', { scope: { operations: ['a2a.GetTask'] }, limits: { spend: null } }), actors.agentA);
    const text = renderChainTree([root.contract, child.contract]);
    const lines = text.split('\n');
    expect(lines[0]).toBe(`${root.contract.record_id}@${root.contract.revision_id} [root, depth 0] T2_bounded_execute`);
    const childLine = lines.findIndex((l) => l.startsWith(`   └─ ${child.contract.record_id}@${child.contract.revision_id} [child, depth 1]`));
    expect(childLine).toBeGreaterThan(0);
    expect(text).toContain('signed ES256/baton-k1');
    expect(text).toContain('delegatee actor_agent_b@r1 (card card_b@card-r5, operator op_b@r1)');
    expect(lines.slice(childLine).join('\n')).toContain('operations: a2a.GetTask;');
    expect(lines.slice(childLine).join('\n')).toContain('spend none');
    expect(lines.slice(0, childLine).join('\n')).toContain('spend 10000 USD (minor units)');
    expect(lines.slice(childLine + 1).every((l) => l.startsWith('      '))).toBe(true);
  });
});
