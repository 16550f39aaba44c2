import { describe, expect, it } from 'vitest';
import { childTermsFor, gateOf } from '../../src/mcp/policy.ts';

describe('gateOf: annotations choose the default, the policy decides', () => {
  it('an explicit policy wins over every annotation', () => {
    expect(gateOf({ requireApproval: false }, { annotations: { destructiveHint: true } })).toBeUndefined();
    expect(gateOf({ requireApproval: true }, { annotations: { readOnlyHint: true } })).toBe('T3_consequential_propose');
    expect(gateOf({ requireApproval: 'T4_consequential_execute' }, { annotations: { readOnlyHint: true } })).toBe('T4_consequential_execute');
  });
  it('unset: read-only or explicitly non-destructive tools run ungated; everything else is T3 (MCP: destructiveHint defaults to true)', () => {
    expect(gateOf({}, { annotations: { readOnlyHint: true } })).toBeUndefined();
    expect(gateOf({}, { annotations: { destructiveHint: false } })).toBeUndefined();
    expect(gateOf({}, {})).toBe('T3_consequential_propose');
    expect(gateOf({}, { annotations: {} })).toBe('T3_consequential_propose');
    expect(gateOf({}, { annotations: { readOnlyHint: false, destructiveHint: true } })).toBe('T3_consequential_propose');
    expect(gateOf({}, { annotations: { idempotentHint: true } })).toBe('T3_consequential_propose');
  });
});

describe('childTermsFor', () => {
  it('narrows the child to the one tool under mcp.tools/call', () => {
    expect(childTermsFor('notes', 'create_note')).toEqual({ scope: { operations: ['mcp.tools/call'], tools: ['mcp:notes/create_note'], effect_classes: ['reversible_mutation'] } });
  });
});
