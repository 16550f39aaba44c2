import { describe, expect, it } from 'vitest';
import {
  assertCardUsableForDelegation,
  canTransition,
  CARD_LIFECYCLE_CHANGED,
  CARD_PUBLISHED,
  createCardLifecycleRegistry,
  projectCardLifecycle,
  type CardEventRecord,
} from '../../src/cards/lifecycle.ts';
import { CARD_LIFECYCLE_STATES } from '../../src/cards/extension.ts';
import { openEnvelope } from '../../src/records/envelope.ts';
import { sequentialIds } from '../../src/records/ids.ts';
import { manualClock } from '../../src/records/time.ts';
import { expectCode, expectCodeAsync } from '../helpers/errors.ts';

const actor = { object_id: 'actor_x', revision_id: 'rev_actor_x_1', content_digest: `sha256:${'a'.repeat(64)}` };
const operator = { object_id: 'actor_ops', revision_id: 'rev_ops_1', content_digest: `sha256:${'b'.repeat(64)}` };

function registry(append: (r: CardEventRecord) => Promise<void> = async () => undefined) {
  const log: CardEventRecord[] = [];
  const reg = createCardLifecycleRegistry({
    append: async (r) => {
      await append(r);
      log.push(r);
    },
    ids: sequentialIds('lc'),
    clock: manualClock('2025-07-01T00:00:00Z'),
    issuedBy: operator,
    spaceId: 'space_1',
  });
  return { reg, log };
}

const publish = { agent_card_id: 'card_x', agent_actor_ref: actor, card_revision_id: 'rev_card_1', card_payload_digest: `sha256:${'c'.repeat(64)}`, form: 'public' as const, asserted_lifecycle: 'active' as const };

describe('card lifecycle', () => {
  it('appends sealed, chained records on the agent scope and projects them', async () => {
    const { reg, log } = registry();
    await reg.published(publish);
    assertCardUsableForDelegation(reg.view('card_x'));
    await reg.changeLifecycle('card_x', 'suspended', 'operator investigation');
    expect(log.map((r) => r.body.event_type)).toEqual([CARD_PUBLISHED, CARD_LIFECYCLE_CHANGED]);
    for (const r of log) expect(openEnvelope(r).content_digest).toBe(r.content_digest);
    expect(log[1]!.record_id).toBe(log[0]!.record_id);
    expect(log[1]!.prior_revision_ref).toEqual({ object_id: log[0]!.record_id, revision_id: log[0]!.revision_id, content_digest: log[0]!.content_digest });
    expect(log[1]!.lifecycle_assertion).toBe('suspended');
    expect(log[0]!.body.control_scope_ref).toEqual({ space_id: 'space_1', scope_kind: 'agent', scope_id: 'card_x' });
    expect(projectCardLifecycle(log)).toEqual(reg.view('card_x'));
  });

  it('refuses a suspended or revoked card for new delegation (context_invalidated)', async () => {
    const { reg } = registry();
    await reg.published(publish);
    await reg.changeLifecycle('card_x', 'suspended', 'anomaly');
    expect(expectCode(() => assertCardUsableForDelegation(reg.view('card_x')), 'context_invalidated').details).toMatchObject({ state: 'suspended' });
    await reg.changeLifecycle('card_x', 'active', 'cleared');
    assertCardUsableForDelegation(reg.view('card_x'));
    await reg.changeLifecycle('card_x', 'revoked', 'key compromise');
    expectCode(() => assertCardUsableForDelegation(reg.view('card_x')), 'context_invalidated');
    expectCode(() => assertCardUsableForDelegation(undefined), 'context_invalidated');
  });

  it('republishing never reactivates; terminal states never move', async () => {
    const { reg } = registry();
    await reg.published(publish);
    await reg.changeLifecycle('card_x', 'suspended', 'anomaly');
    await reg.published({ ...publish, card_revision_id: 'rev_card_2' });
    expect(reg.view('card_x')!.state).toBe('suspended');
    await reg.changeLifecycle('card_x', 'revoked', 'done');
    await expectCodeAsync(reg.changeLifecycle('card_x', 'active', 'undo'), 'invalid_request');
    await expectCodeAsync(reg.published({ ...publish, card_revision_id: 'rev_card_3' }), 'invalid_request');
    for (const t of ['revoked', 'retired', 'superseded'] as const) for (const to of CARD_LIFECYCLE_STATES) expect(canTransition(t, to)).toBe(false);
  });

  it('a proposed card is not usable until activated; first publication cannot be suspended', async () => {
    const { reg } = registry();
    await reg.published({ ...publish, asserted_lifecycle: 'proposed' });
    expectCode(() => assertCardUsableForDelegation(reg.view('card_x')), 'context_invalidated');
    await reg.changeLifecycle('card_x', 'active', 'reviewed');
    assertCardUsableForDelegation(reg.view('card_x'));
    const other = registry().reg;
    await expectCodeAsync(other.published({ ...publish, asserted_lifecycle: 'suspended' }), 'invalid_request');
  });

  it('a failed append leaves the projection unchanged', async () => {
    let fail = false;
    const { reg } = registry(async () => {
      if (fail) throw new Error('disk full');
    });
    await reg.published(publish);
    fail = true;
    await expect(reg.changeLifecycle('card_x', 'revoked', 'x')).rejects.toThrow('disk full');
    expect(reg.view('card_x')!.state).toBe('active');
  });

  it('refuses a stale lifecycle record in a projection', async () => {
    const { reg, log } = registry();
    await reg.published(publish);
    await reg.changeLifecycle('card_x', 'suspended', 'a');
    const replay = [log[0]!, log[1]!, log[1]!];
    expectCode(() => projectCardLifecycle(replay), 'context_invalidated');
  });
});
