/**
 * What the record decode cache keeps (records/decode.ts, issue #24 session
 * 32): an admission's records while its turn is in flight, where the
 * stopper's sweep re-reads them; nothing once the turn's verdict ends its
 * follow-up, and nothing the verdict itself stored. Observed by identity: a
 * remembered record is served as the very object stored, a forgotten one is
 * decoded again from its row (equal, not the same). On SQLite, through the
 * store's own admission and settlement programs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { canonicalText } from '../../src/records/canonical.ts';
import { decodeRecord, forgetFollows, rememberStored } from '../../src/records/decode.ts';
import { sealRecord } from '../../src/records/envelope.ts';
import { randomIds } from '../../src/records/ids.ts';
import { systemClock } from '../../src/records/time.ts';
import type { AdmissionReceipt, TaskAdmissionRequest } from '../../src/ledger/types.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { actor, agentScope, FAR, freshSpace, NOW, publishAgent, taskAdmission } from '../store/support/fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-decode-follows-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

const grant = (k: number) => sealRecord({ type: 'grant', body: { k }, issuedBy: actor, lifecycle: 'active' }, { ids: randomIds, clock: systemClock });
const rowOf = (rec: ReturnType<typeof grant>) => ({ record_id: rec.record_id, revision_id: rec.revision_id, content_digest: rec.content_digest, document: canonicalText(rec) });

describe('rememberStored / forgetFollows', () => {
  it('forgets exactly the records remembered for the ended effects', () => {
    const [a1, a2, b, plain] = [grant(1), grant(2), grant(3), grant(4)];
    rememberStored(a1, canonicalText(a1), ['eff_a']);
    rememberStored(a2, canonicalText(a2), ['eff_a']);
    rememberStored(b, canonicalText(b), ['eff_b']);
    rememberStored(plain, canonicalText(plain));
    forgetFollows(['eff_a']);
    const [da1, da2] = [decodeRecord(rowOf(a1)), decodeRecord(rowOf(a2))];
    expect([da1 === a1, da2 === a2]).toStrictEqual([false, false]);
    expect([da1, da2]).toStrictEqual([a1, a2]);
    expect(decodeRecord(rowOf(b))).toBe(b);
    expect(decodeRecord(rowOf(plain))).toBe(plain);
    // An effect ends once: forgetting it again (or one never seen) touches nothing else.
    forgetFollows(['eff_a', 'eff_never']);
    expect(decodeRecord(rowOf(b))).toBe(b);
  });
});

/**
 * A fresh SQLite store with one task admitted from a preset root, its follow-up
 * leased (as store/support/fixtures.ts presetTask does, keeping the request:
 * its permission decision is a record the admission stores).
 */
async function withAdmitted(run: (store: SqliteStore, t: { req: TaskAdmissionRequest; held: AdmissionReceipt; effect: string }) => Promise<void>): Promise<void> {
  const store = SqliteStore.open(join(dir, `s${++n}.db`), { create: true });
  try {
    const space = freshSpace();
    await publishAgent(store, space);
    const root = randomIds.next('dlg');
    const effect = randomIds.next('eff');
    const fence = [...(await store.control.fenceSet([agentScope(space)]))];
    const budget = { space_id: space, owner_namespace: `ns-${space}`, actor_ref: actor, at: NOW(), node_id: root, not_after: FAR, dimensions: [{ name: 'units', unit: 'admission', ceiling: 5n }], preset: { preset_id: randomIds.next('preset'), max_active_roots: 10, max_per_minute: 100 } };
    const follow = { attempt_id: randomIds.next('att'), lease_owner: 'node_test', lease_until: NOW(), deadline: FAR };
    const req = await taskAdmission(store, space, [budget], fence, root, { effect, follow });
    const held = await store.ledger.admitTask(req);
    expect(held.status).toBe('held');
    await run(store, { req, held, effect });
  } finally {
    await store.close();
  }
}

describe('the store remembers an admission\'s records until its verdict', () => {
  it('serves the stored permission decision itself while the turn is in flight, and decodes it again once the verdict ended the follow-up; the verdict\'s receipt is never remembered', () =>
    withAdmitted(async (store, { req, held, effect }) => {
      const decision = req.admission.decision;
      expect(await store.getRecord(decision.record_id, decision.revision_id), 'in flight: the stored object').toBe(decision);

      const receipt = grant(9);
      await store.ledger.settle({ reservation_id: held.reservation_id, outcome: { kind: 'not_dispatched' }, at: NOW(), records: [receipt], ends_follow: effect });
      expect(await store.work.get(effect), 'the follow-up ended').toBeUndefined();
      const again = await store.getRecord(decision.record_id, decision.revision_id);
      expect(again, 'after the verdict: decoded from its row').not.toBe(decision);
      expect(again).toStrictEqual(decision);
      const stored = await store.getRecord(receipt.record_id, receipt.revision_id);
      expect(stored).not.toBe(receipt);
      expect(stored).toStrictEqual(receipt);
    }));

  it('a settlement that ends no follow-up remembers the records it stores', () =>
    withAdmitted(async (store, { held }) => {
      const evidence = grant(10);
      await store.ledger.settle({ reservation_id: held.reservation_id, outcome: { kind: 'not_dispatched' }, at: NOW(), records: [evidence] });
      expect(await store.getRecord(evidence.record_id, evidence.revision_id)).toBe(evidence);
    }));
});
