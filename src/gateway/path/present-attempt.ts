/**
 * Step 8: what a caller sees of a Baton task, from Baton's own durable view
 * (DESIGN: GetTask and ListTasks never go live to the agent, so an agent
 * that is down never turns into an error, and a task an operator settled
 * shows it). Baton's ids only (src/gateway/present.ts).
 */
import type { AttemptBody } from '../../attempts/record.ts';
import { presentTask } from '../present.ts';
import type { Json } from './turn.ts';

/** The recorded view of an attempt, optionally with only the newest `historyLength` messages (A2A §7.3). */
export function presentAttempt(attempt: AttemptBody, historyLength?: number): Json {
  const view = (attempt.view ?? { status: { state: stateBeforeView(attempt) } }) as Json;
  const resolved: Json = attempt.resolution ? { status: { state: attempt.resolution.as === 'consumed' ? 'TASK_STATE_COMPLETED' : 'TASK_STATE_FAILED' } } : {};
  const history = Array.isArray(view.history) ? view.history : undefined;
  const trimmed = history && historyLength !== undefined ? (historyLength === 0 ? [] : history.slice(-historyLength)) : history;
  // RW-003 §6 T4: executed and read back, but not `succeeded` until the reviewer decided.
  const reviewing: Json = attempt.review?.state === 'pending' ? { status: { state: 'TASK_STATE_WORKING', message: { messageId: `${attempt.attempt_id}-review`, role: 'ROLE_AGENT', parts: [{ text: 'The effect was executed and read back; it waits for a reviewer\'s decision before its outcome is projected.' }] } } } : {};
  const task = presentTask({ ...{}, ...view, ...resolved, ...reviewing, id: '', contextId: '', ...(trimmed ? { history: trimmed } : {}) }, attempt, attempt.resolution ? undefined : attempt.outcome);
  if (!task.artifacts) task.artifacts = [];
  return task;
}

/** An open attempt whose remote task Baton has not yet observed. */
function stateBeforeView(attempt: AttemptBody): string {
  if (attempt.state === 'closed') return 'TASK_STATE_FAILED';
  return attempt.state === 'dispatching' ? 'TASK_STATE_SUBMITTED' : 'TASK_STATE_WORKING';
}
