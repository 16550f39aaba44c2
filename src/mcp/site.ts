/**
 * Who and where an MCP server is, for delegation (RW-003 §10.2 "Agent
 * discovery/card": initialization, tool metadata, and a separately served
 * card reference). MCP has no signed card of its own, so the identity is
 * either the operator's attested RW-003 facts, bound to a digest of what
 * discovery showed — the negotiated revision, server info, capabilities and
 * tool list (a changed tool list is a new card revision) — or, for a server
 * behind another organisation's Baton, that Baton's signed card for it,
 * verified under the keys pinned for its origin.
 */
import type { CardResolver } from '../cards/resolver.ts';
import type { CardVerification } from '../cards/verify.ts';
import { TOOL_CALLS, INVOCATIONS } from '../contracts/machine-preset.ts';
import { identityOf, type DelegateeIdentity } from '../gateway/delegatee-identity.ts';
import type { Site } from '../gateway/path/admit.ts';
import type { PathDeps } from '../gateway/path/deps.ts';
import { CONTRACT_EXTENSION } from '../gateway/present.ts';
import { digestOf } from '../records/digest.ts';
import type { JsonValue } from '../records/strict-json.ts';
import type { McpServerConfig, McpToolPolicy } from './config.ts';
import type { Discovery, McpUpstream } from './upstream.ts';

/** The discovery document an MCP server's identity is bound to (never a secret: no headers, no credential). */
export function discoveryDigest(d: Discovery): string {
  const known = digests.get(d);
  if (known) return known;
  const digest = digestOfDiscovery(d);
  digests.set(d, digest);
  return digest;
}

/** Per discovery object (McpUpstream keeps one while its session and tool list last): hashed once. */
const digests = new WeakMap<Discovery, string>();

function digestOfDiscovery(d: Discovery): string {
  const tools = d.tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema, ...(t.annotations ? { annotations: t.annotations } : {}) })).sort((a, b) => (a.name < b.name ? -1 : 1));
  return digestOf({ protocolVersion: d.protocolVersion, serverInfo: d.serverInfo, capabilities: d.capabilities, tools } as unknown as JsonValue);
}

/**
 * Identifies MCP servers and announces each identity on its agent control
 * stream, once per content in this process (idempotent in the store), as a
 * delegatee's verified card is (src/gateway/delegatees.ts): contracts fence
 * that stream, so a changed identity moves its head.
 */
export class McpIdentities {
  private readonly done = new Set<string>();

  constructor(private readonly deps: Pick<PathDeps, 'store' | 'spaceId' | 'gatewayActor'> & { resolver?: Pick<CardResolver, 'resolve'> }) {}

  async of(config: McpServerConfig, upstream: McpUpstream): Promise<{ identity: DelegateeIdentity; protocolVersion: string }> {
    const d = await upstream.discovery();
    let identity: DelegateeIdentity;
    if (config.cardUrl) {
      if (!this.deps.resolver) throw new Error('no card resolver to verify an MCP server card');
      identity = identityOf(config.id, await this.deps.resolver.resolve(config.cardUrl, 'public'), undefined);
    } else {
      const digest = discoveryDigest(d);
      const seen = { form: 'mcp_discovery', source: config.url, raw_digest: digest, payload_digest: digest, signed: false } as unknown as CardVerification;
      const attested = identityOf(config.id, seen, config.rw003);
      identity = { ...{}, ...attested, observation: { ...{}, ...attested.observation, form: 'mcp_discovery' } };
    }
    await this.announce(identity);
    return { identity, protocolVersion: d.protocolVersion };
  }

  private async announce({ option, observation: o }: DelegateeIdentity): Promise<void> {
    // One announcement per card and content: two server ids on one endpoint are two cards, each on its own stream.
    const key = `mcp:${option.card_ref.object_id}:${o.payload_digest}:${o.facts_digest ?? 'card'}`;
    if (this.done.has(key)) return;
    await this.deps.store.control.appendControl({
      event_type: 'rw003.agent_card.published',
      control_scope_ref: { space_id: this.deps.spaceId, scope_kind: 'agent', scope_id: option.card_ref.object_id },
      actor_ref: this.deps.gatewayActor,
      idempotency_key: key,
      payload: { card_ref: option.card_ref, form: o.form, identity: o.identity, ...(o.facts_digest ? { facts_digest: o.facts_digest } : {}), signed: o.signed },
    });
    this.done.add(key);
  }
}

/** The site one tool call is admitted for: identity, remote facts (RW-003 §10.3), budget and lease. */
export async function siteOf(config: McpServerConfig, upstream: McpUpstream, policy: McpToolPolicy, args_digest: string, identities: McpIdentities): Promise<Site> {
  const { identity, protocolVersion } = await identities.of(config, upstream);
  return {
    delegateeId: config.id,
    option: identity.option,
    remote: {
      endpoint: config.url,
      protocol: 'mcp',
      protocol_version: protocolVersion,
      binding: 'streamable_http',
      card_ref: identity.option.card_ref,
      card: identity.observation,
      extensions: [CONTRACT_EXTENSION],
    },
    // An MCP call carries the chain under its own `_meta` (mcp/run.ts), not where an A2A request would.
    target: { delegatee_id: config.id, endpoint: config.url, headers: {}, acceptance: policy.acceptance, streaming: false, pushNotifications: false, chainPlacement: 'request' },
    // The calling node holds the call for its whole timeout; only then may another node judge it lost.
    leaseMs: config.callTimeoutMs + 30_000,
    amounts: { [INVOCATIONS]: 1n, [TOOL_CALLS]: 1n, ...(policy.cost ? { [policy.cost.dimension]: BigInt(policy.cost.amount) } : {}) },
    attemptFields: { tool: { server: config.id, name: policy.name, arguments_digest: args_digest } },
  };
}
