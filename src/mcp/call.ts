/**
 * One MCP `tools/call` through Baton (issue #26; DESIGN "MCP is a second
 * adapter, not a second path"): the same steps as an A2A send, each reused —
 *
 *   validate → bind authority → gate → admit → forward → read back → verdict → present
 *
 * Arguments are checked against the tool's input schema before anything is
 * written; the attenuated child names exactly this tool; the admission is
 * the A2A path's own (path/admit.ts: complete fence set, shared root budget,
 * PermissionDecision, attempt and input in one transaction); the verdict is
 * path/verify.ts's commit with an MCP receipt profile. A tool result is
 * transport evidence only (RW-003 §10.3). Gated calls: ./gate.ts.
 */
import { BatonError, invalidRequest } from '../errors.ts';
import { MCP_CALL, toolScopeId } from '../contracts/machine-preset.ts';
import type { Preset } from '../contracts/presets.ts';
import type { PreparedAuthority } from '../gateway/authority.ts';
import type { Caller } from '../gateway/callers.ts';
import { admitFirstTurn, type AdmittedTurn, type ApprovedEffect, type Site } from '../gateway/path/admit.ts';
import type { PathDeps } from '../gateway/path/deps.ts';
import { CONTRACT_EXTENSION, OUTCOME_METADATA, outcomeMetadata } from '../gateway/present.ts';
import type { ApprovalRequest } from '../gates/records.ts';
import { digestOf } from '../records/digest.ts';
import type { JsonValue } from '../records/strict-json.ts';
import type { Attempt } from '../gateway/attempts.ts';
import type { McpServerConfig, McpToolPolicy } from './config.ts';
import type { InFlightCalls } from './in-flight.ts';
import { approvalNamed, approvedEffect, asApprovalUse, callPreview, holdCall } from './gate.ts';
import { resultOfView } from './outcome.ts';
import { runCall, type CallParts, type McpServerHandle } from './run.ts';
import { childTermsFor, gateOf } from './policy.ts';
import { siteOf, type McpIdentities } from './site.ts';
import type { McpCards } from './card.ts';
import { chainOf } from '../gateway/wire.ts';
import type { ArgumentCheck } from './arguments.ts';
import { inSpan, turnIds } from '../telemetry/tracing.ts';

type Json = { [k: string]: JsonValue };

export interface McpCallDeps {
  path: PathDeps;
  /** The caller's owner preset, for the tools its scope names. */
  preset(id: string): Readonly<Preset> | undefined;
  calls: InFlightCalls;
  args: ArgumentCheck;
  identities: McpIdentities;
  /** Baton's own signed card for each MCP server it fronts: what an upstream Baton's chain must name (./card.ts). */
  cards: Pick<McpCards, 'get'>;
}

export type { McpServerHandle } from './run.ts';

/** The tools of `server` a caller's authority covers: configured, and named in its preset's scope (`tools/list`). */
export function coveredTools(deps: Pick<McpCallDeps, 'preset'>, server: McpServerConfig, caller: Pick<Caller, 'preset'>): McpToolPolicy[] {
  const preset = caller.preset === undefined ? undefined : deps.preset(caller.preset);
  if (!preset) return [];
  const scope = new Set(preset.terms.scope.tools);
  return server.tools.filter((t) => scope.has(toolScopeId(server.id, t.name)));
}

/** A call validated and bound to its authority, not yet admitted. */
interface PreparedCall extends CallParts {
  caller: Caller;
  message: Json;
  site: Site;
  authority: PreparedAuthority;
  tier: ReturnType<typeof gateOf>;
}

/** A `tools/call`: the CallToolResult the caller sees, with Baton's outcome under `_meta`. */
export async function callTool(deps: McpCallDeps, server: McpServerHandle, caller: Caller, name: string, rawArgs: unknown, meta?: unknown, cancelled?: AbortSignal): Promise<Json> {
  const named = approvalNamed(meta);
  if (named) return callApproved(deps, server, caller, name, rawArgs, named);
  const presented = presentedChain(caller, meta);
  const call = await inSpan('baton.validate', { 'baton.delegatee': server.config.id, 'baton.mcp.tool': name }, () => prepareCall(deps, server, caller, name, rawArgs, presented));
  if (call.tier) {
    if (!deps.path.gates) throw new BatonError('unsupported', 'this tool needs a named human approval for each call and no approvers are configured', { tool: name, tier: call.tier });
    const chain = await call.authority.reevaluate();
    await holdCall(deps.path, deps.path.gates, { tier: call.tier, callerId: caller.id, server: server.config.id, card: call.site.option.card_ref, leaf: chain.leaf, fenceScopes: chain.fenceScopes, message: call.message });
  }
  const turn = await admitCall(deps, call);
  const { closed, result } = await runCall(deps, call, turn, cancelled);
  // An upstream Baton settles its own reservation by this gateway's signed receipt (separate stores).
  return present(closed, result, await deps.path.federation?.consumptionReceipt(closed.body));
}

/**
 * An approved call, admitted by the approval action or any node's sweep and
 * run in the background (as an approved A2A send is forwarded); the client
 * collects its outcome by calling again with the request named.
 */
export async function resumeApprovedCall(deps: McpCallDeps, servers: ReadonlyMap<string, McpServerHandle>, taskId: string): Promise<Attempt> {
  const { request, call } = await approvedRequest(deps, servers, taskId);
  const turn = await admitApprovedCall(deps, call, request);
  void runCall(deps, call, turn).catch(() => undefined); // its verdict is recorded; a failure here leaves the turn to the follower
  return turn.attempt;
}

/** Steps 1–3: exposed to this caller, listed by the server, arguments as its schema says; the child for exactly this tool. Nothing is written. */
async function prepareCall(deps: McpCallDeps, server: McpServerHandle, caller: Caller, name: string, rawArgs: unknown, presented?: unknown[]): Promise<PreparedCall> {
  // An upstream Baton's chain is its authority (ADR-0014 "existing task authority"): the tool must be configured here and named by the chain.
  const policy = presented ? server.config.tools.find((t) => t.name === name) : coveredTools(deps, server.config, caller).find((t) => t.name === name);
  if (!policy) throw new BatonError('deny', "this tool is not in the caller's scope", { tool: name, server: server.config.id });
  const tool = await server.upstream.tool(name).catch((err: unknown) => {
    throw new BatonError('unavailable', 'the MCP server could not be reached to list its tools', { server: server.config.id }, { cause: err });
  });
  if (!tool) throw invalidRequest('the MCP server does not list this tool', { tool: name, server: server.config.id });
  const args = (rawArgs ?? {}) as Json;
  deps.args.check(server.config.id, tool, args);
  const message: Json = { tool: name, arguments: args };
  const site = await siteOf(server.config, server.upstream, policy, digestOf(args), deps.identities).catch((err: unknown) => {
    if (err instanceof BatonError) throw err;
    throw new BatonError('unavailable', 'the MCP server could not be reached', { server: server.config.id }, { cause: err });
  });
  const objective = `MCP tools/call ${digestOf(message)}`;
  const prepared = presented
    ? await deps.path.authority.prepareAdopt(caller, presented, (await deps.cards.get(server.config.id)).option, site.option, objective)
    : await deps.path.authority.prepareOpen(caller, site.option, objective, childTermsFor(server.config.id, name));
  const op = { ...{}, ...deps.path.authority.operation(MCP_CALL, 'reversible_mutation'), tool: toolScopeId(server.config.id, name) };
  // The tool's own gate (policy, else its annotations) and the operator's approval rules for this server: the higher tier applies.
  const ruled = deps.path.gates?.tierFor({ delegatee: server.config.id, ...(caller.preset ? { preset: caller.preset } : {}) });
  const own = gateOf(policy, tool);
  const tier = own === 'T4_consequential_execute' || ruled === 'T4_consequential_execute' ? 'T4_consequential_execute' : (own ?? ruled);
  const asTask = await server.upstream.runsAsTask(tool);
  return { server, caller, policy, args, asTask, message, site, authority: { ...{}, ...prepared, reevaluate: () => prepared.reevaluate(op) }, tier };
}

/** Step 4: the A2A path's admission (path/admit.ts), optionally with the approval bound. */
function admitCall(deps: McpCallDeps, call: PreparedCall, approved?: ApprovedEffect): Promise<AdmittedTurn> {
  return inSpan('baton.admit', { 'baton.delegatee': call.server.config.id, 'baton.operation': MCP_CALL }, async (span) => {
    const turn = await admitFirstTurn(deps.path, { caller: { id: call.caller.id }, target: call.site, authority: call.authority, message: call.message, operation: MCP_CALL, ...(approved ? { approved } : {}) });
    span.setAttributes(turnIds(turn));
    return turn;
  });
}

/** The chain an upstream Baton presents in `_meta` (only an upstream caller may present one). */
function presentedChain(caller: Caller, meta: unknown): unknown[] | undefined {
  const presented = meta && typeof meta === 'object' ? (meta as Record<string, JsonValue>)[CONTRACT_EXTENSION] : undefined;
  if (presented === undefined) return undefined;
  if (!caller.upstream) throw invalidRequest('this caller may not present delegation chains');
  return chainOf(presented);
}

/**
 * A call naming an approval request: only its caller, for exactly the
 * approved tool and arguments. Approved and not yet admitted, it runs now;
 * admitted (by the approval action or a sweep), its outcome is returned
 * once its verdict is in; anything else is refused with the gate's rule.
 */
async function callApproved(deps: McpCallDeps, server: McpServerHandle, caller: Caller, name: string, rawArgs: unknown, taskId: string): Promise<Json> {
  const request = await deps.path.gates?.byTask(taskId);
  const message = { tool: name, arguments: (rawArgs ?? {}) as JsonValue };
  if (!request || request.body.caller_id !== caller.id || request.body.delegatee_id !== server.config.id || request.body.operation !== MCP_CALL || digestOf((request.body.params?.message ?? null) as JsonValue) !== digestOf(message)) {
    throw new BatonError('deny', 'no approval request of this caller covers this exact call', { tool: name, task: taskId });
  }
  if (request.body.state === 'admitted') {
    const attempt = await deps.path.attempts.get(taskId);
    if (!attempt || attempt.body.state !== 'closed') throw new BatonError('unavailable', 'the approved call is still running; call again for its outcome', { task: taskId, retry: true });
    return present(attempt, attempt.body.view ? resultOfView(attempt.body.view) : undefined);
  }
  const call = await prepareCall(deps, server, caller, name, rawArgs);
  const turn = await admitApprovedCall(deps, call, request);
  const { closed, result } = await runCall(deps, call, turn);
  return present(closed, result);
}

/** The request behind a task id, as the approval action or the sweep finds it, prepared as its caller's call. */
async function approvedRequest(deps: McpCallDeps, servers: ReadonlyMap<string, McpServerHandle>, taskId: string): Promise<{ request: ApprovalRequest; call: PreparedCall }> {
  const gates = deps.path.gates;
  const request = await gates?.byTask(taskId);
  if (!gates || !request) throw invalidRequest('no such approval request', { task: taskId.slice(0, 128) });
  const server = servers.get(request.body.delegatee_id);
  const caller = gates.deps.callerOf(request.body.caller_id);
  if (!server || !caller) {
    const refusal = { code: 'deny' as const, rule: server ? 'caller_removed' : 'server_removed', reason: server ? 'the requesting caller is no longer configured' : 'the MCP server is no longer configured' };
    if (request.body.state === 'approved') await gates.refuse(request, refusal).catch(() => undefined);
    throw new BatonError('deny', refusal.reason, { rule: refusal.rule, task: taskId });
  }
  const message = (request.body.params?.message ?? {}) as Json;
  return { request, call: await prepareCall(deps, server, caller, String(message.tool), message.arguments) };
}

/** Admits an approved call: the preview rebuilt now must be the approved one; the approval is used once (gate.ts). */
async function admitApprovedCall(deps: McpCallDeps, call: PreparedCall, request: ApprovalRequest): Promise<AdmittedTurn> {
  const gates = deps.path.gates!;
  const chain = await call.authority.reevaluate();
  const current = callPreview({ tier: request.body.tier, callerId: call.caller.id, server: call.server.config.id, card: call.site.option.card_ref, leaf: chain.leaf, message: call.message, expiresAt: request.body.preview.expires_at });
  const approved = await approvedEffect(gates, request, current, deps.path.clock.now());
  return admitCall(deps, call, approved).catch((err: unknown) => {
    throw asApprovalUse(err, request.body.task_id);
  });
}

/**
 * What the MCP client sees: the tool's own result when Baton projected
 * `succeeded` or `failed`; otherwise a held notice, never the unverified
 * content as if it counted (`isError`, outcome under `_meta`).
 */
function present(closed: Attempt, result: Json | undefined, consumptionReceipt?: string): Json {
  const outcome = closed.body.outcome;
  const meta = { [OUTCOME_METADATA]: { ...{}, ...outcomeMetadata(closed.body, outcome), ...(consumptionReceipt ? { consumptionReceipt } : {}) } as unknown as JsonValue };
  if (result && (outcome === 'succeeded' || outcome === 'failed')) {
    const { _meta: _theirs, ...rest } = result;
    return { ...{}, ...rest, ...(outcome === 'failed' ? { isError: true } : {}), _meta: meta };
  }
  // Still running as an MCP Task: the durable follower judges it; the outcome is recorded on the attempt (console, CLI, audit).
  const text = closed.body.state === 'closed' ? `Baton could not verify this result (${outcome ?? 'unknown'}); it is held for reconciliation.` : `The call still runs at the server as an MCP Task; Baton follows it to its verdict (attempt ${closed.body.attempt_id}).`;
  return { content: [{ type: 'text', text }], isError: true, _meta: meta };
}
