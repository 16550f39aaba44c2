// Mutation testing of the pure core (issue #19): `npm run mutation`.
// Reports land in reports/mutation/ (git-ignored); the scores per folder are
// in the README's testing section. Not part of `npm test`: it takes minutes.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  coverageAnalysis: 'perTest',
  // Static mutants (module-level constants, zod schemas built at import) rerun every test:
  // ~60% of the run time for ~17% of the mutants. Left out; see the README's testing section.
  ignoreStatic: true,
  // The rules the issue names (records; contracts: attenuation, mint, chain;
  // control: fences, state; ledger: rules, programs; attempts: outcome,
  // task view). Every contract test seals records, so records/ mutants are
  // covered by nearly every test: the list stays to the files with logic.
  mutate: [
    'src/records/canonical.ts',
    'src/records/digest.ts',
    'src/records/envelope.ts',
    'src/records/revision-ref.ts',
    'src/records/strict-json.ts',
    'src/records/put.ts',
    'src/contracts/attenuation.ts',
    'src/contracts/mint.ts',
    'src/contracts/attestation-chain.ts',
    'src/control/fence.ts',
    'src/control/state.ts',
    'src/ledger/rules.ts',
    'src/ledger/amount.ts',
    'src/ledger/programs.ts',
    'src/attempts/outcome.ts',
    'src/attempts/task-view.ts',
  ],

  // The machine is shared (2 cores).
  concurrency: 2,
  timeoutMS: 20_000,
  incremental: true,
  incrementalFile: 'reports/mutation/stryker-incremental.json',
  tempDirName: '.stryker-tmp',
  reporters: ['html', 'json', 'clear-text', 'progress'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 85, low: 70, break: null },
};
