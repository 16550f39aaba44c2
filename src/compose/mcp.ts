/**
 * The MCP adapter, composed (issue #26): one upstream client per configured
 * server, the scope registry naming their tools, and the /mcp/<id> router.
 * Config problems that would make every issuance fail (a preset naming a
 * tool no server is configured with) stop the gateway at start.
 */
import type { Router } from 'express';
import type { GatewayPresetConfig } from '../contracts/machine-preset.ts';
import { toolScopeId } from '../contracts/machine-preset.ts';
import type { Preset } from '../contracts/presets.ts';
import { registryWithTools, type ScopeRegistry } from '../contracts/scope.ts';
import type { CallerAuthenticator } from '../gateway/callers.ts';
import type { PathDeps } from '../gateway/path/deps.ts';
import type { Attempt } from '../gateway/attempts.ts';
import type { Turn } from '../gateway/path/turn.ts';
import type { AuthThrottle } from '../http/auth-throttle.ts';
import type { Logger } from '../log.ts';
import { ArgumentCheck } from '../mcp/arguments.ts';
import type { McpServerHandle } from '../mcp/call.ts';
import { mcpConfigProblems, type McpServerConfig } from '../mcp/config.ts';
import { mcpRouter } from '../mcp/front.ts';
import type { InFlightCalls } from '../mcp/in-flight.ts';
import { McpUpstream } from '../mcp/upstream.ts';
import { McpIdentities } from '../mcp/site.ts';
import { McpCards } from '../mcp/card.ts';
import type { CardResolver } from '../cards/resolver.ts';
import type { Rw003CardParams } from '../cards/extension.ts';
import type { Keyring } from '../keys/keyring.ts';

/** The scope registry for this config: A2A's operations, plus every configured MCP tool; throws on config problems. */
export function mcpRegistry(config: { mcpServers: readonly McpServerConfig[]; presets: readonly GatewayPresetConfig[]; delegatees: ReadonlyArray<{ id: string }> }): ScopeRegistry {
  const tools = config.mcpServers.flatMap((s) => s.tools.map((t) => toolScopeId(s.id, t.name)));
  const known = new Set(tools);
  const problems = [
    ...mcpConfigProblems(config.mcpServers, config.delegatees.map((d) => d.id)),
    ...config.presets.flatMap((p) => (p.tools ?? []).filter((t) => !known.has(`mcp:${t}`)).map((t) => `presets: ${p.id} names tool ${t}, which no mcpServers entry configures`)),
  ];
  if (problems.length > 0) throw new TypeError(`invalid configuration:\n${problems.join('\n')}`);
  return registryWithTools(tools);
}

export interface ComposedMcp {
  router: Router;
  /** Admits and runs an approved MCP call (the approval action, the approvals sweep). */
  resumeApproved(taskId: string): Promise<Attempt>;
  /** Continues a call the durable follower claimed. */
  follow(turn: Turn, row: { deadline: string }): Promise<void>;
  close(): Promise<void>;
}

export function composeMcp(
  servers: readonly McpServerConfig[],
  deps: { path: PathDeps; calls: InFlightCalls; presets: ReadonlyMap<string, Readonly<Preset>>; auth: CallerAuthenticator; throttle?: AuthThrottle; logger: Logger; oauth?: { issuer: string; publicUrl: () => string };
    resolver: Pick<CardResolver, 'resolve'>;
    keyring: Keyring;
    publicUrl: () => string;
    identity: Rw003CardParams;
  },
): ComposedMcp | undefined {
  if (servers.length === 0) return undefined;
  const handles = new Map<string, McpServerHandle>(servers.map((config) => [config.id, { config, upstream: new McpUpstream(config) }]));
  const front = mcpRouter({
    path: deps.path,
    calls: deps.calls,
    args: new ArgumentCheck(),
    identities: new McpIdentities({ ...{}, ...deps.path, resolver: deps.resolver }),
    cards: new McpCards({ keyring: deps.keyring, publicUrl: deps.publicUrl, identity: deps.identity }),
    preset: (id) => deps.presets.get(id),
    servers: handles,
    auth: deps.auth,
    logger: deps.logger,
    ...(deps.throttle ? { throttle: deps.throttle } : {}),
    ...(deps.oauth ? { oauth: deps.oauth } : {}),
  });
  return {
    router: front.router,
    resumeApproved: front.resumeApproved,
    follow: front.follow,
    close: async () => {
      await front.close();
      await Promise.all([...handles.values()].map((h) => h.upstream.close()));
    },
  };
}
