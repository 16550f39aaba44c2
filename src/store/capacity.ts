/**
 * ADR-0014 ledger capacity, as SQL shared by both adapters. What counts is
 * what still holds capacity: roots that are unexpired, not terminal and not
 * yet fully settled, and records that are live (unexpired budget nodes,
 * unresolved reservations). Settled history is kept — nothing is erased —
 * but it does not crowd out new work; unresolved reservations always do.
 */
const TERMINAL = "('revoked','expired','retired','superseded')";

/** `p(name)` renders a placeholder in the adapter's dialect. */
export type Placeholder = (name: 'ns' | 'at') => string;

/** A root still holds capacity while nothing was admitted under it yet, or something is unresolved. */
const ROOT_LIVE = (root: string) => `
    (NOT EXISTS (SELECT 1 FROM ledger_reservations r WHERE r.root_id = ${root})
     OR EXISTS (SELECT 1 FROM ledger_reservations r WHERE r.root_id = ${root} AND r.status IN ('held', 'unknown')))`;

/**
 * A root is active while it is unexpired, not terminal and live — and,
 * whatever its horizon or state, while an effect under it is unresolved
 * (ADR-0014: durable uncertainty holds capacity until reconciliation).
 */
export const activeRootsSql = (p: Placeholder) => `
  SELECT count(*) AS n FROM (
    SELECT n.node_id FROM ledger_nodes n
    LEFT JOIN control_heads h ON h.project_id = 'rw-control:' || n.space_id AND h.branch_id = 'delegation:' || n.node_id
    WHERE n.parent_id IS NULL AND n.owner_namespace = ${p('ns')} AND n.not_after > ${p('at')}
      AND coalesce(h.state, '') NOT IN ${TERMINAL} AND ${ROOT_LIVE('n.node_id')}
    UNION
    -- Both halves walk an index bounded by live work, never the namespace's whole history.
    SELECT r.root_id FROM ledger_reservations r WHERE r.owner_namespace = ${p('ns')} AND r.status IN ('held', 'unknown')
  ) AS active`;

export const retainedSql = (p: Placeholder) => `
  SELECT (SELECT count(*) FROM ledger_nodes n WHERE n.owner_namespace = ${p('ns')} AND n.not_after > ${p('at')} AND ${ROOT_LIVE('n.root_id')})
       + (SELECT count(*) FROM ledger_reservations WHERE owner_namespace = ${p('ns')} AND status IN ('held', 'unknown')) AS n`;

/** Indexes the capacity queries rely on (migration 3 in both dialects). */
export const CAPACITY_INDEXES = `
  CREATE INDEX ledger_reservations_by_root ON ledger_reservations(root_id, status);
  CREATE INDEX ledger_reservations_live ON ledger_reservations(owner_namespace, status);
  CREATE INDEX ledger_nodes_live ON ledger_nodes(owner_namespace, not_after);
`;

/** `q(name)` renders a placeholder for the preset queries. */
export type PresetPlaceholder = (name: 'preset' | 'at' | 'since') => string;

/**
 * ADR-0014 preset limits, counted in the store so every process shares them
 * and a restart re-grants nothing: the roots of one preset that still hold
 * capacity (the rule above, per preset), and those issued in the last minute.
 */
export const presetActiveRootsSql = (p: PresetPlaceholder) => `
  SELECT count(*) AS n FROM (
    SELECT n.node_id FROM ledger_nodes n
    LEFT JOIN control_heads h ON h.project_id = 'rw-control:' || n.space_id AND h.branch_id = 'delegation:' || n.node_id
    WHERE n.preset_id = ${p('preset')} AND n.parent_id IS NULL AND n.not_after > ${p('at')}
      AND coalesce(h.state, '') NOT IN ${TERMINAL} AND ${ROOT_LIVE('n.node_id')}
    UNION
    SELECT r.root_id FROM ledger_reservations r JOIN ledger_nodes n ON n.node_id = r.root_id
    WHERE n.preset_id = ${p('preset')} AND r.status IN ('held', 'unknown')
  ) AS active`;

export const presetIssuedSinceSql = (p: PresetPlaceholder) =>
  `SELECT count(*) AS n FROM ledger_nodes WHERE preset_id = ${p('preset')} AND parent_id IS NULL AND created_at > ${p('since')}`;
