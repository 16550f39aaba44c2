/** Folds flat node+balance rows of one root into the ledger tree (shared by both adapters). */
import type { LedgerTreeNode } from '../ledger/types.ts';

export interface TreeRow {
  node_id: string;
  parent_id: string | null;
  depth: number | bigint;
  not_after: string;
  dimension: string | null;
  ceiling: bigint | string | null;
  consumed: bigint | string | null;
  reserved: bigint | string | null;
}

export function buildTree(rootId: string, rows: readonly TreeRow[]): LedgerTreeNode | undefined {
  const nodes = new Map<string, LedgerTreeNode & { parent: string | null }>();
  for (const r of rows) {
    let n = nodes.get(r.node_id);
    if (!n) {
      n = { node_id: r.node_id, depth: Number(r.depth), not_after: r.not_after, balances: [], children: [], parent: r.parent_id };
      nodes.set(r.node_id, n);
    }
    if (r.dimension !== null) {
      n.balances.push({ dimension: r.dimension, ceiling: String(r.ceiling), consumed: String(r.consumed), reserved: String(r.reserved) });
    }
  }
  for (const n of nodes.values()) if (n.parent !== null) nodes.get(n.parent)?.children.push(n);
  const strip = (n: LedgerTreeNode & { parent?: string | null }): LedgerTreeNode => ({
    node_id: n.node_id,
    depth: n.depth,
    not_after: n.not_after,
    balances: n.balances,
    children: n.children.map(strip),
  });
  const root = nodes.get(rootId);
  return root && strip(root);
}
