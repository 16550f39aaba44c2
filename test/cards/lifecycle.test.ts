import { describe, expect, it } from 'vitest';
import {
  applyCardEvent,
  assertCardUsableForDelegation,
  canTransition,
  CARD_LIFECYCLE_CHANGED,
  CARD_PUBLISHED,
  projectCardLifecycle,
  type CardEventBody,
  type CardEventRecord,
  type CardLifecycleView,
} from '../../src/cards/lifecycle.ts';
import { CARD_LIFECYCLE_STATES, type CardLifecycleState } from '../../src/cards/extension.ts';
import { openEnvelope, sealRecord } from '../../src/records/envelope.ts';
import { sequentialIds } from '../../src/records/ids.ts';
import { manualClock, utc } from '../../src/records/time.ts';
import { expectCode } from '../helpers/errors.ts';

const actor = { object_id: 'actor_x', revision_id: 'rev_actor_x_1', content_digest: `sha256:${'a'.repeat(64)}` };
const operator = { object_id: 'actor_ops', revision_id: 'rev_ops_1', content_digest: `sha256:${'b'.repeat(64)}` };

/**
 * A card's record log: each change sealed as the next revision of the card's
 * record and folded into the projection first (an illegal record never
 * enters the log), as a durable adapter would do it.
 */
function cardLog() {
  const ids = sequentialIds('lc');
  const clock = manualClock('2025-07-01T00:00:00Z');
  const log: CardEventRecord[] = [];
  let view: CardLifecycleView | undefined;
  const scope = { space_id: 'space_1', scope_kind: 'agent' as const, scope_id: 'card_x' };
  const add = (body: CardEventBody, lifecycle: CardLifecycleState): CardEventRecord => {
    const record = sealRecord({ type: 'agent_card', body, issuedBy: operator, lifecycle, prior: view?.head, recordId: log[0]?.record_id }, { ids, clock }) as CardEventRecord;
    view = applyCardEvent(view, record);
    log.push(record);
    return record;
  };
  return {
    log,
    view: () => view,
    published: (input: typeof publish) => add({ event_type: CARD_PUBLISHED, control_scope_ref: scope, ...input }, view?.state ?? input.asserted_lifecycle),
    changeLifecycle: (to: CardLifecycleState, reason: string) => {
      if (!view) throw new Error('unpublished');
      return add({ event_type: CARD_LIFECYCLE_CHANGED, control_scope_ref: scope, agent_card_id: 'card_x', from: view.state, to, reason, effective_at: utc(clock.now()) }, to);
    },
  };
}

const publish: { agent_card_id: string; agent_actor_ref: typeof actor; card_revision_id: string; card_payload_digest: string; form: 'public'; asserted_lifecycle: CardLifecycleState } = { agent_card_id: 'card_x', agent_actor_ref: actor, card_revision_id: 'rev_card_1', card_payload_digest: `sha256:${'c'.repeat(64)}`, form: 'public', asserted_lifecycle: 'active' };

describe('card lifecycle', () => {
  it('appends sealed, chained records on the agent scope and projects them', () => {
    const reg = cardLog();
    const { log } = reg;
    reg.published(publish);
    assertCardUsableForDelegation(reg.view());
    reg.changeLifecycle('suspended', 'operator investigation');
    expect(log.map((r) => r.body.event_type)).toEqual([CARD_PUBLISHED, CARD_LIFECYCLE_CHANGED]);
    for (const r of log) expect(openEnvelope(r).content_digest).toBe(r.content_digest);
    expect(log[1]!.record_id).toBe(log[0]!.record_id);
    expect(log[1]!.prior_revision_ref).toEqual({ object_id: log[0]!.record_id, revision_id: log[0]!.revision_id, content_digest: log[0]!.content_digest });
    expect(log[1]!.lifecycle_assertion).toBe('suspended');
    expect(log[0]!.body.control_scope_ref).toEqual({ space_id: 'space_1', scope_kind: 'agent', scope_id: 'card_x' });
    expect(projectCardLifecycle(log)).toEqual(reg.view());
  });

  it('refuses a suspended or revoked card for new delegation (context_invalidated)', () => {
    const reg = cardLog();
    reg.published(publish);
    reg.changeLifecycle('suspended', 'anomaly');
    expect(expectCode(() => assertCardUsableForDelegation(reg.view()), 'context_invalidated').details).toMatchObject({ state: 'suspended' });
    reg.changeLifecycle('active', 'cleared');
    assertCardUsableForDelegation(reg.view());
    reg.changeLifecycle('revoked', 'key compromise');
    expectCode(() => assertCardUsableForDelegation(reg.view()), 'context_invalidated');
    expectCode(() => assertCardUsableForDelegation(undefined), 'context_invalidated');
  });

  it('republishing never reactivates; terminal states never move', () => {
    const reg = cardLog();
    reg.published(publish);
    reg.changeLifecycle('suspended', 'anomaly');
    reg.published({ ...publish, card_revision_id: 'rev_card_2' });
    expect(reg.view()!.state).toBe('suspended');
    reg.changeLifecycle('revoked', 'done');
    expectCode(() => reg.changeLifecycle('active', 'undo'), 'invalid_request');
    expectCode(() => reg.published({ ...publish, card_revision_id: 'rev_card_3' }), 'invalid_request');
    for (const t of ['revoked', 'retired', 'superseded'] as const) for (const to of CARD_LIFECYCLE_STATES) expect(canTransition(t, to)).toBe(false);
  });

  it('a proposed card is not usable until activated; first publication cannot be suspended', () => {
    const reg = cardLog();
    reg.published({ ...publish, asserted_lifecycle: 'proposed' });
    expectCode(() => assertCardUsableForDelegation(reg.view()), 'context_invalidated');
    reg.changeLifecycle('active', 'reviewed');
    assertCardUsableForDelegation(reg.view());
    expectCode(() => cardLog().published({ ...publish, asserted_lifecycle: 'suspended' }), 'invalid_request');
  });

  it('an illegal change leaves the projection and the log unchanged', () => {
    const reg = cardLog();
    reg.published(publish);
    reg.changeLifecycle('retired', 'done');
    expectCode(() => reg.changeLifecycle('suspended', 'x'), 'invalid_request');
    expect(reg.view()!.state).toBe('retired');
    expect(reg.log).toHaveLength(2);
  });

  it('refuses a stale lifecycle record in a projection', () => {
    const reg = cardLog();
    const { log } = reg;
    reg.published(publish);
    reg.changeLifecycle('suspended', 'a');
    const replay = [log[0]!, log[1]!, log[1]!];
    expectCode(() => projectCardLifecycle(replay), 'context_invalidated');
  });
});
