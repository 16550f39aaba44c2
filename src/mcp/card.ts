/**
 * The card Baton serves for each MCP server it fronts, at
 * /mcp/<id>/.well-known/agent-card.json (RW-003 §10.2 "a separately served
 * ResearchWiki card reference"): Baton's own RW-003 identity — Baton is who
 * acts on the caller's behalf — with the MCP endpoint as its adapter,
 * signed with Baton's keys. Another organisation's Baton verifies it under
 * the keys it pinned and delegates to this exact revision (issue #26
 * cross-organisation), as it does with an agent card Baton serves.
 */
import { RW003_CARD_EXTENSION_URI, type Rw003CardParams } from '../cards/extension.ts';
import type { DelegateeOption } from '../contracts/presets.ts';
import { CONTRACT_EXTENSION } from '../gateway/present.ts';
import { builtOnce, publishSigned } from '../gateway/proxy-card.ts';
import type { PublishedDocument } from '../cards/publisher.ts';
import { servableForm } from '../cards/served-card.ts';
import type { Keyring } from '../keys/keyring.ts';
import type { JsonValue } from '../records/strict-json.ts';

type Json = { [key: string]: JsonValue };

/** The MCP revision Baton's front speaks (the official SDK's latest). */
export const MCP_FRONT_VERSION = '2025-06-18';

export interface McpCard {
  doc: PublishedDocument;
  /** Baton's identity as the delegatee of this card's exact revision (what an upstream's contract names). */
  option: DelegateeOption;
}

export class McpCards {
  private readonly cache = new Map<string, Promise<McpCard>>();

  constructor(private readonly deps: { keyring: Keyring; publicUrl: () => string; identity: Rw003CardParams }) {}

  /** The card for MCP server `id`, built once per process (a failure is retried on the next call). */
  get(id: string): Promise<McpCard> {
    return builtOnce(this.cache, id, () => this.build(id));
  }

  private async build(id: string): Promise<McpCard> {
    const root = this.deps.publicUrl();
    const endpoint = `${root}/mcp/${id}`;
    const params: Rw003CardParams = {
      ...{}, ...this.deps.identity,
      agent_card_id: `${this.deps.identity.agent_card_id}_mcp_${id.replace(/-/g, '_')}`,
      display_name: `${this.deps.identity.display_name} for MCP server ${id}`.slice(0, 256),
      supported_adapters: [{ protocol: 'mcp', version: MCP_FRONT_VERSION, binding: 'streamable_http', endpoint_ref: endpoint, authentication_methods: ['api_key', 'bearer_jwt'] }],
    };
    const card: Json = servableForm({
      name: `MCP server ${id} (via Baton)`,
      description: 'An MCP server behind Baton: every tools/call is admitted under an attenuated contract, fenced and read back.',
      version: '1.0.0',
      // The endpoint is MCP, not A2A: named here so the card says where it is; callers reach it with an MCP client.
      supportedInterfaces: [{ url: endpoint, protocolBinding: 'MCP', protocolVersion: MCP_FRONT_VERSION }],
      capabilities: {
        extensions: [
          { uri: RW003_CARD_EXTENSION_URI, description: 'RW-003 card fields', params: params as unknown as JsonValue },
          { uri: CONTRACT_EXTENSION, description: 'An upstream Baton presents its Delegation Contract chain in _meta of each tools/call' },
        ],
      },
      defaultInputModes: ['application/json'],
      defaultOutputModes: ['application/json'],
      // A2A cards name at least one skill; the tools themselves are listed by tools/list (per caller's scope).
      skills: [{ id: `mcp-${id}`, name: `MCP server ${id}`, description: 'The tools this MCP server offers through Baton, listed by tools/list for each caller\'s scope.', tags: ['mcp'] }],
    });
    const { doc, option } = await publishSigned(card, params, { keyring: this.deps.keyring, root, source: `${endpoint}/.well-known/agent-card.json` });
    return { doc, option };
  }
}
