/**
 * Escalations: what Baton could not settle on its own and hands to a human
 * (RW-003 §7.3 "escalates", §8 "unknown acknowledgements trigger read-back
 * and escalation"). Each is an immutable record — visible to the operator
 * API and CLI — plus a warning in the log and, when configured, a signed
 * delivery to the operator's webhook through the push outbox.
 */
import { invalidRequest } from '../errors.ts';
import type { Logger } from '../log.ts';
import { refOf, sealRecord, type SealedRecord } from '../records/envelope.ts';
import type { IdSource } from '../records/ids.ts';
import type { ActorRef } from '../records/revision-ref.ts';
import { schemaRefFor } from '../records/schema-ref.ts';
import { utc, type Clock } from '../records/time.ts';
import type { Store } from '../store/port.ts';
import { currentWhere } from '../store/scan.ts';
import type { Envelope } from '../records/envelope.ts';

export const ESCALATION_KINDS = ['cancel_unacknowledged', 'reassignment_refused', 'breaker_tripped', 'effect_unverifiable', 'consumption_disputed'] as const;
export type EscalationKind = (typeof ESCALATION_KINDS)[number];

export interface EscalationBody {
  [key: string]: unknown;
  kind: EscalationKind;
  /** What it is about: an attempt, a delegation, a control scope. */
  subject: { attempt_id?: string; delegation_id?: string; scope?: string };
  reasons: string[];
  raised_at: string;
  state: 'open' | 'acknowledged';
  acknowledged_by?: ActorRef;
  note?: string;
}

export type Escalation = SealedRecord<EscalationBody>;
export const ESCALATION_SCHEMA = schemaRefFor('escalation');

export interface EscalationDeps {
  store: Store;
  logger: Logger;
  ids: IdSource;
  clock: Clock;
  actor: ActorRef;
  /** Sends the escalation to the operator's webhook, if one is configured. */
  notify?: (e: Escalation) => Promise<void>;
}

export class Escalations {
  constructor(private readonly deps: EscalationDeps) {}

  async raise(kind: EscalationKind, subject: EscalationBody['subject'], reasons: readonly string[]): Promise<Escalation> {
    const record = sealRecord<EscalationBody>(
      {
        type: 'escalation',
        issuedBy: this.deps.actor,
        lifecycle: 'active',
        body: { kind, subject, reasons: reasons.map((r) => r.slice(0, 512)).slice(0, 32), raised_at: utc(this.deps.clock.now()), state: 'open' },
      },
      this.deps,
    );
    await this.deps.store.putRecord(record);
    this.deps.logger.warn({ escalation: record.record_id, kind, subject, reasons: record.body.reasons }, 'escalated to the operator');
    if (this.deps.notify) {
      await this.deps.notify(record).catch((err) => this.deps.logger.warn({ escalation: record.record_id, err: err instanceof Error ? err.message : String(err) }, 'operator webhook enqueue failed'));
    }
    return record;
  }

  /** Newest first, optionally only open or acknowledged ones; a bounded scan. */
  async list(opts: { state?: 'open' | 'acknowledged'; limit?: number } = {}): Promise<Escalation[]> {
    const limit = Math.min(Math.max(opts.limit ?? 100, 1), 1000);
    return currentWhere<Escalation & Envelope>(this.deps.store, ESCALATION_SCHEMA, (r) => !opts.state || r.body.state === opts.state, { limit, pages: 20, pageSize: 200 });
  }

  /** An operator took it on: a new revision; the raised one stays in history. */
  async acknowledge(id: string, by: ActorRef, note: string): Promise<Escalation> {
    const current = (await this.deps.store.getRecord(id)) as unknown as Escalation | undefined;
    if (!current || current.schema_ref !== ESCALATION_SCHEMA) throw invalidRequest('no such escalation', { escalation: id.slice(0, 128) });
    if (current.body.state === 'acknowledged') return current;
    const next = sealRecord<EscalationBody>(
      { type: 'escalation', issuedBy: by, lifecycle: 'recorded', recordId: id, prior: refOf(current), body: { ...{}, ...current.body, state: 'acknowledged', acknowledged_by: by, note: note.slice(0, 2048) } },
      this.deps,
    );
    await this.deps.store.putRecord(next);
    return next;
  }
}
