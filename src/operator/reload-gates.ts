/**
 * A reload must not side-step a human gate (RW-003 §6; issue 25 item 19).
 * Gates are read once at boot and keyed by delegatee id and caller preset,
 * so a live reload that adds an ungated alias for a gated agent's card (a
 * second delegatee id, same cardUrl) or moves a caller off a gated preset
 * would reach the same effect with no human in the loop. Both are refused,
 * like a changed `requireApproval` (reload.ts `unswappable`).
 */
import type { Config } from '../config.ts';
import { tierRank, type AutonomyTier } from '../contracts/autonomy.ts';
import { requiredTier } from '../gates/policy.ts';
import type { ConfigProblem } from './reload.ts';

type Delegatee = Config['delegatees'][number];

/** The tier of every preset (and none) for a delegatee, under the running approval rules. */
function tiersOf(c: Config, d: Delegatee, presets: ReadonlyArray<string | undefined>): number[] {
  return presets.map((preset) => {
    const tier = requiredTier(c.approvals, { delegatee: d.id, ...(preset !== undefined ? { preset } : {}), ...(d.requireApproval !== undefined ? { requireApproval: d.requireApproval } : {}) });
    return tier === undefined ? -1 : tierRank(tier as AutonomyTier);
  });
}

const cardKey = (url: string): string => {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
};

/** Every preset id either configuration names, and "no preset". */
const presetIds = (a: Config, b: Config): Array<string | undefined> => [undefined, ...new Set([...a.presets, ...b.presets].map((p) => p.id))];

/** A delegatee new at this card URL whose gate is weaker, for some preset, than a gated one's at the same card. */
export function ungatedAliases(a: Config, b: Config): ConfigProblem[] {
  const presets = presetIds(a, b);
  const before = new Set(a.delegatees.map((d) => `${d.id} ${cardKey(d.cardUrl)}`));
  const gated = a.delegatees.filter((d) => tiersOf(a, d, presets).some((t) => t >= 0));
  const out: ConfigProblem[] = [];
  b.delegatees.forEach((d, i) => {
    if (before.has(`${d.id} ${cardKey(d.cardUrl)}`)) return; // there at boot, unchanged: not a reload's doing
    const mine = tiersOf(b, d, presets);
    const weaker = gated.find((g) => g.id !== d.id && cardKey(g.cardUrl) === cardKey(d.cardUrl) && tiersOf(a, g, presets).some((t, k) => mine[k]! < t));
    if (weaker) out.push({ severity: 'error', path: `delegatees[${i}].cardUrl`, message: `"${d.id}" would reach the card of gated delegatee "${weaker.id}" without its human gate`, hint: 'give it the same gate and restart the gateway, or remove it' });
  });
  return out;
}

/** An existing caller moved to a preset under which some delegatee's gate is weaker. */
export function callersOffGates(a: Config, b: Config): ConfigProblem[] {
  const presetOf = new Map(a.callers.map((c) => [c.id, c.preset]));
  const out: ConfigProblem[] = [];
  b.callers.forEach((c, i) => {
    if (!presetOf.has(c.id) || presetOf.get(c.id) === c.preset) return;
    const old = presetOf.get(c.id);
    const weaker = [...a.delegatees, ...b.delegatees].find((d) => {
      const [was, now] = tiersOf(a, d, [old, c.preset]);
      return now! < was!;
    });
    if (weaker) out.push({ severity: 'error', path: `callers[${i}].preset`, message: `moving caller "${c.id}" from preset "${old ?? '(none)'}" to "${c.preset ?? '(none)'}" would lift the human gate on "${weaker.id}"`, hint: 'restart the gateway to move a caller off a gated preset' });
  });
  return out;
}
