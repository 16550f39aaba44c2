import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { randomIds } from '../../src/records/ids.ts';
import { sealRecord } from '../../src/records/envelope.ts';
import { systemClock } from '../../src/records/time.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { Keyring } from '../../src/keys/keyring.ts';
import { actor, admission, chain, freshSpace, publishAgent } from '../store/support/fixtures.ts';
import { baton } from './run.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-reconcile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('baton reconcile', () => {
  it('tries every unresolved reservation, reports the one that fails with its code, and exits 1', async () => {
    const path = join(dir, 'r.db');
    const store = SqliteStore.open(path, { create: true });
    const space = freshSpace();
    await publishAgent(store, space);
    const c = await chain(store, space, { root: 10n });
    // One reservation whose attempt record does not parse (a record this build cannot read), one with no attempt at all.
    const attemptId = randomIds.next('att');
    const broken = sealRecord({ type: 'execution_attempt', issuedBy: actor, lifecycle: 'active', body: { attempt_id: attemptId } }, { ids: { next: (p) => (p === 'rev' ? randomIds.next('rev') : attemptId) }, clock: systemClock });
    await store.putRecord(broken);
    const first = await admission(store, space, [c.root, c.child, c.leaf], c.leaf);
    const effect = first.effect_id;
    first.decision = sealRecord({ type: 'permission_decision', body: { effect_id: effect, decision: 'allow', attempt_id: attemptId }, issuedBy: actor, lifecycle: 'recorded' }, { ids: randomIds, clock: systemClock });
    await store.ledger.admit(first);
    const second = await admission(store, space, [c.root, c.child, c.leaf], c.leaf);
    await store.ledger.admit(second);
    await store.close();
    await Keyring.open(join(dir, 'keys')); // the gateway's keys, as `baton init` or `serve` left them

    const out = await baton(['reconcile'], { BATON_SQLITE_PATH: path, BATON_DATA_DIR: dir, BATON_KEYS_DIR: join(dir, 'keys'), BATON_LOG_LEVEL: 'silent' });
    expect(out.code, out.stderr + out.stdout).toBe(1);
    expect(out.stdout).toMatch(new RegExp(`^${first.reservation_id}\\s+held\\s+failed \\(storage_error\\): a stored attempt record does not parse`, 'm'));
    expect(out.stdout).toMatch(new RegExp(`^${second.reservation_id}\\s+held\\s+no attempt record for this reservation`, 'm'));
    expect(out.stderr).toContain('1 of 2 could not be reconciled');
  }, 60_000);
});
