/**
 * What an MCP tool's policy decides, as pure functions (issue #26): the
 * child's terms for one call, and whether a call needs a named human
 * approval. Tool annotations are hints that choose defaults, never authority
 * (DESIGN "MCP is a second adapter, not a second path").
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { MCP_CALL, toolScopeId } from '../contracts/machine-preset.ts';
import type { GatedTier } from '../gates/policy.ts';
import type { McpToolPolicy } from './config.ts';

/** The child's terms for one call: exactly this tool, under `mcp.tools/call` (attenuation, RW-003 §8). */
export function childTermsFor(server: string, tool: string) {
  return { scope: { operations: [MCP_CALL], tools: [toolScopeId(server, tool)], effect_classes: ['reversible_mutation' as const] } };
}

/** Is this tool a call Baton may forward without a human gate? Annotations only choose the default (MCP: destructiveHint defaults to true). */
export function gateOf(policy: Pick<McpToolPolicy, 'requireApproval'>, tool: Pick<Tool, 'annotations'>): GatedTier | undefined {
  if (policy.requireApproval === false) return undefined;
  if (policy.requireApproval === true) return 'T3_consequential_propose';
  if (policy.requireApproval) return policy.requireApproval;
  const a = tool.annotations ?? {};
  if (a.readOnlyHint === true || a.destructiveHint === false) return undefined;
  return 'T3_consequential_propose';
}
