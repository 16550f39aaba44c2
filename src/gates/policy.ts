/**
 * Which effects need a named human authority (RW-003 §6 tiers T3/T4,
 * ADR-0014 "a trusted interaction with a person authorized to grant the
 * requested scope") and who may give it. Configured by the owner under
 * `approvals`, plus a delegatee's own `requireApproval`; pure rules, no I/O.
 */
import { z } from 'zod';
import { tierRank, type AutonomyTier } from '../contracts/autonomy.ts';
import { Identifier } from '../records/ids.ts';

/** The tiers that carry a human gate (RW-003 §6). */
export const GATED_TIERS = ['T3_consequential_propose', 'T4_consequential_execute'] as const;
export const GatedTier = z.enum(GATED_TIERS);
export type GatedTier = z.infer<typeof GatedTier>;

/** A delegatee's `requireApproval`: `true` means T3 (approve the exact effect); T4 adds read-back review. */
export const RequireApproval = z.union([z.literal(true), GatedTier]);

export const ApproverConfig = z.strictObject({
  /** An operator id (operators[].id): the credential that acts. */
  operator: Identifier,
  /** The human principal behind it (RW-003 PrincipalRef; never an email or secret). Defaults to the operator id. */
  principal: Identifier.optional(),
  role: Identifier.default('approver'),
  /** May also give the T4 post-effect review decision (RW-003 §6 "required review"): explicit, never implied by approving. */
  reviewer: z.boolean().default(false),
});

export const GateRule = z
  .strictObject({
    delegatee: z.string().min(1).optional(),
    preset: Identifier.optional(),
    tier: GatedTier,
  })
  .refine((r) => r.delegatee !== undefined || r.preset !== undefined, 'a rule names a delegatee, a preset, or both');

export const ApprovalsConfig = z.strictObject({
  approvers: z.array(ApproverConfig).max(256).default([]),
  /** A rule matches when every field it names matches; the highest matching tier applies. */
  rules: z.array(GateRule).max(256).default([]),
  /** Callers' human principals, by caller id, for the independence rule (default: the caller id). */
  callerPrincipals: z.record(z.string(), Identifier).default({}),
  /** How long a request waits for a decision before it expires (nothing was forwarded). */
  pendingSeconds: z.number().int().min(60).max(7 * 86_400).default(86_400),
  /** How long an approval may wait for its admission; later, a fresh approval is needed (RW-003 §6 T4 "fresh"). */
  approvalSeconds: z.number().int().min(1).max(86_400).default(900),
});
export type ApprovalsConfig = z.infer<typeof ApprovalsConfig>;
export type ApproverConfig = z.infer<typeof ApproverConfig>;

/** The tier a request must clear, or undefined when no human gate applies. */
export function requiredTier(cfg: Pick<ApprovalsConfig, 'rules'>, req: { delegatee: string; preset?: string; requireApproval?: true | GatedTier }): GatedTier | undefined {
  const tiers: GatedTier[] = [];
  if (req.requireApproval !== undefined) tiers.push(req.requireApproval === true ? 'T3_consequential_propose' : req.requireApproval);
  for (const r of cfg.rules) {
    if (r.delegatee !== undefined && r.delegatee !== req.delegatee) continue;
    if (r.preset !== undefined && r.preset !== req.preset) continue;
    tiers.push(r.tier);
  }
  return tiers.sort((a, b) => tierRank(b as AutonomyTier) - tierRank(a as AutonomyTier))[0];
}

/** An approver as the rules see it. */
export interface Approver {
  operator: string;
  principal: string;
  role: string;
  reviewer: boolean;
}

export function approversOf(cfg: Pick<ApprovalsConfig, 'approvers'>): Approver[] {
  return cfg.approvers.map((a) => ({ operator: a.operator, principal: a.principal ?? a.operator, role: a.role, reviewer: a.reviewer }));
}

/** The caller's principal (the independence rule compares principals, not credentials). */
export function callerPrincipal(cfg: Pick<ApprovalsConfig, 'callerPrincipals'>, callerId: string): string {
  return cfg.callerPrincipals[callerId] ?? callerId;
}
