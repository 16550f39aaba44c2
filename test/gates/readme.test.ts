/** The README's human-gates example is what an operator copies: it must be a valid configuration that passes the gate checks. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Config } from '../../src/config.ts';
import { approvalProblems } from '../../src/gates/check.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const section = readme.slice(readme.indexOf('### Human gates'), readme.indexOf('## Command line'));

describe('README: human gates', () => {
  it('the example parses as configuration and passes the gate checks', () => {
    const block = /```yaml\n([\s\S]*?)```/.exec(section)![1]!;
    const config = Config.parse(parse(block));
    expect(approvalProblems(config)).toEqual([]);
    expect(config.delegatees.map((d) => d.requireApproval)).toEqual([true, 'T4_consequential_execute']);
  });
});
