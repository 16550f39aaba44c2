// Mutation testing of the pure core (issue #19): `npm run mutation` runs every
// group in turn (scripts/mutation.mjs); `npm run mutation -- ledger` runs one.
// Reports land in reports/mutation/<group>/ (git-ignored); the scores per
// folder are in the README's testing section. Not part of `npm test`.

/**
 * The rules the issue names. Every contract test seals records, so records/
 * mutants are covered by nearly every test: the list stays to the files with logic.
 */
export const GROUPS = {
  ledger: ['src/ledger/rules.ts', 'src/ledger/amount.ts', 'src/ledger/programs.ts'],
  control: ['src/control/fence.ts', 'src/control/state.ts'],
  attempts: ['src/attempts/outcome.ts', 'src/attempts/task-view.ts'],
  contracts: ['src/contracts/attenuation.ts', 'src/contracts/mint.ts', 'src/contracts/attestation-chain.ts'],
  records: ['src/records/canonical.ts', 'src/records/digest.ts', 'src/records/envelope.ts', 'src/records/revision-ref.ts', 'src/records/strict-json.ts', 'src/records/put.ts'],
};

const group = process.env.BATON_MUTATION_GROUP ?? 'ledger';
if (!(group in GROUPS)) throw new Error(`unknown mutation group ${group}; one of ${Object.keys(GROUPS).join(', ')}`);
const dir = `reports/mutation/${group}`;

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  coverageAnalysis: 'perTest',
  // Static mutants (module-level constants, zod schemas built at import) rerun every test:
  // ~60% of the run time for ~17% of the mutants. Left out; see the README's testing section.
  ignoreStatic: true,
  mutate: GROUPS[group],
  // The machine is shared (2 cores).
  concurrency: 2,
  timeoutMS: 20_000,
  incremental: true,
  incrementalFile: `${dir}/stryker-incremental.json`,
  tempDirName: `.stryker-tmp/${group}`,
  reporters: ['html', 'json', 'clear-text', 'progress'],
  htmlReporter: { fileName: `${dir}/index.html` },
  jsonReporter: { fileName: `${dir}/mutation.json` },
  thresholds: { high: 85, low: 70, break: null },
};
