/** Aligned plain-text tables and budget bars for people; machines use --json. */

/** Columns padded to their widest cell; the last column is not padded (no trailing spaces). */
export function table(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/**
 * A budget bar of `width` cells: consumed (█), reserved (▒), available (·),
 * each rounded so a non-zero amount always shows at least one cell.
 */
export function budgetBar(ceiling: bigint, consumed: bigint, reserved: bigint, width = 20): string {
  if (ceiling <= 0n) return `[${'·'.repeat(width)}]`;
  const cells = (n: bigint) => (n <= 0n ? 0 : Math.max(1, Math.round((Number(n) / Number(ceiling)) * width)));
  const used = Math.min(width, cells(consumed));
  const held = Math.min(width - used, cells(reserved));
  return `[${'█'.repeat(used)}${'▒'.repeat(held)}${'·'.repeat(width - used - held)}]`;
}
