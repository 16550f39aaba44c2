/**
 * RW-003 §4.3 continuity history kept in the store, so a restart (or another
 * node) still knows which actor a card belonged to and refuses a silent
 * change. Rows are append-only; the newest per (origin, agent_card_id) wins,
 * and a row for a changed actor carries the continuity attestation that
 * allowed it.
 */
import { z } from 'zod';
import { storageError } from '../errors.ts';
import type { AcceptedCardMemory, CardHistory } from './continuity.ts';

/** The two store operations this needs (src/store/meta.ts MetaStore). */
export interface CardHistoryRows {
  lastCard(origin: string, agentCardId: string): Promise<string | undefined>;
  appendCard(origin: string, agentCardId: string, document: string, at: string): Promise<void>;
}

const Ref = z.strictObject({ object_id: z.string(), revision_id: z.string(), content_digest: z.string() });
const Memory = z.strictObject({
  agent_actor_ref: Ref,
  kids: z.array(z.string()),
  continuity: z.strictObject({ prior_agent_actor_ref: Ref, attested_at: z.string(), attestation: z.strictObject({ protected: z.string(), signature: z.string() }) }).optional(),
});

export function storeCardHistory(rows: CardHistoryRows, now: () => Date = () => new Date()): CardHistory {
  return {
    async last(origin, agentCardId) {
      const doc = await rows.lastCard(origin, agentCardId);
      if (doc === undefined) return undefined;
      // ADR-0014: unreadable history is not "no history" (that would accept any actor) — nor a bare SyntaxError.
      const unreadable = (cause?: unknown) => storageError('card history row is unreadable', { agent_card_id: agentCardId }, cause);
      let json: unknown;
      try {
        json = JSON.parse(doc);
      } catch (cause) {
        throw unreadable(cause);
      }
      const parsed = Memory.safeParse(json);
      if (!parsed.success) throw unreadable();
      return parsed.data as AcceptedCardMemory;
    },
    async remember(origin, agentCardId, memory) {
      await rows.appendCard(origin, agentCardId, JSON.stringify(memory), now().toISOString());
    },
  };
}
