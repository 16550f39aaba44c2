/**
 * An MCP tool call's outcome, as pure functions (RW-003 §10.2–10.3: a tool
 * result is transport evidence, not acceptance). The result is first an
 * observation, shaped as the task view Baton keeps for every attempt; only a
 * configured read route that agrees, plus the contract's acceptance checks,
 * projects `succeeded`. Without a read route the result is recorded as
 * observed — settled as consumed, never shown as verified (issue #26).
 * Anything uncertain is `unknown` and holds the reservation.
 */
import { checkAcceptance, type AcceptanceCriteria, type Projection } from '../attempts/outcome.ts';
import { TaskView } from '../attempts/task-view.ts';
import type { ReceiptBody } from '../attempts/record.ts';
import type { JsonValue } from '../records/strict-json.ts';
import type { ReadCheck } from './read-route.ts';

type Json = { [k: string]: JsonValue };

/** What re-reading the call showed: no route configured, a read that could not be made, or its check. */
export type ReadOutcome = { kind: 'none' } | { kind: 'unavailable'; reason: string } | { kind: 'read'; check: ReadCheck };

export interface CallProjection extends Projection {
  outcome: NonNullable<Projection['outcome']>;
  readback: ReceiptBody['readback'];
  /** Set when nothing verified the result: an observation only. */
  verification?: 'observed';
}

/** The artifact that carries a result's structured content (after one artifact per content item). */
export const STRUCTURED = 'structured-content';

/** One part per content item (text as text/plain). */
function partsOf(result: Json): Json[] {
  const content = Array.isArray(result.content) ? result.content : [];
  const parts = content.map((item): Json => {
    const c = (item ?? {}) as Json;
    if (c.type === 'text') return { text: typeof c.text === 'string' ? c.text : '', mediaType: 'text/plain' };
    return { data: c, mediaType: typeof c.mimeType === 'string' ? c.mimeType : `application/vnd.mcp.${String(c.type)}+json` };
  });
  return parts;
}

/**
 * The call's result as a task view (DESIGN: Baton keeps its own view of every
 * attempt): `COMPLETED`, or `FAILED` for a tool error, with its content as
 * one artifact per item — which the acceptance checks count.
 */
export function callView(callId: string, result: Json): TaskView {
  const artifacts: Json[] = partsOf(result).map((part, i) => ({ artifactId: `content-${i}`, parts: [part] }));
  if (result.structuredContent !== undefined) artifacts.push({ artifactId: STRUCTURED, parts: [{ data: result.structuredContent, mediaType: 'application/json' }] });
  return TaskView.parse({ id: callId, status: { state: result.isError === true ? 'TASK_STATE_FAILED' : 'TASK_STATE_COMPLETED' }, artifacts });
}

/**
 * The tool result again from the view Baton kept (an approved call the
 * client asks for later): text parts as text content, the structured content
 * as itself, every other item as it arrived.
 */
export function resultOfView(view: { status: { state: string }; artifacts?: unknown[] }): Json {
  const content: JsonValue[] = [];
  let structured: JsonValue | undefined;
  for (const a of (view.artifacts ?? []) as Array<{ artifactId?: string; parts?: Json[] }>) {
    const part = a.parts?.[0];
    if (!part) continue;
    if (a.artifactId === STRUCTURED) structured = part.data ?? null;
    else if (typeof part.text === 'string') content.push({ type: 'text', text: part.text });
    else if (part.data !== undefined) content.push(part.data);
  }
  return { content, ...(structured !== undefined ? { structuredContent: structured } : {}), ...(view.status.state === 'TASK_STATE_FAILED' ? { isError: true } : {}) };
}

export function projectCall(view: TaskView, read: ReadOutcome, criteria: AcceptanceCriteria): CallProjection {
  const readback: ReceiptBody['readback'] = read.kind === 'none' ? 'not_applicable' : read.kind === 'unavailable' ? 'unavailable' : read.check.agreed ? 'agreed' : 'disagreed';
  // A tool error is the tool's own report of having run: charged, never a success.
  if (view.status.state === 'TASK_STATE_FAILED') return { outcome: 'failed', settlement: 'consume', reasons: ['the tool reported an error'], acceptance: [], readback };
  if (read.kind === 'unavailable') return { outcome: 'unknown', settlement: 'hold', reasons: [`read route unavailable: ${read.reason}`], acceptance: [], readback };
  if (read.kind === 'read' && !read.check.agreed) return { outcome: 'unknown', settlement: 'hold', reasons: read.check.reasons, acceptance: [], readback };
  const acceptance = checkAcceptance(view, criteria);
  const failed = acceptance.filter((a) => !a.passed);
  const observed = read.kind === 'none' ? { verification: 'observed' as const } : {};
  if (failed.length > 0) return { outcome: 'failed', settlement: 'consume', reasons: failed.map((f) => `acceptance failed: ${f.check}`), acceptance, readback, ...observed };
  const reasons = read.kind === 'none' ? ['observed: no read route is configured, the result is not verified; acceptance passed'] : ['read route agrees; acceptance passed'];
  return { outcome: 'succeeded', settlement: 'consume', reasons, acceptance, readback, ...observed };
}
