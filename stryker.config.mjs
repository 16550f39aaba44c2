// Mutation testing of every pure decision (issues #19, 27). `npm run mutation` runs every group in
// turn (scripts/mutation.mjs), `npm run mutation -- attempts` one; the groups, their tests and their
// thresholds are in mutation/groups.mjs. Stryker fails a group below `break`; the run is incremental
// against mutation/<group>/incremental.json, committed, so a rerun after a small change tests only the
// changed mutants; scripts/mutation-summary.mjs regenerates mutation/SUMMARY.md from those files.
import { GROUPS, groupDir } from './mutation/groups.mjs';

const group = process.env.BATON_MUTATION_GROUP ?? 'attempts';
if (!(group in GROUPS)) throw new Error(`unknown mutation group ${group}; one of ${Object.keys(GROUPS).join(', ')}`);
const g = GROUPS[group];

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  // vitest.mutation.config.ts runs this group's tests only (BATON_MUTATION_GROUP).
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  coverageAnalysis: 'perTest',
  // Static mutants (zod schemas built at import) rerun the group's every test; a group leaves them out
  // only with a reason (mutation/groups.mjs `static`).
  ignoreStatic: g.static !== true,
  mutate: g.mutate,
  // The machine is shared (2 cores): BATON_MUTATION_CONCURRENCY=1 when others are working.
  concurrency: Number(process.env.BATON_MUTATION_CONCURRENCY ?? 2),
  timeoutMS: 20_000,
  incremental: true,
  incrementalFile: `${groupDir(group)}/incremental.json`,
  tempDirName: `.stryker-tmp/${group}`,
  reporters: ['html', 'json', 'clear-text', 'progress'],
  htmlReporter: { fileName: `reports/mutation/${group}/index.html` },
  jsonReporter: { fileName: `reports/mutation/${group}/mutation.json` },
  // Stryker wants high > low ≥ break; low is the group's floor, so the report colours what fails it.
  thresholds: { high: Math.min(100, Math.max(95, g.break + 1)), low: g.break, break: g.break },
};
