/**
 * The unit tests of one mutation group (npm run mutation; mutation/groups.mjs):
 * Stryker's dry run and every static mutant run exactly the tests that guard
 * the group's files, not the whole core's.
 */
import { defineConfig } from 'vitest/config';
import { GROUPS } from './mutation/groups.mjs';

const group = GROUPS[process.env.BATON_MUTATION_GROUP ?? 'attempts'];
if (!group) throw new Error(`unknown mutation group ${process.env.BATON_MUTATION_GROUP}`);

export default defineConfig({
  test: {
    include: group.tests,
    exclude: group.exclude ?? [],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
