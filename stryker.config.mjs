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
  mutate: [
    'src/records/*.ts',
    'src/contracts/attenuation.ts',
    'src/contracts/limits.ts',
    'src/contracts/scope.ts',
    'src/contracts/mint.ts',
    'src/contracts/attestation-chain.ts',
    'src/contracts/attestation-link.ts',
    'src/control/fence.ts',
    'src/control/state.ts',
    'src/control/append.ts',
    'src/ledger/rules.ts',
    'src/ledger/amount.ts',
    'src/ledger/programs.ts',
    'src/attempts/outcome.ts',
    'src/attempts/task-view.ts',
    'src/attempts/checkpoint.ts',
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
