/**
 * What people and machines read from the CLI: aligned tables, budget bars,
 * trees, `--json` with the records' own shape, and an example in every
 * command's --help.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXAMPLES, runnableCommands } from '../../src/cli/examples.ts';
import { buildProgram } from '../../src/cli/program.ts';
import { renderAudit, renderEscalations, renderTrees } from '../../src/cli/render/operator.ts';
import { budgetBar, table } from '../../src/cli/render/table.ts';
import type { Escalation } from '../../src/operator/escalation.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { admission, chain, freshSpace, publishAgent } from '../store/support/fixtures.ts';
import { baton } from './run.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-cli-output-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tables and bars', () => {
  it('aligns columns to the widest cell without trailing spaces', () => {
    expect(table(['ID', 'STATE'], [['a', 'open'], ['longer-id', '']])).toBe(['ID         STATE', 'a          open', 'longer-id'].join('\n'));
  });

  it('draws consumed, reserved and available in proportion, a non-zero amount always visible', () => {
    expect(budgetBar(10n, 0n, 2n)).toBe(`[${'▒'.repeat(4)}${'·'.repeat(16)}]`);
    expect(budgetBar(10n, 5n, 5n, 10)).toBe('[█████▒▒▒▒▒]');
    expect(budgetBar(1000n, 1n, 0n, 10)).toBe('[█·········]');
    expect(budgetBar(0n, 0n, 0n, 4)).toBe('[····]');
  });
});

const TREE = {
  node_id: 'dlg_root',
  depth: 0,
  not_after: '2026-12-03T09:00:00Z',
  balances: [{ dimension: 'invocations', ceiling: '10', consumed: '3', reserved: '1' }],
  children: [{ node_id: 'dlg_child', depth: 1, not_after: '2026-12-03T09:00:00Z', balances: [{ dimension: 'invocations', ceiling: '4', consumed: '3', reserved: '1' }], children: [] }],
};

describe('trees and escalations for people', () => {
  it('renders each tree with budget bars, then its attempts as a table', () => {
    const out = renderTrees([
      {
        root: 'dlg_root',
        tree: TREE,
        attempts: [
          { attempt_id: 'att_1', delegation_id: 'dlg_child', delegatee_id: 'echo', caller_id: 'planner', state: 'closed', outcome: 'succeeded' },
          { attempt_id: 'att_22', delegation_id: 'dlg_child', delegatee_id: 'echo', caller_id: 'planner', state: 'forwarded' },
        ] as never,
      },
    ]);
    expect(out.split('\n')).toEqual([
      'dlg_root  (depth 0, until 2026-12-03T09:00:00Z)',
      '│   invocations  ceiling 10  consumed 3  reserved 1  available 6  [██████▒▒············]',
      '└─ dlg_child  (depth 1, until 2026-12-03T09:00:00Z)',
      '       invocations  ceiling 4  consumed 3  reserved 1  available 0  [███████████████▒▒▒▒▒]',
      '',
      '  ATTEMPT  DELEGATION  DELEGATEE  CALLER   STATE      OUTCOME',
      '  att_1    dlg_child   echo       planner  closed     succeeded',
      '  att_22   dlg_child   echo       planner  forwarded  -',
      '',
      'bars: █ consumed  ▒ reserved  · available',
    ]);
    expect(renderTrees([])).toBe('no delegation trees yet');
  });

  it("adds a TOOL column only to a tree listing an MCP call (issue #26): the tool, '-' for an A2A send beside it", () => {
    const out = renderTrees([
      {
        root: 'dlg_root',
        tree: TREE,
        attempts: [
          { attempt_id: 'att_1', delegation_id: 'dlg_child', delegatee_id: 'notes', tool: 'notes/create_note', caller_id: 'planner', state: 'closed', outcome: 'unknown' },
          { attempt_id: 'att_22', delegation_id: 'dlg_child', delegatee_id: 'echo', caller_id: 'planner', state: 'open' },
        ],
      },
    ]);
    expect(out.split('\n').slice(5, 8)).toEqual([
      '  ATTEMPT  DELEGATION  DELEGATEE  TOOL               CALLER   STATE   OUTCOME',
      '  att_1    dlg_child   notes      notes/create_note  planner  closed  unknown',
      '  att_22   dlg_child   echo       -                  planner  open    -',
    ]);
  });

  it("renders an attempt's audit with what it called: the adapter, an MCP call's tool and arguments digest, and `observed`", () => {
    const attempt = { record_id: 'att_1', body: { state: 'closed', outcome: 'succeeded', verification: 'observed', remote: { protocol: 'mcp', binding: 'streamable_http', endpoint: 'http://127.0.0.1:1/mcp' }, tool: { server: 'notes', name: 'echo', arguments_digest: 'sha256:ab' } } };
    const receipt = { record_id: 'vr_1', body: { outcome: 'succeeded', profile: 'mcp-observed/1', readback: 'not_applicable' } };
    expect(renderAudit({ attempt, records: [receipt] }).split('\n')).toEqual([
      'attempt: record_id att_1  state closed  outcome succeeded',
      '  remote mcp streamable_http http://127.0.0.1:1/mcp',
      '  tool notes/echo  arguments sha256:ab',
      '  verification observed',
      'records (1)',
      '  record_id vr_1  outcome succeeded  profile mcp-observed/1  readback not_applicable',
    ]);
    const a2a = { record_id: 'att_2', body: { state: 'closed', outcome: 'succeeded', remote: { protocol: 'a2a', binding: 'JSONRPC', endpoint: 'http://127.0.0.1:2/a2a' } } };
    expect(renderAudit({ attempt: a2a }).split('\n')).toEqual(['attempt: record_id att_2  state closed  outcome succeeded', '  remote a2a JSONRPC http://127.0.0.1:2/a2a']);
  });

  it('renders escalations as a table naming their subject', () => {
    const esc = (id: string, state: 'open' | 'acknowledged', kind: string, subject: object, reasons: string[]) => ({ record_id: id, body: { state, kind, subject, reasons, raised_at: '2026-12-03T08:00:00Z' } }) as unknown as Escalation;
    const out = renderEscalations([
      esc('esc_1', 'open', 'effect_unverifiable', { attempt_id: 'att_1', delegation_id: 'dlg_c' }, ['outcome unknown', 'held']),
      esc('esc_22', 'acknowledged', 'reassignment_refused', { scope: 'delegation:dlg_c' }, ['stale fence']),
    ]);
    expect(out.split('\n')).toEqual([
      'ESCALATION  STATE         KIND                  RAISED                SUBJECT                          REASONS',
      'esc_1       open          effect_unverifiable   2026-12-03T08:00:00Z  attempt att_1, delegation dlg_c  outcome unknown; held',
      'esc_22      acknowledged  reassignment_refused  2026-12-03T08:00:00Z  scope delegation:dlg_c           stale fence',
    ]);
    expect(renderEscalations([])).toBe('no escalations');
  });
});

describe('the real CLI', () => {
  it('ledger show: tree with bars; --json keeps the tree shape', async () => {
    const path = join(dir, 'ledger.db');
    const store = SqliteStore.open(path, { create: true });
    const space = freshSpace();
    await publishAgent(store, space);
    const c = await chain(store, space, { root: 10n, child: 5n, leaf: 3n });
    await store.ledger.admit(await admission(store, space, [c.root, c.child, c.leaf], c.leaf, { units: 2n }));
    await store.close();
    const env = { BATON_SQLITE_PATH: path, BATON_LOG_LEVEL: 'silent', BATON_CONFIG: '' };
    const show = await baton(['ledger', 'show', c.root], env);
    expect(show.code).toBe(0);
    // Columns aligned across a node's dimensions (tokens' wider numbers set the width).
    expect(show.stdout).toContain('│   units   ceiling 10    consumed 0  reserved 2  available 8     [▒▒▒▒················]');
    expect(show.stdout).toContain('          units   ceiling 3    consumed 0  reserved 2  available 1    [▒▒▒▒▒▒▒▒▒▒▒▒▒·······]');
    expect(show.stdout).toContain('bars: █ consumed  ▒ reserved  · available');
    const json = JSON.parse((await baton(['ledger', 'show', c.root, '--json'], env)).stdout) as { node_id: string; balances: unknown[]; children: Array<{ node_id: string }> };
    expect(json.node_id).toBe(c.root);
    expect(json.children[0]!.node_id).toBe(c.child);
  });

  it('trees and escalations on a fresh gateway: tables say "none", --json is an empty list', async () => {
    const env = { BATON_DATA_DIR: join(dir, 'fresh'), BATON_LOG_LEVEL: 'silent', BATON_CONFIG: '' };
    expect((await baton(['init'], env)).code).toBe(0);
    const [trees, treesJson, esc, escJson] = await Promise.all([baton(['trees'], env), baton(['trees', '--json'], env), baton(['escalations'], env), baton(['escalations', '--json'], env)]);
    expect([trees.code, trees.stdout]).toEqual([0, 'no delegation trees yet\n']);
    expect(JSON.parse(treesJson.stdout)).toEqual([]);
    expect([esc.code, esc.stdout]).toEqual([0, 'no escalations\n']);
    expect(JSON.parse(escJson.stdout)).toEqual([]);
  });

  it('every command has an example in its --help', async () => {
    const names = runnableCommands(buildProgram()).map(([n]) => n);
    expect(names.filter((n) => !EXAMPLES[n])).toEqual([]);
    expect(Object.keys(EXAMPLES).filter((n) => !names.includes(n))).toEqual([]);
    const help = await baton(['trees', '--help']);
    expect(help.stdout).toContain(`Example:\n  $ ${EXAMPLES.trees}`);
    expect(help.stdout).toContain('--json');
  });
});
