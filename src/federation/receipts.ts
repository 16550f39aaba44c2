/**
 * Consumption receipts across a separate-store boundary (issue #16, README
 * "Gateway to gateway", Budget): the downstream signs what an effect
 * consumed in its ledger; the upstream settles its reservation by a receipt
 * that verifies under the downstream's pinned keys, never above what it
 * reserved. Split from federation.ts, which supplies the context.
 */
import type { KeySet } from '../cards/jwks.ts';
import { loadChain } from '../contracts/attestation-chain.ts';
import { parseContract, type DelegationContract } from '../contracts/model.ts';
import { isBatonError } from '../errors.ts';
import type { Keyring } from '../keys/keyring.ts';
import { utc, type Clock } from '../records/time.ts';
import type { Store } from '../store/port.ts';
import type { AttemptBody } from '../attempts/record.ts';
import { CONSUMPTION_JWS_TYP, CONSUMPTION_RECEIPT_TYPE, ConsumptionReceipt, receiptMismatches, settleAgainst, settleWithout, type ConsumptionEvidence } from './consumption.ts';
import { signJws, verifyJws } from './jws.ts';
import type { DownstreamLink } from './federation.ts';
import type { ChainSplit } from './scopes.ts';

export interface ReceiptContext {
  store: Store;
  keyring: Keyring;
  clock: Clock;
  self: string;
  downstreams: readonly DownstreamLink[];
  /** Any separate-store upstream configured (without one, no chain can split). */
  hasUpstreams: boolean;
  split(contracts: readonly DelegationContract[]): ChainSplit | undefined;
  jwksAt(file: string): Promise<KeySet>;
}

/**
 * Downstream side (issue #16 "B's verdict carries a signed consumption
 * receipt"): for a closed task under a chain imported from a separate-store
 * upstream, what its newest effect consumed in this ledger, signed with
 * this gateway's contract keys for that upstream. Undefined while the
 * effect's reservation is unresolved, and for any other task.
 */
export async function signedConsumption(ctx: ReceiptContext, attempt: AttemptBody): Promise<string | undefined> {
  if (attempt.state !== 'closed' || !attempt.receipt_ref || !attempt.reservation_id || !attempt.effect_id) return undefined;
  // No separate-store upstream configured: no chain can split, so GetTask loads no chain to find that out.
  if (!ctx.hasUpstreams) return undefined;
  const contracts = (await loadChain(ctx.store, attempt.delegation_ref)).map((r) => parseContract(r));
  const split = ctx.split(contracts);
  if (!split) return undefined;
  const r = await ctx.store.ledger.reservation(attempt.reservation_id);
  if (!r || (r.status !== 'settled' && r.status !== 'consumed' && r.status !== 'released')) return undefined;
  // Baton settles a verified effect at its reserved amounts, or (a hop further down) at what its own downstream's receipt settled.
  const own = (await ctx.store.getRecord(attempt.receipt_ref.object_id))?.body as { consumption?: { settled?: unknown } } | undefined;
  const measured = ConsumptionReceipt.shape.consumed.safeParse(own?.consumption?.settled);
  const consumed = r.status === 'released' ? Object.fromEntries(Object.keys(r.amounts).map((k) => [k, '0'])) : measured.success ? measured.data : { ...r.amounts };
  const payload: ConsumptionReceipt = {
    typ: CONSUMPTION_RECEIPT_TYPE,
    iss: ctx.self,
    aud: split.upstreamActor,
    subject: contracts[split.upstreamLeaf]!.record_id,
    task_id: attempt.attempt_id,
    effect_id: attempt.effect_id,
    receipt_ref: attempt.receipt_ref,
    status: r.status,
    consumed,
    issued_at: utc(ctx.clock.now()),
  };
  return signJws(ctx.keyring, CONSUMPTION_JWS_TYP, payload);
}

/**
 * Upstream side: the settlement of one effect forwarded to a separate-store
 * downstream, from the receipt its read-back carried. Verified under the
 * JWKS pinned for that downstream only; a claim above the reservation is
 * capped (never a bigger debit) and marked for escalation. Without a
 * usable receipt — none, unverifiable, naming another task — the
 * reservation is settled as consumed in full, as without federation
 * (conservative: the budget never counts less than may have been spent).
 * Undefined when the delegatee is not a separate-store downstream.
 */
export async function settleByReceipt(ctx: ReceiptContext, attempt: AttemptBody, remoteTaskId: string | undefined, jws: unknown, reserved: Readonly<Record<string, string>>): Promise<ConsumptionEvidence | undefined> {
  if (ctx.downstreams.length === 0) return undefined;
  const record = await ctx.store.getRecord(attempt.delegation_ref.object_id);
  const leaf = record ? parseContract(record) : undefined;
  const down = leaf && ctx.downstreams.find((d) => d.actorObjectId === leaf.body.delegatee_agent_ref.actor_ref.object_id);
  if (!leaf || !down) return undefined;
  if (typeof jws !== 'string' || jws.length > 16 * 1024) return settleWithout(reserved, 'missing', 'the read-back carried no consumption receipt');
  if (!down.contractJwksFile || !remoteTaskId) return settleWithout(reserved, 'refused', 'no pinned keys for this downstream, or no remote task id');
  const keys = await ctx.jwksAt(down.contractJwksFile).catch(() => undefined);
  if (!keys) return settleWithout(reserved, 'refused', 'the pinned keys of this downstream are unreadable');
  let receipt: ConsumptionReceipt;
  try {
    const parsed = ConsumptionReceipt.safeParse(await verifyJws(jws, keys, CONSUMPTION_JWS_TYP, ctx.clock.now()));
    if (!parsed.success) return settleWithout(reserved, 'refused', 'consumption receipt is malformed');
    receipt = parsed.data;
  } catch (err) {
    if (isBatonError(err)) return settleWithout(reserved, 'refused', 'consumption receipt did not verify under the pinned keys');
    throw err;
  }
  const wrong = receiptMismatches(receipt, { iss: down.actorObjectId, aud: ctx.self, subject: leaf.record_id, task_id: remoteTaskId });
  if (wrong.length > 0) return settleWithout(reserved, 'refused', `consumption receipt names another ${wrong.join(', ')}`);
  const { settled, over } = settleAgainst(reserved, receipt.consumed);
  return {
    status: over.length > 0 ? 'capped' : 'agreed',
    settled,
    ...(over.length > 0 ? { reason: `claimed above the reservation: ${over.join(', ')}` } : {}),
    jws,
    claimed: receipt.consumed,
    downstream: receipt.iss,
    downstream_receipt_ref: receipt.receipt_ref,
    downstream_task_id: receipt.task_id,
  };
}
