/**
 * SQLite's append views (src/store/sqlite/appends.ts, migration 19): what a
 * batch hands them, and what the views write and refuse, on a real database
 * file. The store-level behaviour (revisions refused by name, heads, charges)
 * is in test/ledger/ledger-effects.test.ts and the store contracts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/store/sqlite/database.ts';
import { controlAppends, journalAppends, TRIGGER_REFUSAL } from '../../src/store/sqlite/appends.ts';
import type { EntryRow, EventRow, HeadRow } from '../../src/store/tx/ops.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-appends-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = (): Db => openDatabase(join(dir, `a${++n}.db`), { create: true });

const event = (branch: string, position: number): EventRow => ({
  project_id: 'p',
  branch_id: branch,
  position,
  event_id: `evt_${branch}_${position}`,
  event_type: 'rw003.test',
  idempotency_key: null,
  input_digest: `sha256:${'1'.repeat(64)}`,
  event_digest: `sha256:${String(position).repeat(64).slice(0, 64)}`,
  document: '{}',
});
const headOf = (e: EventRow, state: string): HeadRow => ({ project_id: e.project_id, branch_id: e.branch_id, scope_kind: 'attempt', position: e.position, event_id: e.event_id, event_digest: e.event_digest, state });
const entry = (node: string, d: bigint): EntryRow => ({ reservation_id: 'res_1', node_id: node, dimension: 'units', d_consumed: 0n, d_reserved: d, reason: 'admit', at: '2026-01-01T00:00:00.000Z' });

describe('controlAppends: events and their heads in one statement', () => {
  const a1 = event('a', 1);
  const a2 = event('a', 2);
  const b1 = event('b', 1);

  it('every event carries its stream\'s kind and final state; the last event of a stream leaves the head', () => {
    const db = fresh();
    try {
      const parts = controlAppends([a1, a2, b1], [headOf(a2, 'active'), headOf(b1, 'unresolved')])!;
      expect(parts).toHaveLength(1);
      expect(parts[0]!.params).toHaveLength(3 * 11);
      db.prepare(parts[0]!.sql(() => '?')).run(...parts[0]!.params);
      const heads = db.prepare('SELECT branch_id, position, event_id, state, scope_kind FROM control_heads ORDER BY branch_id').all();
      expect(heads).toStrictEqual([
        { branch_id: 'a', position: 2n, event_id: a2.event_id, state: 'active', scope_kind: 'attempt' },
        { branch_id: 'b', position: 1n, event_id: b1.event_id, state: 'unresolved', scope_kind: 'attempt' },
      ]);
      expect(db.prepare('SELECT count(*) AS n FROM control_events').get()).toStrictEqual({ n: 3n });
    } finally {
      db.close();
    }
  });

  it('heads that are not exactly the streams\' last events are left to their own statement', () => {
    expect(controlAppends([a1, a2], [headOf(a1, 'active')])).toBeUndefined();
    expect(controlAppends([a1], [headOf(a1, 'active'), headOf(b1, 'active')])).toBeUndefined();
    expect(controlAppends([a1, b1], [headOf(a1, 'active')])).toBeUndefined();
    expect(controlAppends([a1], [{ ...headOf(a1, 'active'), event_digest: a2.event_digest }])).toBeUndefined();
    expect(controlAppends([a1], [{ ...headOf(a1, 'active'), event_id: a2.event_id }])).toBeUndefined();
    expect(controlAppends([], [])).toStrictEqual([]);
  });
});

describe('journalAppends: entries with the charges of their balance rows', () => {
  it('a charge rides on the last entry of its row; one without an entry here is charged apart', () => {
    const charge = (node: string, reserved: bigint) => ({ node_id: node, dimension: 'units', consumed: 0n, reserved });
    const { parts, apart } = journalAppends([entry('n1', 1n), entry('n2', 2n), entry('n1', 3n)], [charge('n1', 4n), charge('n3', 9n)]);
    expect(apart).toStrictEqual([charge('n3', 9n)]);
    const rows = [0, 1, 2].map((i) => parts[0]!.params.slice(i * 10 + 7, i * 10 + 10));
    expect(rows).toStrictEqual([
      [0, 0n, 0n],
      [0, 0n, 0n],
      [1, 0n, 4n],
    ]);
  });

  it('charges the balance row in the entry\'s statement; a missing row refuses the statement, entries and all', () => {
    const db = fresh();
    try {
      db.exec(`INSERT INTO ledger_nodes(node_id, parent_id, root_id, depth, space_id, owner_namespace, not_after, request_digest, issued_event, created_at)
                 VALUES ('n1', NULL, 'n1', 0, 's', 'ns', '2099-01-01T00:00:00.000Z', 'd', '{}', '2026-01-01T00:00:00.000Z');
               INSERT INTO ledger_balances(node_id, dimension, unit, ceiling, consumed, reserved) VALUES ('n1', 'units', 'u', 10, 0, 0);
               INSERT INTO ledger_reservations(reservation_id, effect_id, root_id, owner_namespace, chain, kind, amounts, charged, status, request_digest, receipt, settlement, created_at, settled_at)
                 VALUES ('res_1', 'eff_1', 'n1', 'ns', '[]', 'reserve', '{}', '[]', 'held', 'd', '{}', NULL, '2026-01-01T00:00:00.000Z', NULL);`);
      const write = (entries: EntryRow[], reserved: bigint) => {
        const part = journalAppends(entries, [{ node_id: entries.at(-1)!.node_id, dimension: 'units', consumed: 0n, reserved }]).parts[0]!;
        db.prepare(part.sql(() => '?')).run(...part.params);
      };
      write([entry('n1', 2n), entry('n1', 1n)], 3n);
      expect(db.prepare("SELECT consumed, reserved FROM ledger_balances WHERE node_id = 'n1'").get()).toStrictEqual({ consumed: 0n, reserved: 3n });
      let code: unknown;
      try {
        write([entry('n1', 1n), entry('gone', 1n)], 1n);
      } catch (err) {
        code = (err as { code?: unknown; message: string }).code;
        expect((err as Error).message).toBe('a balance row is missing');
      }
      expect(code).toBe(TRIGGER_REFUSAL);
      expect(db.prepare('SELECT count(*) AS n FROM ledger_entries').get()).toStrictEqual({ n: 2n });
      // Over its ceiling: the balance's CHECK refuses it, as a plain UPDATE would be.
      expect(() => write([entry('n1', 8n)], 8n)).toThrow(/CHECK constraint failed/);
      expect(db.prepare("SELECT reserved FROM ledger_balances WHERE node_id = 'n1'").get()).toStrictEqual({ reserved: 3n });
    } finally {
      db.close();
    }
  });
});
