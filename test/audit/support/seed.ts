/** Real records and control events, written through a Store, for the audit tests. */
import { AuditVerifier, type AuditReport } from '../../../src/audit/verify.ts';
import { refOf, sealRecord, type SealedRecord } from '../../../src/records/envelope.ts';
import { randomIds } from '../../../src/records/ids.ts';
import { systemClock } from '../../../src/records/time.ts';
import type { AuditControlHeadRow, AuditEventRow, AuditReads, AuditRecordHeadRow, AuditRecordRow, Store } from '../../../src/store/port.ts';
import { actor, admission, attemptScope, chain, freshSpace, publishAgent } from '../../store/support/fixtures.ts';

const deps = { ids: randomIds, clock: systemClock };

export interface Seeded {
  space: string;
  /** Three revisions of one grant, oldest first. */
  revisions: Array<SealedRecord<Record<string, unknown>>>;
  /** A single-revision grant. */
  single: SealedRecord<Record<string, unknown>>;
  /** An attempt stream of four events. */
  attempt: { project_id: string; branch_id: string; event_ids: string[] };
}

export async function seed(store: Store): Promise<Seeded> {
  const space = freshSpace();
  await publishAgent(store, space);
  const c = await chain(store, space, { root: 10n, child: 5n, leaf: 3n });
  await store.ledger.admit(await admission(store, space, [c.root, c.child, c.leaf], c.leaf, { units: 2n }));

  const first = sealRecord({ type: 'grant', body: { n: 1, scope: ['read'] }, issuedBy: actor, lifecycle: 'active' }, deps);
  const revisions = [first];
  for (const n of [2, 3]) {
    const prev = revisions[revisions.length - 1]!;
    revisions.push(sealRecord({ type: 'grant', body: { n, scope: ['read'] }, issuedBy: actor, lifecycle: 'active', recordId: prev.record_id, prior: refOf(prev) }, deps));
  }
  for (const r of revisions) await store.putRecord(r);
  const single = sealRecord({ type: 'grant', body: { only: true }, issuedBy: actor, lifecycle: 'active' }, deps);
  await store.putRecord(single);

  const scope = attemptScope(space, randomIds.next('att'));
  const types = ['rw003.permission.evaluated', 'rw003.execution.started', 'rw003.execution.checkpointed', 'rw003.execution.terminal'] as const;
  const event_ids: string[] = [];
  for (const [i, event_type] of types.entries()) {
    const e = await store.control.appendControl({
      event_type,
      control_scope_ref: scope,
      actor_ref: actor,
      payload: { step: i + 1 },
      ...(i === 1 ? { idempotency_key: `start-${i}` } : {}),
      ...(event_type === 'rw003.execution.terminal' ? { outcome: 'succeeded' as const } : {}),
    });
    event_ids.push(e.event_id);
  }
  const stream = { project_id: `rw-control:${space}`, branch_id: `attempt:${scope.scope_id}` };
  return { space, revisions, single, attempt: { ...stream, event_ids } };
}

export interface Scanned {
  records: AuditRecordRow[];
  recordHeads: AuditRecordHeadRow[];
  events: AuditEventRow[];
  controlHeads: AuditControlHeadRow[];
}

/** Every row of every audit scan, a page of `size` at a time. */
export async function scanAll(reads: AuditReads, size = 1000): Promise<Scanned> {
  const all = async <R, C>(scan: (after: C | undefined, n: number) => Promise<R[]>, cursor: (r: R) => C): Promise<R[]> => {
    const out: R[] = [];
    for (let after: C | undefined; ; ) {
      const page = await scan(after, size);
      out.push(...page);
      const last = page[page.length - 1];
      if (last === undefined) return out;
      after = cursor(last);
    }
  };
  return {
    records: await all(reads.scanRecords.bind(reads), (r) => ({ record_id: r.record_id, seq: r.seq })),
    recordHeads: await all(reads.scanRecordHeads.bind(reads), (r) => r.record_id),
    events: await all(reads.scanEvents.bind(reads), (r) => ({ project_id: r.project_id, branch_id: r.branch_id, position: r.position })),
    controlHeads: await all(reads.scanControlHeads.bind(reads), (r) => ({ project_id: r.project_id, branch_id: r.branch_id })),
  };
}

/** Runs the pure verifier over rows in scan order. */
export function verifyRows(rows: Scanned, maxBreaks?: number): AuditReport {
  const v = new AuditVerifier(maxBreaks === undefined ? {} : { maxBreaks });
  rows.records.forEach((r) => v.record(r));
  rows.recordHeads.forEach((r) => v.recordHead(r));
  rows.events.forEach((r) => v.event(r));
  rows.controlHeads.forEach((r) => v.controlHead(r));
  return v.finish();
}
