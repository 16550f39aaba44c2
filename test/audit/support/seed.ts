/** Real records and control events, written through a Store, for the audit tests. */
import { AuditVerifier, type AuditEventInput, type AuditReport } from '../../../src/audit/verify.ts';
import { refOf, sealRecord, type SealedRecord } from '../../../src/records/envelope.ts';
import { randomIds } from '../../../src/records/ids.ts';
import { systemClock } from '../../../src/records/time.ts';
import type { AuditControlHeadRow, AuditReads, AuditRecordHeadRow, AuditRecordRow, Store } from '../../../src/store/port.ts';
import type { EventType } from '../../../src/control/event.ts';
import { streamOf, type ControlScopeRef, type StreamId } from '../../../src/control/scope.ts';
import { actor, admission, agentScope, attemptScope, chain, delegationScope, freshSpace, publishAgent } from '../../store/support/fixtures.ts';

const deps = { ids: randomIds, clock: systemClock };

export interface Seeded {
  space: string;
  /** Three revisions of one grant, oldest first. */
  revisions: Array<SealedRecord<Record<string, unknown>>>;
  /** A single-revision grant. */
  single: SealedRecord<Record<string, unknown>>;
  /** An attempt stream of four events. */
  attempt: { project_id: string; branch_id: string; event_ids: string[] };
  /** Authority streams that moved past their first state, each with the state its head should project. */
  authority: {
    /** A delegation revoked for cause. */
    revoked: AuthorityStream;
    /** A delegation revoked for a reassignment, then reassigned under a new contract revision. */
    reassigned: AuthorityStream;
    /** The agent: published, breaker tripped and reset, suspended, reactivated. */
    agent: AuthorityStream;
    /** A space suspended, then retired. */
    space: AuthorityStream;
  };
}

export interface AuthorityStream extends StreamId {
  state: string;
  scope_kind: string;
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

  // State changes on authority streams, through the store's own append path, after the admission that needed them active.
  const append = async (ref: ControlScopeRef, event_type: EventType, payload: Record<string, unknown>) =>
    store.control.appendControl({ event_type, control_scope_ref: ref, actor_ref: actor, payload });
  const revoked = delegationScope(space, c.leaf);
  await append(revoked, 'rw003.delegation.revoked', { reason: 'audit seed' });
  const reassigned = delegationScope(space, c.child);
  await append(reassigned, 'rw003.delegation.revoked', { reason: 'audit seed', reassignment: true });
  await append(reassigned, 'rw003.delegation.reassigned', { contract_revision: 'rev_reassigned' });
  const agent = agentScope(space);
  await append(agent, 'rw003.circuit_breaker.tripped', { action: 'trip', trigger: 'manual', reason: 'audit seed' });
  await append(agent, 'rw003.circuit_breaker.tripped', { action: 'reset', reason: 'audit seed' });
  await append(agent, 'rw003.agent_card.lifecycle_changed', { lifecycle: 'suspended' });
  await append(agent, 'rw003.agent_card.lifecycle_changed', { lifecycle: 'active' });
  const spaceScope: ControlScopeRef = { space_id: space, scope_kind: 'space', scope_id: space };
  await append(spaceScope, 'baton.scope.lifecycle_changed', { lifecycle: 'suspended' });
  await append(spaceScope, 'baton.scope.lifecycle_changed', { lifecycle: 'retired' });
  const at = (ref: ControlScopeRef, state: string): AuthorityStream => ({ ...streamOf(ref), state, scope_kind: ref.scope_kind });
  const authority = { revoked: at(revoked, 'revoked'), reassigned: at(reassigned, 'active'), agent: at(agent, 'active'), space: at(spaceScope, 'retired') };

  return { space, revisions, single, attempt: { ...stream, event_ids }, authority };
}

/** A control_heads row's projected columns. */
export interface HeadStateRow extends StreamId {
  state: string;
  scope_kind: string;
}

/**
 * Each event row with its stream's head_state and head_scope_kind from `heads`,
 * as read straight from control_heads: what AuditReads.scanEvents selects
 * once the store carries them, so the verifier can be tested on real heads either way.
 */
export function withHeadStates(rows: Scanned, heads: readonly HeadStateRow[]): Scanned {
  const by = new Map(heads.map((h) => [`${h.project_id} ${h.branch_id}`, h]));
  return {
    ...rows,
    events: rows.events.map((e) => {
      const h = by.get(`${e.project_id} ${e.branch_id}`);
      return { ...e, head_state: h?.state ?? null, head_scope_kind: h?.scope_kind ?? null };
    }),
  };
}

/** Whether the store's own event scan carries each head's state (src/store/audit-sql.ts selects it). */
export const scansHeadState = (rows: Scanned): boolean => rows.events.length > 0 && rows.events.every((e) => 'head_state' in e && 'head_scope_kind' in e);

export interface Scanned {
  records: AuditRecordRow[];
  recordHeads: AuditRecordHeadRow[];
  events: AuditEventInput[];
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
