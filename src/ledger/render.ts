/** Plain-text rendering of a ledger tree for `baton ledger show`. */
import type { LedgerTreeNode } from './types.ts';

export function renderLedgerTree(root: LedgerTreeNode): string {
  const lines: string[] = [];
  const walk = (n: LedgerTreeNode, prefix: string, last: boolean, top: boolean) => {
    lines.push(`${prefix}${top ? '' : last ? '└─ ' : '├─ '}${n.node_id}  (depth ${n.depth}, until ${n.not_after})`);
    const inner = top ? '' : prefix + (last ? '   ' : '│  ');
    const width = Math.max(0, ...n.balances.map((b) => b.dimension.length));
    for (const b of n.balances) {
      const available = BigInt(b.ceiling) - BigInt(b.consumed) - BigInt(b.reserved);
      lines.push(`${inner}${n.children.length > 0 ? '│' : ' '}   ${b.dimension.padEnd(width)}  ceiling ${b.ceiling}  consumed ${b.consumed}  reserved ${b.reserved}  available ${available}`);
    }
    n.children.forEach((c, i) => walk(c, inner, i === n.children.length - 1, false));
  };
  walk(root, '', true, true);
  return lines.join('\n');
}
