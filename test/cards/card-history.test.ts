/**
 * ADR-0014: "Unreadable, corrupt or incomplete previously initialized state
 * prevents affected admission; it is not an empty budget." A card's RW-003
 * §4.3 continuity row that cannot be read is storage_error — never "no
 * history", which would accept any actor — whether it is not JSON at all or
 * JSON of the wrong shape.
 */
import { describe, expect, it } from 'vitest';
import { storeCardHistory } from '../../src/cards/card-history.ts';
import { isBatonError } from '../../src/errors.ts';

const ref = { object_id: 'actor_a', revision_id: 'rev_a', content_digest: `sha256:${'a'.repeat(64)}` };
const rowsHolding = (doc: string | undefined) => ({ lastCard: async () => doc, appendCard: async () => undefined });

describe('card continuity history read from the store', () => {
  it.each([
    ['not JSON', '{"agent_actor_ref":'],
    ['JSON of another shape', JSON.stringify({ agent_actor_ref: ref })],
    ['a member it does not know', JSON.stringify({ agent_actor_ref: ref, kids: [], extra: 1 })],
  ])('a row that is %s is storage_error naming the card', async (_what, doc) => {
    const history = storeCardHistory(rowsHolding(doc));
    const err = await Promise.resolve()
      .then(() => history.last('https://agent.example', 'card_1'))
      .catch((e: unknown) => e);
    expect(isBatonError(err, 'storage_error')).toBe(true);
    expect(err).toMatchObject({ message: 'card history row is unreadable', details: { agent_card_id: 'card_1' } });
  });

  it('reads a well-formed row, and no row as no history', async () => {
    expect(await storeCardHistory(rowsHolding(JSON.stringify({ agent_actor_ref: ref, kids: ['k1'] }))).last('https://agent.example', 'card_1')).toEqual({ agent_actor_ref: ref, kids: ['k1'] });
    expect(await storeCardHistory(rowsHolding(undefined)).last('https://agent.example', 'card_1')).toBeUndefined();
  });
});
