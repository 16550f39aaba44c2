/**
 * `baton config check` on the human gates (issue 25 item 4, RW-003 §6 T4
 * "required review"): `reviewer` is never implied, and a T4 gate needs two
 * distinct reviewer principals. Real CLI, offline (no card is fetched).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { baton } from './run.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-config-gates-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HASH = 'a'.repeat(64);
function check(name: string, approvers: string[]) {
  const file = join(dir, name);
  const lines = [
    `cardsDir: ${join(process.cwd(), 'cards')}`,
    'operators:',
    ...['alice', 'bob', 'dave'].map((id) => `  - { id: ${id}, apiKeySha256: ${HASH} }`),
    'delegatees:',
    '  - { id: ledger-writer, cardUrl: "https://ledger.partner.example/.well-known/agent-card.json", requireApproval: T4_consequential_execute }',
    'approvals:',
    '  approvers:',
    ...approvers.map((a) => `    - ${a}`),
    '',
  ];
  writeFileSync(file, lines.join('\n'));
  return baton(['config', 'check', '--offline', '--config', file], { BATON_CONFIG: '', BATON_LOG_LEVEL: 'silent' });
}

describe('baton config check: T4 reviewers', () => {
  it('refuses a T4 gate with a single reviewer principal: approvers are not reviewers unless marked', async () => {
    const r = await check('one-reviewer.yaml', ['{ operator: alice }', '{ operator: bob, reviewer: true }']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toContain('error   approvals.approvers: a T4 gate needs at least two distinct reviewer principals (reviewer: true); 1 configured');
  }, 60_000);

  it('refuses two reviewer operators of one principal, and passes two distinct reviewer principals', async () => {
    const same = await check('same-principal.yaml', ['{ operator: alice }', '{ operator: bob, principal: pat, reviewer: true }', '{ operator: dave, principal: pat, reviewer: true }']);
    expect(same.code).toBe(1);
    expect(same.stdout).toContain('two distinct reviewer principals');
    const ok = await check('two-reviewers.yaml', ['{ operator: alice }', '{ operator: bob, reviewer: true }', '{ operator: dave, reviewer: true }']);
    expect(ok.stdout.trim()).toBe(`${join(dir, 'two-reviewers.yaml')}: ok`);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
  }, 60_000);
});
