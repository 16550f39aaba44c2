/**
 * The unit tests of the pure core, for mutation testing (npm run mutation;
 * stryker.config.mjs). The ledger, control and record programs run inside a
 * store transaction, so their tests go through the real SQLite adapter.
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'test/records/**/*.test.ts',
      'test/contracts/**/*.test.ts',
      'test/control/**/*.test.ts',
      'test/ledger/**/*.test.ts',
      'test/attempts/**/*.test.ts',
      'test/store/sqlite-ledger.test.ts',
      'test/store/sqlite-records.test.ts',
    ],
    // The CLI and the tree renderer are not the core (the CLI test spawns processes).
    exclude: ['test/contracts/delegate-cli.test.ts', 'test/contracts/render-tree.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
