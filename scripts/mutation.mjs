#!/usr/bin/env node
// Runs StrykerJS over each mutation group in turn (or the groups named on the
// command line), then regenerates the committed summary (mutation/SUMMARY.md).
// Fails when Stryker fails or any group scores below its `break`
// (mutation/groups.mjs) — Stryker enforces it per run, the summary again over
// the committed reports.
import { spawnSync } from 'node:child_process';
import { GROUPS } from '../mutation/groups.mjs';
import { writeSummaries } from './mutation-summary.mjs';

// Flags go to Stryker: `--force` retests every mutant, needed after changing a test that guards static
// mutants (Stryker's incremental mode reuses a static mutant's result when no per-test coverage ties it to a test).
const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
const named = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const groups = named.length > 0 ? named : Object.keys(GROUPS);
for (const group of groups) if (!(group in GROUPS)) throw new Error(`unknown mutation group ${group}; one of ${Object.keys(GROUPS).join(', ')}`);
const failed = [];
for (const group of groups) {
  const run = spawnSync('npx', ['stryker', 'run', ...flags], { stdio: 'inherit', env: { ...process.env, BATON_MUTATION_GROUP: group } });
  if (run.status !== 0) failed.push(`${group}: stryker exited ${run.status ?? run.signal}`);
}
const below = writeSummaries();
console.log('summary: mutation/SUMMARY.md');
if (failed.length + below.length > 0) {
  console.error(`mutation testing failed: ${[...failed, ...below].join('; ')}`);
  process.exitCode = 1;
}
