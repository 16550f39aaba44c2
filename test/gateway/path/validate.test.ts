import { describe, expect, it } from 'vitest';
import { validateSend } from '../../../src/gateway/path/validate.ts';
import { expectCode } from '../../helpers/errors.ts';
import { CONTRACT_EXTENSION } from '../../../src/gateway/present.ts';

const ok = { message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hello' }] } };

describe('validateSend (A2A v1.0 SendMessageRequest, before anything is admitted)', () => {
  it('accepts a well-formed request and hands back the exact values, unknown fields included', () => {
    const params = { ...ok, message: { ...ok.message, extensions: [], futureField: { kept: true } }, configuration: { returnImmediately: true, historyLength: 2 }, custom: 1 };
    const v = validateSend(params as never);
    expect(v.params).toEqual(params);
    expect(v.returnImmediately).toBe(true);
    expect(v.historyLength).toBe(2);
    expect(v.taskId).toBeUndefined();
  });

  it("treats the SDK codec's empty taskId/contextId as absent, and reads a follow-up's task id", () => {
    expect(validateSend({ message: { ...ok.message, taskId: '', contextId: '' } } as never).message).not.toHaveProperty('taskId');
    expect(validateSend({ message: { ...ok.message, taskId: 'att_1' } } as never).taskId).toBe('att_1');
  });

  it.each([
    ['no message', {}],
    ['no messageId', { message: { role: 'ROLE_USER', parts: [{ text: 'x' }] } }],
    ['empty messageId', { message: { ...ok.message, messageId: '' } }],
    ['an unknown role', { message: { ...ok.message, role: 'ROLE_ROBOT' } }],
    ['a v0.3 role', { message: { ...ok.message, role: 'user' } }],
    ['no parts', { message: { ...ok.message, parts: [] } }],
    ['a part with no content', { message: { ...ok.message, parts: [{ mediaType: 'text/plain' }] } }],
    ['a part with two contents', { message: { ...ok.message, parts: [{ text: 'a', data: {} }] } }],
    ['raw that is not base64', { message: { ...ok.message, parts: [{ raw: 'not base64!' }] } }],
    ['too many parts', { message: { ...ok.message, parts: Array.from({ length: 257 }, () => ({ text: 'x' })) } }],
    ['an oversize id', { message: { ...ok.message, messageId: 'x'.repeat(2049) } }],
    ['returnImmediately that is not a boolean', { ...ok, configuration: { returnImmediately: 'yes' } }],
    ['a negative historyLength', { ...ok, configuration: { historyLength: -1 } }],
  ])('refuses %s with invalid_request', (_what, params) => {
    expectCode(() => validateSend(params as never), 'invalid_request');
  });

  describe('a contract chain presented in the request metadata (src/gateway/chain-placement.ts)', () => {
    const chain = { chain: [{ record_id: 'dlg_1' }] };

    it('is read as the message\'s from then on, the rest of the request metadata kept where it was', () => {
      const v = validateSend({ ...ok, metadata: { [CONTRACT_EXTENSION]: chain, note: 'n' } } as never);
      expect(v.message.metadata).toEqual({ [CONTRACT_EXTENSION]: chain });
      expect(v.params.message).toBe(v.message);
      expect(v.params.metadata).toEqual({ note: 'n' });
    });

    it('keeps the message\'s own metadata, and drops a request metadata left empty', () => {
      const v = validateSend({ message: { ...ok.message, metadata: { mine: 1 } }, metadata: { [CONTRACT_EXTENSION]: chain } } as never);
      expect(v.message.metadata).toEqual({ mine: 1, [CONTRACT_EXTENSION]: chain });
      expect(v.params).not.toHaveProperty('metadata');
    });

    it('is refused when the message presents one too: invalid_request, never a preference', () => {
      const err = expectCode(() => validateSend({ message: { ...ok.message, metadata: { [CONTRACT_EXTENSION]: chain } }, metadata: { [CONTRACT_EXTENSION]: chain } } as never), 'invalid_request');
      expect(err.message).toContain('presented twice');
    });

    it('leaves a request without one as it came', () => {
      const params = { message: { ...ok.message, metadata: { [CONTRACT_EXTENSION]: chain } }, metadata: { note: 'n' } };
      expect(validateSend(params as never).params).toEqual(params);
    });
  });
});
