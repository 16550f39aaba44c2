/**
 * RW-003 §6 autonomy tiers and the gates each tier requires. A contract
 * states its tier and the gates it carries; validation refuses a contract
 * whose gates are weaker than its tier demands, and attenuation refuses a
 * child with a higher tier or fewer gates than its parent.
 */
import { z } from 'zod';
import { Identifier } from '../records/ids.ts';

export const AUTONOMY_TIERS = [
  'T0_observe',
  'T1_draft',
  'T2_bounded_execute',
  'T3_consequential_propose',
  'T4_consequential_execute',
] as const;
export const AutonomyTier = z.enum(AUTONOMY_TIERS);
export type AutonomyTier = z.infer<typeof AutonomyTier>;

export const GATE_KINDS = [
  'automated_scope_check',
  'provenance_check',
  'pre_effect_permission',
  'reviewer',
  'async_monitoring',
  'human_approval',
  'post_effect_readback',
] as const;
export const Gate = z.strictObject({
  kind: z.enum(GATE_KINDS),
  /** Optional exact policy/profile the gate applies. */
  ref: Identifier.optional(),
});
export type Gate = z.infer<typeof Gate>;

export const Autonomy = z.strictObject({ tier: AutonomyTier, gates: z.array(Gate).max(64) });
export type Autonomy = z.infer<typeof Autonomy>;

/** RW-003 §2 PrincipalRef of a named human authority; never an email or secret. */
export const HumanAuthority = z.strictObject({ principal_id: Identifier, role: Identifier });
export type HumanAuthority = z.infer<typeof HumanAuthority>;

/** RW-003 §6 reviewer requirement: role plus independence policy, not a nominee. */
export const ReviewerRequirement = z.strictObject({
  role: Identifier,
  independence: z.enum(['any', 'different_principal', 'named_principal']),
  principal_id: Identifier.optional(),
});
export type ReviewerRequirement = z.infer<typeof ReviewerRequirement>;

export function tierRank(tier: AutonomyTier): number {
  return AUTONOMY_TIERS.indexOf(tier);
}

/**
 * What each tier's "Required gate" column (RW-003 §6) demands: every listed
 * group needs at least one of its gate kinds.
 */
const REQUIRED: Record<AutonomyTier, ReadonlyArray<ReadonlyArray<Gate['kind']>>> = {
  T0_observe: [],
  T1_draft: [['automated_scope_check'], ['provenance_check']],
  T2_bounded_execute: [['pre_effect_permission'], ['reviewer', 'async_monitoring']],
  T3_consequential_propose: [['pre_effect_permission'], ['human_approval']],
  T4_consequential_execute: [['pre_effect_permission'], ['human_approval'], ['post_effect_readback'], ['reviewer']],
};

/** Problems with a tier/gate/authority combination; empty when consistent. */
export function tierProblems(autonomy: Autonomy, humanAuthorities: readonly HumanAuthority[]): string[] {
  const kinds = new Set(autonomy.gates.map((g) => g.kind));
  const problems = REQUIRED[autonomy.tier]
    .filter((group) => !group.some((k) => kinds.has(k)))
    .map((group) => `${autonomy.tier} requires a ${group.join(' or ')} gate`);
  if (tierRank(autonomy.tier) >= tierRank('T3_consequential_propose') && humanAuthorities.length === 0) {
    problems.push(`${autonomy.tier} requires a named human authority`);
  }
  return problems;
}
