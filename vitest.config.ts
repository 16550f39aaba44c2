import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'e2e/**/*.test.ts'],
    // Tests spawn real servers and processes; two cores, so keep it modest.
    pool: 'forks',
    maxWorkers: 2,
    // Bounds, not budgets: a test that spawns the CLI four or five times needs 20–40 s on a loaded 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
