/**
 * One MCP `tools/call` through Baton (issue #26; DESIGN "MCP is a second
 * adapter, not a second path"): the same steps as an A2A send, each reused —
 *
 *   validate → bind authority → admit → forward → read back → verdict → present
 *
 * Arguments are checked against the tool's input schema before anything is
 * written; the attenuated child names exactly this tool; the admission is
 * the A2A path's own (path/admit.ts: complete fence set, shared root budget,
 * PermissionDecision, attempt and input in one transaction); the verdict is
 * path/verify.ts's commit with an MCP receipt profile. A tool result is
 * transport evidence only (RW-003 §10.3).
 */
import { fingerprint } from '../attempts/task-view.ts';
import type { Observation, ReadBack } from '../attempts/outcome.ts';
import { BatonError, invalidRequest } from '../errors.ts';
import { MCP_CALL, toolScopeId } from '../contracts/machine-preset.ts';
import type { Preset } from '../contracts/presets.ts';
import type { Caller } from '../gateway/callers.ts';
import { admitFirstTurn, type AdmittedTurn } from '../gateway/path/admit.ts';
import type { PathDeps } from '../gateway/path/deps.ts';
import { CONTRACT_EXTENSION, OUTCOME_METADATA, outcomeMetadata } from '../gateway/present.ts';
import { commitVerdict, fencesCurrent, remoteFenceCurrent, verdict, verdictReleased } from '../gateway/path/verify.ts';
import { withFences } from '../attempts/outcome.ts';
import { digestOf } from '../records/digest.ts';
import { refOf } from '../records/envelope.ts';
import type { JsonValue } from '../records/strict-json.ts';
import type { Attempt } from '../gateway/attempts.ts';
import type { McpServerConfig, McpToolPolicy } from './config.ts';
import type { InFlightCalls } from './in-flight.ts';
import { callView, projectCall, type ReadOutcome } from './outcome.ts';
import { checkRead, readArguments } from './read-route.ts';
import { childTermsFor, gateOf } from './policy.ts';
import { siteOf, type Announcer } from './site.ts';
import type { McpUpstream } from './upstream.ts';
import type { ArgumentCheck } from './arguments.ts';

type Json = { [k: string]: JsonValue };

export interface McpCallDeps {
  path: PathDeps;
  /** The caller's owner preset, for the tools its scope names. */
  preset(id: string): Readonly<Preset> | undefined;
  calls: InFlightCalls;
  args: ArgumentCheck;
  announcer: Announcer;
}

export interface McpServerHandle {
  config: McpServerConfig;
  upstream: McpUpstream;
}

/** The tools of `server` a caller's authority covers: configured, and named in its preset's scope (`tools/list`). */
export function coveredTools(deps: Pick<McpCallDeps, 'preset'>, server: McpServerConfig, caller: Pick<Caller, 'preset'>): McpToolPolicy[] {
  const preset = caller.preset === undefined ? undefined : deps.preset(caller.preset);
  if (!preset) return [];
  const scope = new Set(preset.terms.scope.tools);
  return server.tools.filter((t) => scope.has(toolScopeId(server.id, t.name)));
}

/** A `tools/call`: the CallToolResult the caller sees, with Baton's outcome under `_meta`. */
export async function callTool(deps: McpCallDeps, server: McpServerHandle, caller: Caller, name: string, rawArgs: unknown): Promise<Json> {
  // Step 1: validate — exposed to this caller, listed by the server, arguments as its schema says. Nothing is written on refusal.
  const policy = coveredTools(deps, server.config, caller).find((t) => t.name === name);
  if (!policy) throw new BatonError('deny', 'this tool is not in the caller\'s scope', { tool: name, server: server.config.id });
  const tool = await server.upstream.tool(name).catch((err: unknown) => {
    throw new BatonError('unavailable', 'the MCP server could not be reached to list its tools', { server: server.config.id }, { cause: err });
  });
  if (!tool) throw invalidRequest('the MCP server does not list this tool', { tool: name, server: server.config.id });
  const args = (rawArgs ?? {}) as Json;
  deps.args.check(server.config.id, tool, args);
  const tier = gateOf(policy, tool);
  // Gated MCP calls are not built yet: fail closed, naming the tier (README "Putting an MCP server behind Baton").
  if (tier) throw new BatonError('interaction_required', 'this tool needs a named human approval for each call, which Baton does not yet offer for MCP tools', { tool: name, tier });

  // Steps 2–4: the attenuated child for exactly this tool, admitted as an A2A send is.
  const message: Json = { tool: name, arguments: args };
  const argsDigest = digestOf(args);
  const site = await siteOf(server.config, server.upstream, policy, argsDigest, deps.announcer).catch((err: unknown) => {
    if (err instanceof BatonError) throw err;
    throw new BatonError('unavailable', 'the MCP server could not be reached', { server: server.config.id }, { cause: err });
  });
  const prepared = await deps.path.authority.prepareOpen(caller, site.option, `MCP tools/call ${digestOf(message)}`, childTermsFor(server.config.id, name));
  const op = { ...deps.path.authority.operation(MCP_CALL, 'reversible_mutation'), tool: toolScopeId(server.config.id, name) };
  const turn = await admitFirstTurn(deps.path, { id: caller.id }, site, { ...prepared, reevaluate: () => prepared.reevaluate(op) }, message, MCP_CALL);

  // Step 5: forward, with the contract chain named in `_meta` (RW-003 §10.2: the reference travels in extension metadata).
  const meta: Json = { [CONTRACT_EXTENSION]: { attempt_id: turn.attempt.body.attempt_id, effect_id: turn.effect_id, chain: turn.contracts.map((c) => refOf(c)) as unknown as JsonValue } };
  const running = deps.calls.start(turn.attempt.body.attempt_id);
  let sent;
  try {
    sent = await server.upstream.call(name, args, meta, { signal: running.signal });
  } finally {
    running.done();
  }
  if (sent.kind === 'not_executed') {
    await verdictReleased(deps.path, turn, sent.reason);
    throw new BatonError(sent.code !== undefined ? 'invalid_request' : 'unavailable', sent.reason, { server: server.config.id, tool: name, attempt_id: turn.attempt.body.attempt_id, released: true });
  }
  if (sent.kind === 'lost') return present(await verdict(deps.path, turn, { kind: 'lost', reason: sent.reason }), undefined);

  // Steps 6–7: read back through the configured route, then the verdict in one transaction.
  const view = callView(`${turn.attempt.body.attempt_id}:${turn.effect_id}`, sent.result);
  const read = await readBackCall(server.upstream, policy, { arguments: args, result: sent.result });
  const current = (await fencesCurrent(deps.path.store, turn.fence_set, turn.scopes)) && (await remoteFenceCurrent(deps.path, turn));
  const projected = projectCall(view, read.outcome, policy.acceptance);
  const projection = withFences(projected, current);
  const observation: Observation = { kind: 'task', task: view, fingerprint: fingerprint(view) };
  const closed = await commitVerdict(deps.path, turn as AdmittedTurn, {
    observation,
    back: read.back,
    projection,
    fencesCurrent: current,
    profile: policy.readRoute ? 'mcp-read-route/1' : 'mcp-observed/1',
    readback: projected.readback,
    shown: view as unknown as Json,
    ...(projected.verification && projection.outcome === projected.outcome ? { closing: { verification: projected.verification } } : {}),
  });
  return present(closed, sent.result);
}

/** The read route's verdict and the read-back the receipt records (its evidence digest). */
async function readBackCall(upstream: McpUpstream, policy: McpToolPolicy, call: { arguments: Json; result: Json }): Promise<{ outcome: ReadOutcome; back?: ReadBack & { raw?: JsonValue } }> {
  const route = policy.readRoute;
  if (!route) return { outcome: { kind: 'none' } };
  const formed = readArguments(route, call);
  if ('missing' in formed) return { outcome: { kind: 'unavailable', reason: `the call did not return ${formed.missing}` }, back: { kind: 'unavailable', reason: `the call did not return ${formed.missing}` } };
  const read = await upstream.call(route.tool, formed.arguments, {});
  if (read.kind !== 'result') return { outcome: { kind: 'unavailable', reason: read.reason }, back: { kind: 'unavailable', reason: read.reason } };
  const readView = callView(`read:${route.tool}`, read.result);
  return { outcome: { kind: 'read', check: checkRead(route, call, read.result) }, back: { kind: 'task', task: readView, fingerprint: fingerprint(readView), raw: read.result } };
}

/**
 * What the MCP client sees: the tool's own result when Baton projected
 * `succeeded` or `failed`; otherwise a held notice, never the unverified
 * content as if it counted (`isError`, outcome under `_meta`).
 */
function present(closed: Attempt, result: Json | undefined): Json {
  const outcome = closed.body.outcome;
  const meta = { [OUTCOME_METADATA]: outcomeMetadata(closed.body, outcome) as unknown as JsonValue };
  if (result && (outcome === 'succeeded' || outcome === 'failed')) {
    const { _meta: _theirs, ...rest } = result;
    return { ...rest, ...(outcome === 'failed' ? { isError: true } : {}), _meta: meta };
  }
  return { content: [{ type: 'text', text: `Baton could not verify this result (${outcome ?? 'unknown'}); it is held for reconciliation.` }], isError: true, _meta: meta };
}
