/**
 * The presentation rules (src/gateway/present.ts): a caller never sees the
 * contract chain, a downstream id, or a snake_case key Baton added.
 */
import { describe, expect, it } from 'vitest';
import type { AttemptBody } from '../../src/attempts/record.ts';
import { CONTRACT_EXTENSION, OUTCOME_METADATA, presentMessage, presentTask, withClosingRevision, withIds } from '../../src/gateway/present.ts';
import type { JsonValue } from '../../src/records/strict-json.ts';

const REMOTE_TASK = '7f0c2a9e-1d2b-4c3d-9e8f-0a1b2c3d4e5f';
const REMOTE_CTX = 'c0ffee00-1111-2222-3333-444455556666';
const ref = (id: string) => ({ object_id: id, revision_id: 'rev_1', content_digest: `sha256:${'a'.repeat(64)}` });

const attempt = {
  attempt_id: 'att_1',
  context_id: 'ctx_1',
  delegation_ref: ref('dlg_child'),
  root_ref: ref('dlg_root'),
  receipt_ref: ref('rcp_1'),
  remote: { endpoint: 'http://a', protocol: 'a2a', protocol_version: '1.0', binding: 'JSONRPC', card_ref: ref('card_a'), extensions: [], task_id: REMOTE_TASK, context_id: REMOTE_CTX },
} as unknown as AttemptBody;

const userMessage = { messageId: 'm1', role: 'ROLE_USER', taskId: REMOTE_TASK, contextId: REMOTE_CTX, parts: [{ text: 'hi' }], metadata: { [CONTRACT_EXTENSION]: { chain: ['…10 KB…'] }, keep: 'me' }, referenceTaskIds: [REMOTE_TASK] };
const remoteTask = {
  id: REMOTE_TASK,
  contextId: REMOTE_CTX,
  status: { state: 'TASK_STATE_INPUT_REQUIRED', message: { messageId: `${REMOTE_TASK}-q`, role: 'ROLE_AGENT', taskId: REMOTE_TASK, contextId: REMOTE_CTX, parts: [{ text: `task ${REMOTE_TASK} needs input` }] } },
  history: [userMessage],
  artifacts: [{ artifactId: 'a1', parts: [{ text: 'done' }] }],
  metadata: { [CONTRACT_EXTENSION]: 'x', 'urn:rw-agent-delegation:0.1.1:agent-card': 'y', other: REMOTE_TASK },
};
const text = (v: unknown) => JSON.stringify(v);

describe('presentTask', () => {
  it('shows Baton ids only: no remote task/context id anywhere, free text and status message included', () => {
    const shown = presentTask(remoteTask as never, attempt, undefined);
    expect(shown.id).toBe('att_1');
    expect(shown.contextId).toBe('ctx_1');
    expect(text(shown)).not.toContain(REMOTE_TASK);
    expect(text(shown)).not.toContain(REMOTE_CTX);
    expect((shown.status as { message: { messageId: string; taskId: string } }).message).toMatchObject({ messageId: 'att_1-q', taskId: 'att_1', contextId: 'ctx_1' });
  });

  it('never echoes the contract chain or any RW-003 extension metadata, in history or task metadata', () => {
    const shown = presentTask(remoteTask as never, attempt, 'succeeded');
    expect(text(shown)).not.toContain(CONTRACT_EXTENSION);
    expect(text(shown)).not.toContain('urn:rw-agent-delegation:');
    const [h] = shown.history as Array<{ metadata: Record<string, string>; referenceTaskIds?: unknown }>;
    expect(h!.metadata).toEqual({ keep: 'me' });
    expect(h!.referenceTaskIds).toBeUndefined();
  });

  it('puts the outcome under a versioned key in camelCase', () => {
    const shown = presentTask(remoteTask as never, { ...attempt, cancel_cause: { cause: 'caller', at: '2026-01-01T00:00:00Z' }, reassigned_from: 'att_0' }, 'succeeded');
    const meta = (shown.metadata as Record<string, JsonValue>)[OUTCOME_METADATA];
    expect(OUTCOME_METADATA).toBe('urn:baton:outcome:v2');
    expect(meta).toEqual({
      attemptId: 'att_1',
      delegationId: 'dlg_child',
      rootDelegationId: 'dlg_root',
      outcome: 'succeeded',
      verified: true,
      receipt: { objectId: 'rcp_1', revisionId: 'rev_1', contentDigest: `sha256:${'a'.repeat(64)}` },
      cancelCause: { cause: 'caller', at: '2026-01-01T00:00:00Z' },
      reassignedFrom: 'att_0',
    });
    expect(text(shown)).not.toMatch(/"[a-z]+_[a-z_]+":/); // no snake_case key Baton added
  });

  it('an unverified outcome is WORKING with Baton’s own status message, never the remote’s', () => {
    const shown = presentTask(remoteTask as never, attempt, 'unknown');
    expect(shown.status).toMatchObject({ state: 'TASK_STATE_WORKING', message: { messageId: 'att_1-status', taskId: 'att_1' } });
  });

  it('push notifications add the closing revision in camelCase', () => {
    const t = withClosingRevision(presentTask(remoteTask as never, attempt, 'failed'), { revision_id: 'rev_9', issued_at: '2026-01-01T00:00:00Z' });
    expect((t.metadata as Record<string, JsonValue>)[OUTCOME_METADATA]).toMatchObject({ outcome: 'failed', revisionId: 'rev_9', closedAt: '2026-01-01T00:00:00Z' });
  });
});

describe('stream events and messages', () => {
  it('a statusUpdate carries Baton ids in the event and in its status message', () => {
    const ev = withIds({ taskId: REMOTE_TASK, contextId: REMOTE_CTX, status: remoteTask.status, metadata: { [CONTRACT_EXTENSION]: 1 } } as never, attempt);
    expect(text(ev)).not.toContain(REMOTE_TASK);
    expect(text(ev)).not.toContain(CONTRACT_EXTENSION);
    expect(ev).toMatchObject({ taskId: 'att_1', contextId: 'ctx_1', status: { message: { taskId: 'att_1' } } });
  });

  it('a message event is presented like a history entry', () => {
    const m = presentMessage(userMessage as never, attempt);
    expect(m).toEqual({ messageId: 'm1', role: 'ROLE_USER', taskId: 'att_1', contextId: 'ctx_1', parts: [{ text: 'hi' }], metadata: { keep: 'me' } });
  });
});
