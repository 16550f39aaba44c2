/**
 * The README's delegatee examples are the documentation an operator copies:
 * each YAML block under "Putting an agent behind Baton" must be a valid
 * configuration as written (issue #14: "from the README alone").
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Config } from '../../src/config.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const section = readme.slice(readme.indexOf('## Putting an agent behind Baton'), readme.indexOf('## Putting an MCP server behind Baton'));
const blocks = [...section.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);

describe('README: putting an agent behind Baton', () => {
  it('has the plain, RW-003, unsigned and v0.3 examples', () => {
    expect(blocks.length).toBe(4);
  });

  it('every example parses as configuration as written', () => {
    for (const b of blocks) {
      const result = Config.safeParse(parse(b));
      expect(result.error?.issues ?? []).toEqual([]);
    }
  });

  it('the plain-agent example declares operator-attested facts', () => {
    const plain = Config.parse(parse(blocks[0]!));
    expect(plain.delegatees[0]!.rw003).toMatchObject({ attested_by: 'principal_our_ops', lifecycle: { state: 'active' } });
    expect(Config.parse(parse(blocks[2]!)).delegatees[0]).toMatchObject({ allowUnsigned: true, rw003: { lifecycle: { state: 'active' } } });
  });
});
