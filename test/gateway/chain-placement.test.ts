import { describe, expect, it } from 'vitest';
import { chainPlacementOf, REQUEST_PLACEMENT } from '../../src/gateway/chain-placement.ts';
import type { AdmittedTurn } from '../../src/gateway/path/admit.ts';
import { wireParams } from '../../src/gateway/path/forward.ts';
import { CONTRACT_EXTENSION } from '../../src/gateway/present.ts';

const card = (extensions?: unknown[]) => ({ capabilities: { streaming: true, ...(extensions ? { extensions } : {}) } }) as never;

describe('where the contract chain travels (src/gateway/chain-placement.ts)', () => {
  it("in the request's metadata for a card that declares the extension with that placement, or does not declare it", () => {
    expect(chainPlacementOf(card([{ uri: CONTRACT_EXTENSION, params: { ...REQUEST_PLACEMENT } }]))).toBe('request');
    expect(chainPlacementOf(card())).toBe('request');
    expect(chainPlacementOf(card([{ uri: 'urn:other', params: { chainPlacement: 'message' } }]))).toBe('request');
  });

  it("in the message's for a card that declares the extension without it (a gateway from before), or names another", () => {
    expect(chainPlacementOf(card([{ uri: CONTRACT_EXTENSION }]))).toBe('message');
    expect(chainPlacementOf(card([{ uri: CONTRACT_EXTENSION, params: {} }]))).toBe('message');
    expect(chainPlacementOf(card([{ uri: CONTRACT_EXTENSION, params: { chainPlacement: 'message' } }]))).toBe('message');
  });

  describe('wireParams', () => {
    const contracts = [{ record_id: 'dlg_root' }, { record_id: 'dlg_child' }];
    const turn = (chainPlacement: 'request' | 'message') =>
      ({ contracts, attempt: { record_id: 'att_1', body: { remote: { context_id: 'ctx_1' } } }, target: { chainPlacement, pushNotifications: false } }) as unknown as AdmittedTurn;
    // What a caller sent: its own message metadata, a chain of its own in it, and request metadata addressed to Baton.
    const params = {
      message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'x' }], metadata: { mine: 1, [CONTRACT_EXTENSION]: { chain: ['forged'] } } },
      metadata: { note: 'to Baton' },
      configuration: { returnImmediately: true },
    };

    it("request: Baton's chain is the request's only metadata; the message keeps the caller's own and no chain", () => {
      const sent = wireParams({}, turn('request'), params as never, true) as { metadata: unknown; message: { metadata: unknown; contextId: string } };
      expect(sent.metadata).toEqual({ [CONTRACT_EXTENSION]: { chain: contracts } });
      expect(sent.message.metadata).toEqual({ mine: 1 });
      expect(sent.message.contextId).toBe('ctx_1');
    });

    it("message: Baton's chain replaces any in the message; no request metadata travels", () => {
      const sent = wireParams({}, turn('message'), params as never, false) as { metadata?: unknown; message: { metadata: unknown }; configuration: unknown };
      expect(sent).not.toHaveProperty('metadata');
      expect(sent.message.metadata).toEqual({ mine: 1, [CONTRACT_EXTENSION]: { chain: contracts } });
      expect(sent.configuration).toEqual({ returnImmediately: true });
    });

    it('a message without metadata of its own is sent without any where the chain goes in the request', () => {
      const bare = { message: { messageId: 'm2', role: 'ROLE_USER', parts: [{ text: 'y' }] } };
      const sent = wireParams({}, turn('request'), bare as never, true) as { message: Record<string, unknown> };
      expect(sent.message).not.toHaveProperty('metadata');
    });
  });
});
