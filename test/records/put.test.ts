/**
 * putRecord's refusals (src/records/put.ts), each by its own message and
 * details: a writer told `head_moved` may rebuild and retry, the others may not,
 * so the refusals must not blur into one another. Through the real SQLite adapter.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { detachedOf, ride } from '../../src/records/detached.ts';
import { computeContentDigest, refOf, sealRecord } from '../../src/records/envelope.ts';
import { sequentialIds } from '../../src/records/ids.ts';
import { manualClock } from '../../src/records/time.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { expectCodeAsync } from '../helpers/errors.ts';

const actor = { object_id: 'actor_owner', revision_id: 'rev_1', content_digest: `sha256:${'a'.repeat(64)}` };
const deps = { ids: sequentialIds('put'), clock: manualClock('2026-12-01T10:00:00.000Z') };
const grant = (body: Record<string, unknown>, more: { recordId?: string; prior?: ReturnType<typeof refOf> } = {}) =>
  sealRecord({ type: 'grant', body, issuedBy: actor, lifecycle: 'active', ...more }, deps);

let dir: string;
let store: SqliteStore;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'wt19m-put-'));
  store = SqliteStore.open(join(dir, 'baton.db'), { create: true });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function refusal(record: Parameters<SqliteStore['putRecord']>[0]): Promise<[string, unknown]> {
  const err = await expectCodeAsync(store.putRecord(record), 'invalid_request');
  return [err.message, err.details];
}

describe('putRecord', () => {
  it('refuses content that does not match its digest', async () => {
    const rec = grant({ n: 1 });
    expect(await refusal({ ...rec, body: { n: 2 } })).toStrictEqual(['record content digest does not match its bytes', { record_id: rec.record_id }]);
  });

  it('refuses another record under a revision id already stored', async () => {
    const rec = grant({ n: 1 });
    await store.putRecord(rec);
    const { content_digest: _d, ...rest } = { ...rec, body: { n: 2 } };
    const other = { ...rest, content_digest: computeContentDigest(rest) };
    expect(await refusal(other)).toStrictEqual(['a different record already holds this revision id', { revision_id: rec.revision_id }]);
  });

  it('tells a writer whose prior is not the head that the head moved', async () => {
    const r1 = grant({ n: 1 });
    await store.putRecord(r1);
    await store.putRecord(grant({ n: 2 }, { recordId: r1.record_id, prior: refOf(r1) }));
    const fork = grant({ n: 3 }, { recordId: r1.record_id, prior: refOf(r1) });
    expect(await refusal(fork)).toStrictEqual([
      'a new revision must name the current head as its prior revision',
      { record_id: r1.record_id, conflict: 'head_moved' },
    ]);
  });

  it('refuses a prior revision that belongs to another record, even when its id is the head', async () => {
    const r1 = grant({ n: 1 });
    const elsewhere = grant({ n: 9 });
    await store.putRecord(r1);
    await store.putRecord(elsewhere);
    const crossed = grant({ n: 2 }, { recordId: r1.record_id, prior: { ...refOf(elsewhere), revision_id: r1.revision_id } });
    expect(await refusal(crossed)).toStrictEqual(['prior revision belongs to another record', {}]);
  });

  it('refuses a prior revision of a record never stored', async () => {
    const ghost = grant({ n: 9 }, { recordId: 'grant_ghost', prior: { object_id: 'grant_ghost', revision_id: 'rev_ghost', content_digest: actor.content_digest } });
    expect(await refusal(ghost)).toStrictEqual(['prior revision is unknown', { record_id: 'grant_ghost' }]);
  });

  it('refuses the head revision id with another digest: that revision never existed', async () => {
    const r1 = grant({ n: 1 });
    await store.putRecord(r1);
    const forged = grant({ n: 2 }, { recordId: r1.record_id, prior: { ...refOf(r1), content_digest: actor.content_digest } });
    expect(await refusal(forged)).toStrictEqual(['prior revision digest does not match the current head', { record_id: r1.record_id }]);
    // The exact ref is accepted.
    expect(await store.putRecord(grant({ n: 2 }, { recordId: r1.record_id, prior: refOf(r1) }))).toBe('inserted');
  });

  it('stores the prior revision id beside each revision (null for the first)', async () => {
    const r1 = grant({ n: 1 });
    const r2 = grant({ n: 2 }, { recordId: r1.record_id, prior: refOf(r1) });
    await store.putRecord(r1);
    await store.putRecord(r2);
    const rows = store.handle.prepare('SELECT revision_id, prior_revision FROM records WHERE record_id = ? ORDER BY rowid').all(r1.record_id);
    expect(rows).toStrictEqual([
      { revision_id: r1.revision_id, prior_revision: null },
      { revision_id: r2.revision_id, prior_revision: r1.revision_id },
    ]);
  });
  it('a revision without a prior, under a record that has a head, is told the head moved', async () => {
    const r1 = grant({ n: 1 });
    await store.putRecord(r1);
    const unsigned = { ...grant({ n: 2 }), record_id: r1.record_id };
    const orphan = { ...unsigned, content_digest: computeContentDigest(unsigned) };
    expect(await refusal(orphan)).toStrictEqual([
      'a new revision must name the current head as its prior revision',
      { record_id: r1.record_id, conflict: 'head_moved' },
    ]);
  });

  it('stores the content riding beside a record in the same transaction', async () => {
    const content = detachedOf('task_input', { text: 'hello' });
    const rec = ride(grant({ input_digest: content.digest }), [content]);
    expect(await store.putRecord(rec)).toBe('inserted');
    const { stored_at } = store.handle.prepare('SELECT stored_at FROM records WHERE revision_id = ?').get(rec.revision_id) as { stored_at: string };
    const rows = store.handle.prepare('SELECT digest, kind, document, stored_at FROM content').all();
    expect(rows).toStrictEqual([{ digest: content.digest, kind: 'task_input', document: '{"text":"hello"}', stored_at }]);
  });
});
