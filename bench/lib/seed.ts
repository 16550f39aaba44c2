/**
 * Retained history seeded straight into a SQLite store, for the flat-growth
 * benchmark: what a settled delegated task leaves behind (bench/growth.ts
 * reads the shape off a real gateway store), written with prepared
 * statements on the better-sqlite3 handle in a few large transactions
 * instead of through the store's programs (which would take as long as
 * running the tasks).
 *
 * One seeded task = the rows one real delegated SendMessage leaves: a root
 * node (issued from the preset) and a child node with their balances, one
 * settled reservation with its four ledger entries, seven records (task
 * input, two contracts, two attempt revisions, decision, receipt) with their
 * heads, five control events and three control heads (two delegation
 * streams, one attempt stream). ADR-0014 counts 3 of them as retained ledger
 * records (two nodes, one reservation), so 10^6 retained records = 333,334
 * tasks. Documents are short placeholders: every read on the request path
 * goes by key, and 23 KB of real JSON per task would make 10^6 a 7 GB file.
 */
import type Database from 'better-sqlite3';

export interface SeedShape {
  space: string;
  namespace: string;
  preset: string;
  /** Budget horizon of the seeded nodes: in the past (expired history) or ahead (settled but unexpired). */
  notAfter: string;
}

/** Retained ledger records per seeded task (root node, child node, reservation). */
export const RETAINED_PER_TASK = 3;

const PLACEHOLDER = JSON.stringify({ seeded: 'bench/lib/seed.ts', note: 'history placeholder; never read back' });

/**
 * The rows of one task, generated inside SQLite from a temp table of random
 * stems (one per task: every key unique, and spread over its index like real
 * random ids), so the seeding costs no per-row JavaScript.
 */
const TASK_ROWS = (s: SeedShape) => {
  const q = (v: string) => `'${v.replace(/'/g, "''")}'`;
  const project = q(`rw-control:${s.space}`);
  const dg = (k: number) => `'sha256:' || u || '${'0'.repeat(38)}${k.toString().padStart(2, '0')}'`;
  const ev = (branch: string, k: number) => `'{"project_id":"rw-control:${s.space}","branch_id":"${branch}' || '","position":1,"event_id":"evt_' || u || '${k}","event_digest":"' || ${dg(k)} || '"}'`;
  const events: Array<[string, number, string, number]> = [
    ["'delegation:dlg_' || u || 'r'", 1, 'delegation.issued', 0],
    ["'delegation:dlg_' || u || 'c'", 1, 'delegation.issued', 1],
    ["'attempt:att_' || u", 1, 'attempt.admitted', 2],
    ["'attempt:att_' || u", 2, 'attempt.dispatched', 3],
    ["'attempt:att_' || u", 3, 'attempt.verified', 4],
  ];
  const records: Array<[string, string, string]> = [
    ["'ti_' || u", 'baton-records/0.1#task_input', 'NULL'],
    ["'dlg_' || u || 'r'", 'rw-agent-delegation/0.1.1#delegation_contract', 'NULL'],
    ["'dlg_' || u || 'c'", 'rw-agent-delegation/0.1.1#delegation_contract', 'NULL'],
    ["'att_' || u", 'rw-agent-delegation/0.1.1#execution_attempt', 'NULL'],
    ["'att_' || u", 'rw-agent-delegation/0.1.1#execution_attempt', "'rev_' || u || '3'"],
    ["'pd_' || u", 'rw-agent-delegation/0.1.1#permission_decision', 'NULL'],
    ["'vr_' || u", 'rw-agent-delegation/0.1.1#verification_receipt', 'NULL'],
  ];
  return [
    ...events.map(
      ([branch, pos, type, k]) =>
        `INSERT INTO control_events(project_id, branch_id, position, event_id, event_type, idempotency_key, input_digest, event_digest, document)
         SELECT ${project}, ${branch}, ${pos}, 'evt_' || u || '${k}', '${type}', NULL, ${dg(10 + k)}, ${dg(k)}, ${q(PLACEHOLDER)} FROM seed_stems`,
    ),
    ...(
      [
        [events[0]!, 'delegation', 'active'],
        [events[1]!, 'delegation', 'active'],
        [events[4]!, 'attempt', 'unresolved'],
      ] as const
    ).map(
      ([[branch, pos, , k], kind, state]) =>
        `INSERT INTO control_heads(project_id, branch_id, scope_kind, position, event_id, event_digest, state) SELECT ${project}, ${branch}, '${kind}', ${pos}, 'evt_' || u || '${k}', ${dg(k)}, '${state}' FROM seed_stems`,
    ),
    `INSERT INTO ledger_nodes(node_id, parent_id, root_id, depth, space_id, owner_namespace, not_after, request_digest, issued_event, created_at, preset_id)
     SELECT 'dlg_' || u || 'r', NULL, 'dlg_' || u || 'r', 0, ${q(s.space)}, ${q(s.namespace)}, ${q(s.notAfter)}, ${dg(20)}, ${ev("delegation:dlg_' || u || 'r", 0)}, at, ${q(s.preset)} FROM seed_stems`,
    `INSERT INTO ledger_nodes(node_id, parent_id, root_id, depth, space_id, owner_namespace, not_after, request_digest, issued_event, created_at, preset_id)
     SELECT 'dlg_' || u || 'c', 'dlg_' || u || 'r', 'dlg_' || u || 'r', 1, ${q(s.space)}, ${q(s.namespace)}, ${q(s.notAfter)}, ${dg(21)}, ${ev("delegation:dlg_' || u || 'c", 1)}, at, NULL FROM seed_stems`,
    ...['r', 'c'].map((x) => `INSERT INTO ledger_balances(node_id, dimension, unit, ceiling, consumed, reserved) SELECT 'dlg_' || u || '${x}', 'invocations', 'invocation', 5, 1, 0 FROM seed_stems`),
    `INSERT INTO ledger_reservations(reservation_id, effect_id, root_id, owner_namespace, chain, kind, amounts, charged, status, request_digest, receipt, settlement, created_at, settled_at)
     SELECT 'res_' || u, 'eff_' || u, 'dlg_' || u || 'r', ${q(s.namespace)}, '["dlg_' || u || 'r","dlg_' || u || 'c"]', 'reserve', '{"invocations":"1"}', '[]', 'settled', ${dg(22)}, '{}', '{"kind":"measured"}', at, at FROM seed_stems`,
    ...['r', 'c'].flatMap((x) =>
      [
        [0, 1, 'reserve'],
        [1, -1, 'settle'],
      ].map(([c, r, why]) => `INSERT INTO ledger_entries(reservation_id, node_id, dimension, d_consumed, d_reserved, reason, at) SELECT 'res_' || u, 'dlg_' || u || '${x}', 'invocations', ${c}, ${r}, '${why}', at FROM seed_stems`),
    ),
    ...records.map(
      ([id, schema, prior], i) =>
        `INSERT INTO records(record_id, revision_id, content_digest, schema_ref, prior_revision, document, stored_at) SELECT ${id}, 'rev_' || u || '${i}', ${dg(30 + i)}, '${schema}', ${prior}, ${q(PLACEHOLDER)}, at FROM seed_stems`,
    ),
    // The attempt's head is its second revision.
    ...records.filter((_, i) => i !== 3).map(([id], j) => `INSERT INTO record_heads(record_id, revision_id) SELECT ${id}, 'rev_' || u || '${j >= 3 ? j + 1 : j}' FROM seed_stems`),
  ];
};

/** Seeds `tasks` settled tasks in transactions of `batch`; returns the seconds it took. */
export function seedTasks(db: Database.Database, shape: SeedShape, tasks: number, batch = 50_000): number {
  const t0 = performance.now();
  // Random keys into a dozen indexes: without a large page cache every insert is a page read.
  const cache = db.pragma('cache_size', { simple: true }) as number;
  db.pragma('cache_size = -1000000');
  db.exec('CREATE TEMP TABLE IF NOT EXISTS seed_stems (u TEXT NOT NULL, at TEXT NOT NULL)');
  const stems = db.prepare(
    'INSERT INTO seed_stems(u, at) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) SELECT lower(hex(randomblob(12))), ? FROM n',
  );
  const rows = TASK_ROWS(shape).map((sql) => db.prepare(sql));
  try {
    for (let left = tasks; left > 0; left -= batch) {
      const n = Math.min(left, batch);
      db.transaction(() => {
        db.exec('DELETE FROM seed_stems');
        // History, not live traffic: created two minutes ago, so a preset's per-minute issuance rate counts only the
        // roots the measured gateway opens (faster seeding once put 10^6 seeded roots inside the rate's minute).
        stems.run(n, new Date(Date.now() - 120_000).toISOString());
        for (const r of rows) r.run();
      }).immediate();
    }
  } finally {
    db.exec('DROP TABLE IF EXISTS temp.seed_stems');
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.pragma(`cache_size = ${cache}`);
  }
  return (performance.now() - t0) / 1000;
}
