/** A reader for the Prometheus text exposition format, enough for tests to find one sample. */

/** The non-comment lines of a scrape. */
export async function scrape(url: string): Promise<string[]> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`scrape answered ${res.status}`);
  return (await res.text()).split('\n').filter((l) => l && !l.startsWith('#'));
}

/** The value of `name` with exactly these labels (order-insensitive); 0 when the series is absent. */
export function sample(lines: readonly string[], name: string, labels: Record<string, string>): number {
  const want = Object.entries(labels).sort(([a], [b]) => a.localeCompare(b));
  for (const line of lines) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = [...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!] as const).sort(([a], [b]) => a.localeCompare(b));
    if (got.length === want.length && got.every(([k, v], i) => k === want[i]![0] && v === want[i]![1])) return Number(m[3]);
  }
  return 0;
}
