/**
 * Signed consumption receipts across the boundary (issue #16 "Budget across
 * the boundary"; ADR-0014: a settlement never debits more than the reserved
 * maximum). The downstream states, under its contract keys, what one effect
 * actually consumed in its own ledger under the upstream's delegation; the
 * upstream settles its own reservation for that effect from it — never above
 * what it reserved. Pure: no I/O.
 */
import { z } from 'zod';
import { Identifier } from '../records/ids.ts';
import { RevisionRef } from '../records/revision-ref.ts';
import { UtcTime } from '../records/time.ts';

export const CONSUMPTION_RECEIPT_TYPE = 'baton.consumption_receipt/v1';
export const CONSUMPTION_JWS_TYP = 'baton-consumption-receipt+jws';

const Amount = z.string().regex(/^(0|[1-9][0-9]{0,30})$/);

export const ConsumptionReceipt = z.strictObject({
  typ: z.literal(CONSUMPTION_RECEIPT_TYPE),
  /** The downstream gateway (its contract keys sign this). */
  iss: Identifier,
  /** The upstream gateway the delegation came from. */
  aud: Identifier,
  /** The upstream's delegation the effect ran under (the upstream's leaf for the downstream). */
  subject: Identifier,
  /** The downstream's task id (its attempt id), as the upstream knows it. */
  task_id: Identifier,
  /** The downstream's effect whose reservation this reports (its newest turn). */
  effect_id: Identifier,
  /** The downstream's verification receipt for that effect. */
  receipt_ref: RevisionRef,
  /** How the downstream resolved its reservation. */
  status: z.enum(['settled', 'consumed', 'released']),
  /** Amounts consumed per dimension in the downstream's ledger. */
  consumed: z.record(z.string().min(1).max(64), Amount),
  issued_at: UtcTime,
});
export type ConsumptionReceipt = z.infer<typeof ConsumptionReceipt>;

/** What the upstream records beside its verification receipt, and settles by. */
export interface ConsumptionEvidence {
  [key: string]: unknown;
  /**
   * agreed: settled at the downstream's amounts; capped: the receipt claimed
   * more than reserved (or an unreserved dimension), settled at the
   * reservation and escalated; missing/refused: no usable receipt, the
   * reservation is settled as consumed in full, as without federation.
   */
  status: 'agreed' | 'capped' | 'missing' | 'refused';
  /** Amounts this settlement debits (never above the reservation). */
  settled: Record<string, string>;
  reason?: string;
  /** The receipt as received (compact JWS), when it verified. */
  jws?: string;
  claimed?: Record<string, string>;
  downstream?: string;
  downstream_receipt_ref?: ConsumptionReceipt['receipt_ref'];
  downstream_task_id?: string;
}

export interface ReceiptExpectation {
  iss: string;
  aud: string;
  subject: string;
  task_id: string;
}

/** Who and what the receipt must name; the reasons it does not (empty: it does). */
export function receiptMismatches(r: ConsumptionReceipt, e: ReceiptExpectation): string[] {
  const out: string[] = [];
  if (r.iss !== e.iss) out.push('issuer');
  if (r.aud !== e.aud) out.push('audience');
  if (r.subject !== e.subject) out.push('delegation');
  if (r.task_id !== e.task_id) out.push('task');
  return out;
}

/**
 * The rule: the settled amount per reserved dimension is what the receipt
 * claims, capped at the reservation; a claim above it, or on a dimension
 * that was not reserved, makes the settlement `capped` (a dispute for the
 * operator), never a bigger debit.
 */
export function settleAgainst(reserved: Readonly<Record<string, string>>, claimed: Readonly<Record<string, string>>): { settled: Record<string, string>; over: string[] } {
  const settled: Record<string, string> = {};
  const over: string[] = [];
  for (const [dim, max] of Object.entries(reserved)) {
    const c = BigInt(claimed[dim] ?? '0');
    const m = BigInt(max);
    if (c > m) over.push(dim);
    settled[dim] = (c > m ? m : c).toString();
  }
  for (const dim of Object.keys(claimed)) if (!(dim in reserved)) over.push(dim);
  return { settled, over };
}

/** Without a usable receipt the upstream settles as it would without federation: the whole reservation consumed. */
export function settleWithout(reserved: Readonly<Record<string, string>>, status: 'missing' | 'refused', reason: string): ConsumptionEvidence {
  return { status, settled: { ...reserved }, reason };
}
