/** The audit scans, against a real adapter: raw rows, grouped order, keyset paging, and tampering seen through them. */
import { expect, it, type TestContext } from 'vitest';
import { auditStore } from '../../../src/audit/scan.ts';
import type { Store } from '../../../src/store/port.ts';
import { expectCodeAsync } from '../../helpers/errors.ts';
import { scanAll, scansHeadState, seed } from './seed.ts';

export interface AuditHarness {
  store: Store;
  /** Runs SQL directly on the database, as someone with file or superuser access could. */
  exec(sql: string): Promise<void>;
  /** Drops the RW-003 immutability triggers, which forbid exactly this tampering. */
  unlock(): Promise<void>;
  /** Rows of a query run directly on the database. */
  rows<T>(sql: string): Promise<T[]>;
  close(): Promise<void>;
}

const q = (s: string) => `'${s.replaceAll("'", "''")}'`;

export function auditScanContract(open: () => Promise<AuditHarness>): void {
  const withHarness = (fn: (h: AuditHarness, ctx: TestContext) => Promise<void>) => async (ctx: TestContext) => {
    const h = await open();
    try {
      await fn(h, ctx);
    } finally {
      await h.close();
    }
  };

  it(
    'returns the stored rows untouched, grouped by record and by stream, with their heads',
    withHarness(async (h) => {
      const s = await seed(h.store);
      const rows = await scanAll(h.store.audit, 3);
      const stored = await h.rows<{ revision_id: string; document: string }>('SELECT revision_id, document FROM records');
      expect(rows.records).toHaveLength(stored.length);
      for (const r of stored) expect(rows.records.find((x) => x.revision_id === r.revision_id)!.document).toBe(r.document);
      expect(typeof rows.records[0]!.seq).toBe('bigint');

      const grant = rows.records.filter((r) => r.record_id === s.revisions[0]!.record_id);
      expect(grant.map((r) => r.revision_id)).toEqual(s.revisions.map((r) => r.revision_id));
      expect(grant.map((r) => r.prior_revision)).toEqual([null, s.revisions[0]!.revision_id, s.revisions[1]!.revision_id]);
      expect(new Set(grant.map((r) => r.head_revision_id))).toEqual(new Set([s.revisions[2]!.revision_id]));
      // Each record's revisions are contiguous.
      const order = rows.records.map((r) => r.record_id);
      expect(order.filter((id, i) => id !== order[i - 1])).toHaveLength(new Set(order).size);

      const stream = rows.events.filter((e) => e.branch_id === s.attempt.branch_id);
      expect(stream.map((e) => e.position)).toEqual([1n, 2n, 3n, 4n]);
      expect(stream.map((e) => e.event_id)).toEqual(s.attempt.event_ids);
      expect(stream[1]!.idempotency_key).toBe('start-1');
      expect(new Set(stream.map((e) => `${e.head_position}/${e.head_event_id}`))).toEqual(new Set([`4/${s.attempt.event_ids[3]}`]));
      const streams = rows.events.map((e) => `${e.project_id} ${e.branch_id}`);
      expect(streams.filter((k, i) => k !== streams[i - 1])).toHaveLength(new Set(streams).size);

      expect(rows.recordHeads.find((r) => r.record_id === s.single.record_id)).toMatchObject({ revision_id: s.single.revision_id, last_seq: expect.any(BigInt) });
      expect(rows.controlHeads.find((r) => r.branch_id === s.attempt.branch_id)).toMatchObject({ position: 4n, last_position: 4n });
      expect(await scanAll(h.store.audit, 1000)).toEqual(rows);
      expect(await auditStore(h.store.audit, { pageSize: 2 })).toMatchObject({ break_count: 0, records_checked: stored.length, events_checked: rows.events.length });
    }),
  );

  it(
    "carries each head's stored state and scope_kind on its stream's events, and finds one flipped in the database",
    withHarness(async (h) => {
      const s = await seed(h.store);
      const rows = await scanAll(h.store.audit, 3);
      // Both adapters carry the head's state on every event row (src/store/audit-sql.ts): a scan that stops doing so fails here.
      expect(scansHeadState(rows)).toBe(true);
      for (const a of Object.values(s.authority)) {
        const stream = rows.events.filter((e) => e.project_id === a.project_id && e.branch_id === a.branch_id);
        expect(new Set(stream.map((e) => `${e.head_state}/${e.head_scope_kind}`)), a.branch_id).toEqual(new Set([`${a.state}/${a.scope_kind}`]));
      }
      expect(await auditStore(h.store.audit, { pageSize: 2 })).toMatchObject({ break_count: 0, head_states_checked: rows.controlHeads.length });

      // No trigger guards control_heads: it is the projection every append rewrites.
      const { project_id, branch_id } = s.authority.revoked;
      await h.exec(`UPDATE control_heads SET state = 'active' WHERE project_id = ${q(project_id)} AND branch_id = ${q(branch_id)}`);
      expect(await h.store.control.streamHead(s.authority.revoked)).toMatchObject({ state: 'active' });
      const report = await auditStore(h.store.audit, { pageSize: 2 });
      expect(report.breaks).toEqual([{ kind: 'head_state_mismatch', where: { project_id, branch_id }, detail: 'state: stored active, recomputed revoked' }]);
    }),
  );

  it(
    'sees a record the decoder refuses, so the audit can name it',
    withHarness(async (h) => {
      const s = await seed(h.store);
      await h.unlock();
      await h.exec(`UPDATE records SET document = replace(document, '"only":true', '"only":1') WHERE revision_id = ${q(s.single.revision_id)}`);
      await expectCodeAsync(h.store.getRecord(s.single.record_id), 'storage_error');
      const report = await auditStore(h.store.audit, { pageSize: 2 });
      expect(report.breaks).toEqual([expect.objectContaining({ kind: 'record_digest_mismatch', where: expect.objectContaining({ revision_id: s.single.revision_id }) })]);
    }),
  );

  it(
    'finds a deleted middle event and a tampered event document',
    withHarness(async (h) => {
      const s = await seed(h.store);
      const { project_id, branch_id, event_ids } = s.attempt;
      await h.unlock();
      await h.exec(`DELETE FROM control_events WHERE project_id = ${q(project_id)} AND branch_id = ${q(branch_id)} AND position = 2`);
      await h.exec(`UPDATE control_events SET document = replace(document, '"step":4', '"step":5') WHERE event_id = ${q(event_ids[3]!)}`);
      const report = await auditStore(h.store.audit, { pageSize: 1 });
      expect(report.breaks.map((b) => [b.kind, b.where.event_id])).toEqual([
        ['event_position_gap', event_ids[2]],
        ['event_digest_mismatch', event_ids[3]],
        ['event_column_mismatch', event_ids[3]],
      ]);
    }),
  );

  it(
    'finds heads that point past their chains, and heads with no chain',
    withHarness(async (h) => {
      const s = await seed(h.store);
      await h.exec(`UPDATE record_heads SET revision_id = ${q(s.revisions[1]!.revision_id)} WHERE record_id = ${q(s.revisions[0]!.record_id)}`);
      await h.exec(`UPDATE control_heads SET position = 9 WHERE branch_id = ${q(s.attempt.branch_id)}`);
      await h.exec(`INSERT INTO control_heads(project_id, branch_id, scope_kind, position, event_id, event_digest, state)
                    VALUES ('rw-control:nowhere', 'agent:ghost', 'agent', 1, 'evt_ghost', ${q(`sha256:${'0'.repeat(64)}`)}, 'active')`);
      const report = await auditStore(h.store.audit);
      expect(report.breaks.map((b) => b.kind).sort()).toEqual(['control_head_dangling', 'control_head_mismatch', 'record_head_mismatch']);
    }),
  );
}
