#!/usr/bin/env node
// Runs StrykerJS over each pure-core group in turn (or the groups named on the
// command line) and prints the score per group from the JSON reports.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { GROUPS } from '../stryker.config.mjs';

const groups = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(GROUPS);
for (const group of groups) {
  if (!(group in GROUPS)) throw new Error(`unknown mutation group ${group}; one of ${Object.keys(GROUPS).join(', ')}`);
  const run = spawnSync('npx', ['stryker', 'run'], { stdio: 'inherit', env: { ...process.env, BATON_MUTATION_GROUP: group } });
  if (run.status !== 0) process.exitCode = run.status ?? 1;
}

/** Score = killed / (killed + survived + no coverage), as Stryker counts it (timeouts count as killed). */
for (const group of Object.keys(GROUPS)) {
  const file = `reports/mutation/${group}/mutation.json`;
  if (!existsSync(file)) continue;
  const report = JSON.parse(readFileSync(file, 'utf8'));
  const count = { Killed: 0, Timeout: 0, Survived: 0, NoCoverage: 0 };
  let strings = 0;
  for (const f of Object.values(report.files)) {
    for (const m of f.mutants) {
      if (m.status in count) count[m.status]++;
      if (m.status === 'Survived' && m.mutatorName === 'StringLiteral') strings++;
    }
  }
  const detected = count.Killed + count.Timeout;
  const valid = detected + count.Survived + count.NoCoverage;
  // Most surviving string mutants are error-message text or SQLite-ignored lock modes; shown apart.
  const pct = (a, b) => `${((100 * a) / Math.max(b, 1)).toFixed(1)}%`;
  console.log(`${group.padEnd(10)} ${pct(detected, valid)}  (${pct(detected, valid - strings)} without ${strings} surviving string literals)  killed ${detected}, survived ${count.Survived}, no coverage ${count.NoCoverage}`);
}
