/**
 * MCP servers Baton fronts (issue #26, RW-003 §10.2 "MCP adapter"): each is a
 * delegatee reached over Streamable HTTP, with the RW-003 identity facts its
 * operator attests (an MCP server has no signed card) and a policy per tool:
 * which tools are exposed, their gate, and the read route that re-reads what
 * a call changed. Tool annotations are hints that choose defaults, never
 * authority (DESIGN "MCP is a second adapter, not a second path").
 */
import { z } from 'zod';
import { EnvCredential } from '../gateway/credential.ts';
import { RequireApproval } from '../gates/policy.ts';
import { OperatorFacts } from '../gateway/delegatee-identity.ts';

/** An MCP tool name as Baton accepts it in config and scope (`mcp:<server>/<tool>`). */
export const ToolName = z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/);

/**
 * RW-003 §9 "a separately described read route": a read-only tool, called
 * after the effect, whose result must show what the call changed. A string
 * value `$.arguments.<path>` or `$.result.<path>` takes that value from the
 * call (its arguments, or its result: `content`, `structuredContent`).
 */
export const ReadRoute = z.strictObject({
  tool: ToolName,
  arguments: z.record(z.string(), z.json()).default({}),
  /** Dotted path into the read's result → the value it must hold (literal or `$.` reference). Empty: the read must only succeed. */
  expect: z.record(z.string().min(1), z.json()).default({}),
});
export type ReadRoute = z.infer<typeof ReadRoute>;

export const McpToolPolicy = z.strictObject({
  name: ToolName,
  /**
   * A named human approval per call. Unset, the tool's annotations choose: a
   * tool that is not read-only and not marked non-destructive is T3 (MCP's
   * `destructiveHint` defaults to true). `false` opts out explicitly.
   */
  requireApproval: z.union([z.literal(false), RequireApproval]).optional(),
  readRoute: ReadRoute.optional(),
  /**
   * What one call costs besides one `invocations` and one `tool_calls` unit: a budget dimension the caller's
   * preset declares (`presets[].budgets`), reserved at admission with the rest — a root without it cannot call.
   */
  cost: z.strictObject({ dimension: z.string().regex(/^[a-z][a-z0-9_.]{0,63}$/), amount: z.number().int().min(1).max(1e15) }).optional(),
  /** Contract acceptance checks on the result: its content items count as artifacts. */
  acceptance: z.strictObject({ minArtifacts: z.number().int().min(0).optional(), allowedMediaTypes: z.array(z.string()).optional() }).default({}),
});
export type McpToolPolicy = z.infer<typeof McpToolPolicy>;

export const McpServerConfig = z.strictObject({
  /** Path segment Baton serves this server under: /mcp/<id>; also the `<server>` of its tools' scope ids. */
  id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/),
  /** The server's Streamable HTTP endpoint, pinned: Baton never follows it elsewhere. */
  url: z.url({ protocol: /^https?$/ }),
  /** Allow a plain http URL (https only by default, as for agents). */
  allowHttp: z.boolean().default(false),
  /** Credential Baton presents: a header filled from an environment variable (never a literal secret). */
  auth: EnvCredential.optional(),
  /**
   * Who the server is (MCP carries no identity): the RW-003 facts the operator attests for it, or — for an MCP server
   * behind another organisation's Baton — that Baton's signed card for it (`<its url>/.well-known/agent-card.json`),
   * verified under the keys pinned for its origin in `trust`. Exactly one of the two.
   */
  rw003: OperatorFacts.optional(),
  cardUrl: z.url({ protocol: /^https?$/ }).optional(),
  /** How long one call may run before it is recorded `unknown` and held (its reservation is never released). */
  callTimeoutMs: z.number().int().min(100).max(3_600_000).default(60_000),
  tools: z.array(McpToolPolicy).min(1).max(256),
});
export type McpServerConfig = z.infer<typeof McpServerConfig>;

/** Every MCP server's config problem a human should fix before serving (`baton config check`). */
export function mcpConfigProblems(servers: readonly McpServerConfig[], delegateeIds: readonly string[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const s of servers) {
    if (seen.has(s.id)) out.push(`mcpServers: ${s.id} is configured twice`);
    seen.add(s.id);
    if (delegateeIds.includes(s.id)) out.push(`mcpServers: ${s.id} is also a delegatee id`);
    if (new URL(s.url).protocol === 'http:' && !s.allowHttp) out.push(`mcpServers: ${s.id} uses http without allowHttp`);
    if ((s.rw003 === undefined) === (s.cardUrl === undefined)) out.push(`mcpServers: ${s.id} needs exactly one of rw003 (attested facts) and cardUrl (another Baton's signed card)`);
    if (s.cardUrl && new URL(s.cardUrl).origin !== new URL(s.url).origin) out.push(`mcpServers: ${s.id} cardUrl is on another origin than its url`);
  }
  return out;
}
