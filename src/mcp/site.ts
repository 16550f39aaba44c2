/**
 * Who and where an MCP server is, for delegation (RW-003 §10.2 "Agent
 * discovery/card": initialization, tool metadata, and a separately served
 * card reference). MCP has no signed card, so the identity is the operator's
 * attested RW-003 facts, bound to a digest of what discovery showed — the
 * negotiated revision, server info, capabilities and tool list. A changed
 * tool list is a new card revision; contracts name the exact one.
 */
import type { CardVerification } from '../cards/verify.ts';
import { TOOL_CALLS, INVOCATIONS } from '../contracts/machine-preset.ts';
import { identityOf } from '../gateway/delegatee-identity.ts';
import type { Site } from '../gateway/path/admit.ts';
import type { PathDeps } from '../gateway/path/deps.ts';
import type { RevisionRef } from '../records/revision-ref.ts';
import { CONTRACT_EXTENSION } from '../gateway/present.ts';
import { digestOf } from '../records/digest.ts';
import type { JsonValue } from '../records/strict-json.ts';
import type { McpServerConfig, McpToolPolicy } from './config.ts';
import type { McpUpstream } from './upstream.ts';

/** The discovery document an MCP server's identity is bound to (never a secret: no headers, no credential). */
export function discoveryDigest(d: Awaited<ReturnType<McpUpstream['discovery']>>): string {
  const tools = d.tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema, ...(t.annotations ? { annotations: t.annotations } : {}) })).sort((a, b) => (a.name < b.name ? -1 : 1));
  return digestOf({ protocolVersion: d.protocolVersion, serverInfo: d.serverInfo, capabilities: d.capabilities, tools } as unknown as JsonValue);
}

/**
 * The site one tool call is admitted for: identity, remote facts (RW-003 §10.3), budget and lease.
 * The identity is announced on the server's agent stream first, as a delegatee's verified card is
 * (src/gateway/delegatees.ts): contracts fence that stream, so a changed tool list moves its head.
 */
export async function siteOf(config: McpServerConfig, upstream: McpUpstream, policy: McpToolPolicy, args_digest: string, announcer: Announcer): Promise<Site> {
  const d = await upstream.discovery();
  const digest = discoveryDigest(d);
  const seen = { form: 'mcp_discovery', source: config.url, raw_digest: digest, payload_digest: digest, signed: false } as unknown as CardVerification;
  const identity = identityOf(config.id, seen, config.rw003);
  await announcer.announce(identity.option.card_ref, digest, identity.observation.facts_digest ?? digest);
  return {
    delegateeId: config.id,
    option: identity.option,
    remote: {
      endpoint: config.url,
      protocol: 'mcp',
      protocol_version: d.protocolVersion,
      binding: 'streamable_http',
      card_ref: identity.option.card_ref,
      card: { ...identity.observation, form: 'mcp_discovery' },
      extensions: [CONTRACT_EXTENSION],
    },
    target: { delegatee_id: config.id, endpoint: config.url, headers: {}, acceptance: policy.acceptance, streaming: false, pushNotifications: false },
    // The calling node holds the call for its whole timeout; only then may another node judge it lost.
    leaseMs: config.callTimeoutMs + 30_000,
    amounts: { [INVOCATIONS]: 1n, [TOOL_CALLS]: 1n },
    attemptFields: { tool: { server: config.id, name: policy.name, arguments_digest: args_digest } },
  };
}

/** Announces an MCP server's identity on its agent control stream, once per content in this process (idempotent in the store). */
export class Announcer {
  private readonly done = new Set<string>();

  constructor(private readonly deps: Pick<PathDeps, 'store' | 'spaceId' | 'gatewayActor'>) {}

  async announce(card: RevisionRef, discovery: string, facts: string): Promise<void> {
    const key = `mcp:${discovery}:${facts}`;
    if (this.done.has(key)) return;
    await this.deps.store.control.appendControl({
      event_type: 'rw003.agent_card.published',
      control_scope_ref: { space_id: this.deps.spaceId, scope_kind: 'agent', scope_id: card.object_id },
      actor_ref: this.deps.gatewayActor,
      idempotency_key: key,
      payload: { card_ref: card, form: 'mcp_discovery', identity: 'operator_attested', facts_digest: facts, signed: false },
    });
    this.done.add(key);
  }
}

