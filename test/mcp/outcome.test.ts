import { describe, expect, it } from 'vitest';
import { callView, projectCall, resultOfView } from '../../src/mcp/outcome.ts';
import type { JsonValue } from '../../src/records/strict-json.ts';

const ok: { content: JsonValue[]; structuredContent: JsonValue } = { content: [{ type: 'text', text: 'done' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }, { type: 'resource_link', uri: 'x:1' }], structuredContent: { id: 'n-1' } };

describe('callView: a tool result as the task view Baton keeps', () => {
  it('is COMPLETED with one artifact per content item, structured content last', () => {
    const v = callView('att_1:eff_1', ok);
    expect(v.id).toBe('att_1:eff_1');
    expect(v.status.state).toBe('TASK_STATE_COMPLETED');
    expect(v.artifacts).toEqual([
      { artifactId: 'content-0', parts: [{ text: 'done', mediaType: 'text/plain' }] },
      { artifactId: 'content-1', parts: [{ data: ok.content[1], mediaType: 'image/png' }] },
      { artifactId: 'content-2', parts: [{ data: ok.content[2], mediaType: 'application/vnd.mcp.resource_link+json' }] },
      { artifactId: 'structured-content', parts: [{ data: { id: 'n-1' }, mediaType: 'application/json' }] },
    ]);
  });
  it('is FAILED for a tool error, and empty without content', () => {
    expect(callView('c', { isError: true, content: [] }).status.state).toBe('TASK_STATE_FAILED');
    expect(callView('c', { isError: false }).status.state).toBe('TASK_STATE_COMPLETED');
    expect(callView('c', {}).artifacts).toEqual([]);
    expect(callView('c', { content: [{ type: 'text' }] }).artifacts![0]!.parts).toEqual([{ text: '', mediaType: 'text/plain' }]);
  });
});

// Views are built inside each test, never at collection time (Stryker's vitest runner does not count a collection failure).
const viewOf = () => callView('c', ok);

describe('projectCall: only an agreeing read route projects a verified success', () => {
  it('read route agrees and acceptance passes: succeeded, consumed', () => {
    const view = viewOf();
    expect(projectCall(view, { kind: 'read', check: { agreed: true } }, { minArtifacts: 1 })).toEqual({
      outcome: 'succeeded', settlement: 'consume', reasons: ['read route agrees; acceptance passed'], acceptance: [{ check: 'artifacts>=1', passed: true }], readback: 'agreed',
    });
  });
  it('read route disagrees or is unavailable: unknown, held', () => {
    const view = viewOf();
    expect(projectCall(view, { kind: 'read', check: { agreed: false, reasons: ['read route shows no x'] } }, {})).toEqual({ outcome: 'unknown', settlement: 'hold', reasons: ['read route shows no x'], acceptance: [], readback: 'disagreed' });
    expect(projectCall(view, { kind: 'unavailable', reason: 'timeout' }, {})).toEqual({ outcome: 'unknown', settlement: 'hold', reasons: ['read route unavailable: timeout'], acceptance: [], readback: 'unavailable' });
  });
  it('no read route: observed, never verified — acceptance still applies', () => {
    const view = viewOf();
    expect(projectCall(view, { kind: 'none' }, {})).toEqual({
      outcome: 'succeeded', settlement: 'consume', reasons: ['observed: no read route is configured, the result is not verified; acceptance passed'], acceptance: [], readback: 'not_applicable', verification: 'observed',
    });
    expect(projectCall(view, { kind: 'none' }, { minArtifacts: 9 })).toEqual({
      outcome: 'failed', settlement: 'consume', reasons: ['acceptance failed: artifacts>=9'], acceptance: [{ check: 'artifacts>=9', passed: false }], readback: 'not_applicable', verification: 'observed',
    });
    expect(projectCall(view, { kind: 'read', check: { agreed: true } }, {}).verification).toBeUndefined();
  });
  it('acceptance failure after an agreeing read is failed; a tool error is failed and charged whatever the read', () => {
    const view = viewOf();
    expect(projectCall(view, { kind: 'read', check: { agreed: true } }, { allowedMediaTypes: ['text/plain'] })).toMatchObject({ outcome: 'failed', settlement: 'consume', reasons: ['acceptance failed: media_types'] });
    const failed = callView('c', { isError: true, content: [{ type: 'text', text: 'boom' }] });
    for (const read of [{ kind: 'none' } as const, { kind: 'unavailable', reason: 'x' } as const, { kind: 'read', check: { agreed: true } } as const]) {
      expect(projectCall(failed, read, {})).toMatchObject({ outcome: 'failed', settlement: 'consume', reasons: ['the tool reported an error'], acceptance: [] });
    }
  });
});

describe('resultOfView: the tool result again from the view Baton kept', () => {
  it('gives back content, structured content and the error flag', () => {
    expect(resultOfView(callView('c', ok))).toEqual({ content: [{ type: 'text', text: 'done' }, ok.content[1], ok.content[2]], structuredContent: { id: 'n-1' } });
    expect(resultOfView(callView('c', { isError: true, content: [{ type: 'text', text: 'boom' }] }))).toStrictEqual({ content: [{ type: 'text', text: 'boom' }], isError: true });
    expect(resultOfView(callView('c', { structuredContent: null }))).toEqual({ content: [], structuredContent: null });
  });
  it('skips what it cannot read', () => {
    expect(resultOfView({ status: { state: 'TASK_STATE_COMPLETED' } })).toEqual({ content: [] });
    expect(resultOfView({ status: { state: 'TASK_STATE_COMPLETED' }, artifacts: [{ artifactId: 'x', parts: [] }, { artifactId: 'y' }, { artifactId: 'z', parts: [{ mediaType: 'text/plain' }] }, { artifactId: 'structured-content', parts: [{}] }] })).toEqual({ content: [], structuredContent: null });
  });
});
