/**
 * The parts of a remote A2A v1.0 Task (JSON wire form) that verification
 * reads. Parsed leniently — remote agents add fields — but only these are
 * ever trusted, and only after read-back.
 */
import { z } from 'zod';
import { digestOf, type Digest } from '../records/digest.ts';
import type { JsonValue } from '../records/strict-json.ts';

type Json = { [key: string]: JsonValue };

/** A2A v1.0 TaskState names on the wire. */
export const TASK_STATES = [
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_AUTH_REQUIRED',
] as const;
export type TaskStateName = (typeof TASK_STATES)[number];

export const TERMINAL_STATES: ReadonlySet<TaskStateName> = new Set([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
]);
/** Interrupted states keep the attempt open (the remote waits for more input). */
export const INTERRUPTED_STATES: ReadonlySet<TaskStateName> = new Set(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED']);

const Part = z.looseObject({ mediaType: z.string().optional() });
const Artifact = z.looseObject({ artifactId: z.string(), parts: z.array(Part).default([]) });

export const TaskView = z.looseObject({
  id: z.string().min(1).max(2048),
  contextId: z.string().max(2048).optional(),
  status: z.looseObject({ state: z.string(), timestamp: z.string().optional() }),
  artifacts: z.array(Artifact).optional(),
});
export type TaskView = z.infer<typeof TaskView>;

/** What Baton compares between the first observation and the read-back. */
export interface TaskFingerprint {
  task_id: string;
  state: string;
  status_digest: Digest;
  artifacts_digest: Digest;
  artifact_count: number;
}

export function fingerprint(task: TaskView): TaskFingerprint {
  const artifacts = task.artifacts ?? [];
  return {
    task_id: task.id,
    state: task.status.state,
    status_digest: digestOf(task.status),
    artifacts_digest: digestOf(artifacts),
    artifact_count: artifacts.length,
  };
}

export function isTerminal(state: string): boolean {
  return TERMINAL_STATES.has(state as TaskStateName);
}
export function isInterrupted(state: string): boolean {
  return INTERRUPTED_STATES.has(state as TaskStateName);
}

export function stateOf(view: Json): string {
  const status = view.status as Json | undefined;
  return typeof status?.state === 'string' ? status.state : '';
}

/** Applies an artifactUpdate to the observed view (A2A: append extends parts of the same artifact). */
export function mergeArtifact(view: Json, update: Json): void {
  const artifact = update.artifact as Json | undefined;
  if (!artifact) return;
  const list = (Array.isArray(view.artifacts) ? view.artifacts : []) as Json[];
  const i = list.findIndex((a) => a.artifactId === artifact.artifactId);
  if (i >= 0 && update.append === true) {
    const prev = list[i]!;
    list[i] = { ...{}, ...prev, parts: [...((prev.parts as JsonValue[]) ?? []), ...((artifact.parts as JsonValue[]) ?? [])] };
  } else if (i >= 0) list[i] = artifact;
  else list.push(artifact);
  view.artifacts = list;
}

/**
 * Does the task show that the delegatee received this message? A follow-up
 * turn shares its task with the turns before and beside it, so a state the
 * task reaches is evidence about this turn only once the task's history
 * holds the turn's own message (A2A Task.history; issue #25 item 2).
 */
export function showsMessage(view: Json, messageId: string): boolean {
  const history = view.history;
  return Array.isArray(history) && history.some((m) => (m as { messageId?: JsonValue } | null)?.messageId === messageId);
}
