/** Baton's own task view (src/attempts/task-view.ts): state names, the fingerprint read-back compares, artifact merging. */
import { describe, expect, it } from 'vitest';
import { fingerprint, isInterrupted, isTerminal, mergeArtifact, showsMessage, stateOf, TASK_STATES, TaskView } from '../../src/attempts/task-view.ts';
import { digestOf } from '../../src/records/digest.ts';
import type { JsonValue } from '../../src/records/strict-json.ts';

type Json = { [key: string]: JsonValue };

describe('task states', () => {
  it('four are terminal, two interrupt, the rest keep running', () => {
    expect(TASK_STATES.filter(isTerminal)).toEqual(['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED']);
    expect(TASK_STATES.filter(isInterrupted)).toEqual(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED']);
    expect(isTerminal('completed')).toBe(false);
    expect(isInterrupted('')).toBe(false);
  });

  it('stateOf reads the status state, or nothing', () => {
    expect(stateOf({ status: { state: 'TASK_STATE_WORKING' } })).toBe('TASK_STATE_WORKING');
    expect(stateOf({ status: { state: 3 } })).toBe('');
    expect(stateOf({})).toBe('');
  });
});

describe('fingerprint', () => {
  it('fixes id, state and the digests of status and artifacts', () => {
    const t = TaskView.parse({ id: 't1', status: { state: 'TASK_STATE_COMPLETED' }, artifacts: [{ artifactId: 'a', parts: [{ text: 'x' }] }] });
    expect(fingerprint(t)).toEqual({ task_id: 't1', state: 'TASK_STATE_COMPLETED', status_digest: digestOf(t.status), artifacts_digest: digestOf(t.artifacts!), artifact_count: 1 });
    expect(fingerprint(TaskView.parse({ id: 't1', status: { state: 'TASK_STATE_COMPLETED' } }))).toMatchObject({ artifacts_digest: digestOf([]), artifact_count: 0 });
  });
});

describe('mergeArtifact', () => {
  const view = (): Json => ({ artifacts: [{ artifactId: 'a', parts: [{ text: '1' }] }] });

  it('appends parts to the same artifact when the update says append', () => {
    const v = view();
    mergeArtifact(v, { artifact: { artifactId: 'a', parts: [{ text: '2' }] }, append: true });
    expect(v.artifacts).toEqual([{ artifactId: 'a', parts: [{ text: '1' }, { text: '2' }] }]);
  });

  it('replaces the artifact otherwise, and adds a new one at the end', () => {
    const v = view();
    mergeArtifact(v, { artifact: { artifactId: 'a', parts: [{ text: '3' }] } });
    expect(v.artifacts).toEqual([{ artifactId: 'a', parts: [{ text: '3' }] }]);
    mergeArtifact(v, { artifact: { artifactId: 'b', parts: [] }, append: true });
    expect(v.artifacts).toEqual([{ artifactId: 'a', parts: [{ text: '3' }] }, { artifactId: 'b', parts: [] }]);
  });

  it('starts the list on an empty view, tolerates missing parts, and ignores an update without an artifact', () => {
    const v: Json = {};
    mergeArtifact(v, { append: true });
    expect(v).toEqual({});
    mergeArtifact(v, { artifact: { artifactId: 'a' } });
    mergeArtifact(v, { artifact: { artifactId: 'a' }, append: true });
    expect(v.artifacts).toEqual([{ artifactId: 'a', parts: [] }]);
  });
});

describe('TaskView: the schema a delegatee\'s task is read with', () => {
  const ok = { id: 't1', contextId: 'c1', status: { state: 'TASK_STATE_COMPLETED' } };
  it('needs an id and a status with a state; artifacts need an id, parts default to none, media types are strings', () => {
    expect(TaskView.safeParse(ok).success).toBe(true);
    expect(TaskView.safeParse({ id: 't1' }).success).toBe(false);
    expect(TaskView.safeParse({ id: 't1', status: {} }).success).toBe(false);
    expect(TaskView.safeParse({ ...ok, artifacts: [{ parts: [] }] }).success).toBe(false);
    expect(TaskView.parse({ ...ok, artifacts: [{ artifactId: 'a' }] }).artifacts).toEqual([{ artifactId: 'a', parts: [] }]);
    expect(TaskView.safeParse({ ...ok, artifacts: [{ artifactId: 'a', parts: [{ mediaType: 5 }] }] }).success).toBe(false);
    expect(TaskView.safeParse({ ...ok, contextId: 'c'.repeat(2049) }).success).toBe(false);
  });
});

describe('showsMessage: whether a shared task shows a follow-up turn\'s own message (issue #25 item 2)', () => {
  it('finds the message id among the history\'s messages, and nowhere else', () => {
    const history: JsonValue[] = [null, 'text', ['m1'], { messageId: 'm0' }, { messageId: 'm1', role: 'ROLE_USER' }];
    expect(showsMessage({ history }, 'm1')).toBe(true);
    expect(showsMessage({ history }, 'm2')).toBe(false);
    expect(showsMessage({ history: [{ messageId: 'm0' }] }, 'm1')).toBe(false);
    // Not in the status message, an artifact, or a history that is not a list.
    expect(showsMessage({ status: { message: { messageId: 'm1' } }, artifacts: [{ artifactId: 'm1' }] }, 'm1')).toBe(false);
    expect(showsMessage({ history: { messageId: 'm1' } }, 'm1')).toBe(false);
    expect(showsMessage({}, 'm1')).toBe(false);
  });
});
