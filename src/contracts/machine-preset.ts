/**
 * The owner presets a gateway issues root authority from (ADR-0014 "Machine
 * callers"): finite invocations, lifetime and depth, configured by the
 * owner, never by the caller. Built into a contracts Preset once Baton's own
 * card (the root's delegatee) is known.
 */
import { z } from 'zod';
import { definePreset, type DelegateeOption, type Preset } from './presets.ts';
import { Identifier } from '../records/ids.ts';
import type { ActorRef } from '../records/revision-ref.ts';

export const GatewayPresetConfig = z.strictObject({
  id: Identifier,
  /** ADR-0014: at most one hour unless the owner explicitly allows more. */
  lifetimeSeconds: z.number().int().min(1).max(3600).default(3600),
  /** Forwarded operations one root may admit in total (the shared root budget). */
  maxInvocations: z.number().int().min(1).max(1_000_000).default(100),
  /** Hops below Baton: 1 lets Baton mint one child for the delegatee. */
  delegationDepth: z.number().int().min(1).max(4).default(1),
  maxActiveRoots: z.number().int().min(1).max(1024).default(64),
  maxPerMinute: z.number().int().min(1).max(100_000).default(600),
  objectiveTypes: z.array(Identifier).min(1).default(['a2a_task']),
  /**
   * MCP tools this preset's roots may call, as `<server id>/<tool name>` (src/mcp, issue #26).
   * Empty: no MCP tool is in scope, and `tools/list` shows none to its callers.
   */
  // Optional, not defaulted: a preset without tools parses to the same value, and so the same config revision, as before MCP.
  tools: z.array(z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}\/[A-Za-z0-9_.-]{1,128}$/)).max(256).optional(),
  /** Tool calls one root may admit in total (the `tool_calls` budget); default: maxInvocations. */
  maxToolCalls: z.number().int().min(1).max(1_000_000).optional(),
  /** Further budget dimensions a root carries, for the costs MCP tools declare (`mcpServers[].tools[].cost`). */
  budgets: z.array(z.strictObject({ name: z.string().regex(/^[a-z][a-z0-9_.]{0,63}$/), unit: z.string().regex(/^[a-z][a-z0-9_./-]{0,31}$/), ceiling: z.number().int().min(1).max(1e15) })).max(16).optional(),
});
export type GatewayPresetConfig = z.infer<typeof GatewayPresetConfig>;

/** The budget dimension every forwarded operation consumes one unit of. */
export const INVOCATIONS = 'invocations';
/** The budget dimension every MCP tool call consumes one unit of (RW-003 §2 max_tool_calls). */
export const TOOL_CALLS = 'tool_calls';
/** The operation an MCP `tools/call` is admitted as; the tool itself is a scope tool (src/mcp). */
export const MCP_CALL = 'mcp.tools/call';

/** The scope identity of an MCP tool: `mcp:<server id>/<tool name>`. */
export const toolScopeId = (server: string, tool: string): string => `mcp:${server}/${tool}`;

const OPERATIONS = ['a2a.SendMessage', 'a2a.SendStreamingMessage', 'a2a.GetTask', 'a2a.ListTasks', 'a2a.CancelTask', 'a2a.SubscribeToTask'];

export function buildPreset(cfg: GatewayPresetConfig, ctx: { gateway: DelegateeOption; owner: ActorRef; spaceId: string }): Readonly<Preset> {
  // Without tools the preset is exactly what it was before MCP (its digest, and so config revisions, unchanged).
  const tools = (cfg.tools ?? []).map((t) => `mcp:${t}`);
  const toolCalls = cfg.maxToolCalls ?? cfg.maxInvocations;
  return definePreset({
    preset_id: cfg.id,
    revision: '1',
    kind: 'machine',
    eligible_delegatees: [ctx.gateway],
    objective_types: cfg.objectiveTypes,
    delegator_actor_ref: ctx.owner,
    issuance: { max_active_roots: cfg.maxActiveRoots, max_per_minute: cfg.maxPerMinute },
    terms: {
      scope: {
        operations: tools.length > 0 ? [...OPERATIONS, MCP_CALL] : OPERATIONS,
        tools,
        resources: [{ kind: 'project', project_id: ctx.spaceId }],
        data_classes: ['public', 'internal'],
        effect_classes: ['read', 'proposal', 'reversible_mutation'],
      },
      limits: {
        lifetime_seconds: cfg.lifetimeSeconds,
        max_duration: { value: cfg.lifetimeSeconds, unit: 's' },
        max_invocations: cfg.maxInvocations,
        max_protected_operations: cfg.maxInvocations,
        max_tokens: 0,
        max_tool_calls: tools.length > 0 ? toolCalls : 0,
        max_retries: 0,
        max_concurrency: 8,
      },
      budget_ceilings: [
        { name: INVOCATIONS, unit: 'invocation', ceiling: String(cfg.maxInvocations) },
        ...(tools.length > 0 ? [{ name: TOOL_CALLS, unit: 'call', ceiling: String(toolCalls) }] : []),
        ...(cfg.budgets ?? []).map((b) => ({ name: b.name, unit: b.unit, ceiling: String(b.ceiling) })),
      ],
      autonomy: { tier: 'T1_draft', gates: [{ kind: 'automated_scope_check' }, { kind: 'provenance_check' }] },
      human_authorities: [],
      reviewers: [],
      consent_refs: [],
      verification: { pre_effect_checks: ['scope', 'fence'], post_effect_checks: ['readback'], acceptance_criteria: [] },
      monitoring: { modes: ['pre_effect'], observers: [], telemetry_classes: [], heartbeat_max_seconds: 300, anomaly_triggers: [], circuit_breakers: [] },
      subdelegation_policy: { allowed: true, max_remaining_depth: cfg.delegationDepth, max_descendants: 32, required_attestations: ['contract_signature'] },
      retry_policy: { retryable_outcomes: [], max_attempts: 1, min_backoff_ms: 0, reconcile_before_retry: true, renewed_approval_conditions: [] },
      revocation: {
        authorities: [ctx.owner],
        propagation: 'fence_descendants',
        ack_timeout_seconds: 30,
        readback_required: true,
        safe_stop: 'cooperative_cancel',
        compensation: 'separately_authorized',
      },
      control_scopes: [{ space_id: ctx.spaceId, scope_kind: 'space', scope_id: ctx.spaceId }],
      constraints: [],
    },
  });
}
