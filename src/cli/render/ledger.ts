/** A delegation tree with each node's budgets and a bar of ceiling vs consumed/reserved (`ledger show`, `trees`). */
import type { LedgerTreeNode } from '../../ledger/types.ts';
import { budgetBar } from './table.ts';

export function renderBudgetTree(root: LedgerTreeNode): string {
  const lines: string[] = [];
  const walk = (n: LedgerTreeNode, prefix: string, last: boolean, top: boolean) => {
    lines.push(`${prefix}${top ? '' : last ? '└─ ' : '├─ '}${n.node_id}  (depth ${n.depth}, until ${n.not_after})`);
    const inner = top ? '' : prefix + (last ? '   ' : '│  ');
    const rows = n.balances.map((b) => {
      const [ceiling, consumed, reserved] = [BigInt(b.ceiling), BigInt(b.consumed), BigInt(b.reserved)];
      return { b, bar: budgetBar(ceiling, consumed, reserved), available: String(ceiling - consumed - reserved) };
    });
    const w = (f: (r: (typeof rows)[number]) => string) => Math.max(0, ...rows.map((r) => f(r).length));
    const [wd, wc, wu, wr, wa] = [w((r) => r.b.dimension), w((r) => r.b.ceiling), w((r) => r.b.consumed), w((r) => r.b.reserved), w((r) => r.available)];
    for (const r of rows) {
      const cells = `${r.b.dimension.padEnd(wd)}  ceiling ${r.b.ceiling.padEnd(wc)}  consumed ${r.b.consumed.padEnd(wu)}  reserved ${r.b.reserved.padEnd(wr)}  available ${r.available.padEnd(wa)}`;
      lines.push(`${inner}${n.children.length > 0 ? '│' : ' '}   ${cells}  ${r.bar}`);
    }
    n.children.forEach((c, i) => walk(c, inner, i === n.children.length - 1, false));
  };
  walk(root, '', true, true);
  return lines.join('\n');
}

export const BAR_LEGEND = 'bars: █ consumed  ▒ reserved  · available';
