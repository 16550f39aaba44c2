/**
 * Card checks that must hold across restarts and against a correctly signed
 * but hostile card: RW-003 §4.3 continuity kept in a real SQLite store, the
 * signer's declared validity window.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { storeCardHistory } from '../../src/cards/card-history.ts';
import { signContinuity } from '../../src/cards/continuity.ts';
import { verifyCardBytes, type VerifyCardDeps } from '../../src/cards/verify.ts';
import { manualClock } from '../../src/records/time.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { expectCodeAsync } from '../helpers/errors.ts';
import { ORIGIN, remoteCard, rw003Params, signedBytes, testKey, trustFor, type JsonObject } from './helpers.ts';

const clock = manualClock('2025-07-01T00:00:00Z');
const verify = (bytes: Uint8Array, deps: Omit<VerifyCardDeps, 'clock'>) => verifyCardBytes({ bytes, origin: ORIGIN, source: `${ORIGIN}/.well-known/agent-card.json` }, { clock, ...deps });
const dir = mkdtempSync(join(tmpdir(), 'baton-card-safety-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const newActor = { object_id: 'actor_extractor_v2', revision_id: 'rev_actor_extractor_v2_1', content_digest: `sha256:${'2'.repeat(64)}` };

/** Runs `fn` with a card history over a freshly opened store (a gateway process's lifetime). */
async function inProcess<T>(path: string, fn: (history: ReturnType<typeof storeCardHistory>) => Promise<T>): Promise<T> {
  const store = SqliteStore.open(path, { create: true });
  try {
    return await fn(storeCardHistory(store.meta));
  } finally {
    await store.close();
  }
}

describe('RW-003 §4.3 continuity survives a restart', () => {
  it('refuses a changed agent_actor_ref after a restart, accepts it with an attestation and records it, then refuses a silent change back', async () => {
    const path = join(dir, 'history.db');
    const k = await testKey();
    const trust = await trustFor([k]);
    const first = remoteCard([k]);
    const prior = rw003Params(first).agent_actor_ref as never;
    await inProcess(path, async (history) => void (await verify(await signedBytes(first, [k]), { trust, history })));

    const changed = remoteCard([k]);
    rw003Params(changed).agent_actor_ref = newActor;
    const err = await inProcess(path, async (history) => expectCodeAsync(verify(await signedBytes(changed, [k]), { trust, history }), 'invalid_request'));
    expect(err.message).toMatch(/continuity/);

    const attested = remoteCard([k]);
    rw003Params(attested).agent_actor_ref = newActor;
    rw003Params(attested).continuity = (await signContinuity({ agentCardId: 'card_extractor', prior, next: newActor, attestedAt: '2025-06-02T00:00:00Z' }, k)) as never;
    await inProcess(path, async (history) => {
      expect((await verify(await signedBytes(attested, [k]), { trust, history })).agent_actor_ref).toEqual(newActor);
      expect((await history.last(ORIGIN, 'card_extractor'))?.continuity?.prior_agent_actor_ref).toEqual(prior);
    });

    await inProcess(path, async (history) => expectCodeAsync(verify(await signedBytes(first, [k]), { trust, history }), 'invalid_request'));
  });

  it('an unchanged card is recorded once, not on every verification', async () => {
    const path = join(dir, 'once.db');
    const k = await testKey();
    const trust = await trustFor([k]);
    const bytes = await signedBytes(remoteCard([k]), [k]);
    await inProcess(path, async (history) => {
      for (let i = 0; i < 3; i++) await verify(bytes, { trust, history });
    });
    const store = SqliteStore.open(path);
    expect(store.handle.prepare('SELECT count(*) AS n FROM card_history').get()).toEqual({ n: 1n });
    await store.close();
  });
});

describe('RW-003 §4.1 signer validity window', () => {
  const withWindow = (card: JsonObject, window: { valid_from: string; valid_until?: string }) => {
    const keys = (rw003Params(card).signer as JsonObject).keys as JsonObject[];
    Object.assign(keys[0]!, window);
    return card;
  };

  it('refuses a card whose signing key the card itself declares expired', async () => {
    const k = await testKey();
    const card = withWindow(remoteCard([k]), { valid_from: '2025-01-01T00:00:00Z', valid_until: '2025-06-30T00:00:00Z' });
    const err = await expectCodeAsync(verify(await signedBytes(card, [k]), { trust: await trustFor([k]) }), 'invalid_request');
    expect(err.details).toMatchObject({ reason: 'signer_key_not_valid', kid: k.kid });
  });

  it('refuses a key not valid yet, accepts one inside its window', async () => {
    const k = await testKey();
    const early = withWindow(remoteCard([k]), { valid_from: '2025-08-01T00:00:00Z' });
    await expectCodeAsync(verify(await signedBytes(early, [k]), { trust: await trustFor([k]) }), 'invalid_request');
    const inside = withWindow(remoteCard([k]), { valid_from: '2025-01-01T00:00:00Z', valid_until: '2025-12-31T00:00:00Z' });
    await verify(await signedBytes(inside, [k]), { trust: await trustFor([k]) });
  });
});
