/**
 * Server-rendered inline SVG charts: no script, no external fetch. Each chart
 * is an image with a text title and description for screen readers, and its
 * numbers are also offered as a table (people who cannot see the bars read
 * the same data).
 */
import { html, type Html } from './html.ts';
import type { SeriesView } from './series.ts';

// Colours with ≥ 3:1 contrast against the white chart background (WCAG 1.4.11).
const PALETTE = ['#1f5fa8', '#b3261e', '#2e7d32', '#8a4f00', '#6a3d9a', '#00707a', '#a0006e', '#4d4d4d'];
const W = 560;
const H = 160;
const PAD = { l: 48, r: 8, t: 8, b: 20 };

/** Axis and table numbers: whole above 10, one decimal below (a long fraction would overflow the axis). */
const num = (v: number) => (Number.isInteger(v) || v >= 10 ? String(Math.round(v)) : v.toFixed(1));

const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);

/** Stacked bars (counts per minute) or lines (levels, latencies) over the last hour. */
export function timeChart(id: string, title: string, data: SeriesView, opts: { kind: 'bars' | 'lines'; unit: string; empty: string }): Html {
  const keys = [...data.values.keys()];
  const n = data.starts.length;
  const totals = data.starts.map((_, i) => (opts.kind === 'bars' ? keys.reduce((s, k) => s + data.values.get(k)![i]!, 0) : Math.max(0, ...keys.map((k) => data.values.get(k)![i]!))));
  const max = Math.max(1, ...totals);
  const x = (i: number) => PAD.l + (i * (W - PAD.l - PAD.r)) / n;
  const y = (v: number) => H - PAD.b - (v * (H - PAD.t - PAD.b)) / max;
  const bw = Math.max(1, (W - PAD.l - PAD.r) / n - 1);
  const marks: Html[] = [];
  if (opts.kind === 'bars') {
    for (let i = 0; i < n; i++) {
      let base = 0;
      keys.forEach((k, j) => {
        const v = data.values.get(k)![i]!;
        if (v > 0) marks.push(html`<rect x="${x(i).toFixed(1)}" y="${y(base + v).toFixed(1)}" width="${bw.toFixed(1)}" height="${(y(base) - y(base + v)).toFixed(1)}" fill="${PALETTE[j % PALETTE.length]!}"><title>${hhmm(data.starts[i]!)} ${k}: ${num(v)}</title></rect>`);
        base += v;
      });
    }
  } else {
    keys.forEach((k, j) => {
      const pts = data.values.get(k)!.map((v, i) => `${(x(i) + bw / 2).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
      marks.push(html`<polyline points="${pts}" fill="none" stroke="${PALETTE[j % PALETTE.length]!}" stroke-width="2"/>`);
    });
  }
  const total = totals.reduce((a, b) => a + b, 0);
  const desc = keys.length === 0 || total === 0 ? opts.empty : `${keys.length} series over the last ${n} minutes; peak ${num(max)} ${opts.unit}.`;
  return html`<figure class="chart" aria-labelledby="${id}-t">
  <figcaption id="${id}-t">${title}</figcaption>
  <svg role="img" aria-labelledby="${id}-t ${id}-d" viewBox="0 0 ${W} ${H}" width="100%" preserveAspectRatio="xMidYMid meet">
    <desc id="${id}-d">${desc}</desc>
    <line x1="${PAD.l}" y1="${H - PAD.b}" x2="${W - PAD.r}" y2="${H - PAD.b}" stroke="#555"/>
    <text x="${PAD.l - 4}" y="${PAD.t + 10}" text-anchor="end" font-size="11" fill="#222">${num(max)}</text>
    <text x="${PAD.l - 4}" y="${H - PAD.b}" text-anchor="end" font-size="11" fill="#222">0</text>
    <text x="${PAD.l}" y="${H - 4}" font-size="11" fill="#222">${hhmm(data.starts[0]!)}</text>
    <text x="${W - PAD.r}" y="${H - 4}" text-anchor="end" font-size="11" fill="#222">${hhmm(data.starts[n - 1]!)} UTC</text>
    ${marks}
  </svg>
  <ul class="legend">${keys.map((k, j) => html`<li><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="${PALETTE[j % PALETTE.length]!}"/></svg> ${k}</li>`)}</ul>
  ${dataTable(data, opts.unit)}
</figure>`;
}

/** The chart's numbers (minutes with any value) as a table behind a disclosure. */
function dataTable(data: SeriesView, unit: string): Html {
  const keys = [...data.values.keys()];
  const rows = data.starts.map((s, i) => ({ s, vs: keys.map((k) => data.values.get(k)![i]!) })).filter((r) => r.vs.some((v) => v !== 0));
  if (rows.length === 0) return html``;
  return html`<details><summary>Data (${unit})</summary><table><thead><tr><th scope="col">minute (UTC)</th>${keys.map((k) => html`<th scope="col">${k}</th>`)}</tr></thead>
<tbody>${rows.map((r) => html`<tr><td>${hhmm(r.s)}</td>${r.vs.map((v) => html`<td>${num(v)}</td>`)}</tr>`)}</tbody></table></details>`;
}

/**
 * One budget dimension as a bar: consumed then reserved, against the ceiling.
 * Widths are SVG attributes (the console's CSP forbids inline styles).
 */
export function budgetBar(label: string, b: { ceiling: string; consumed: string; reserved: string }): Html {
  const ceiling = Number(b.ceiling);
  const consumed = Number(b.consumed);
  const reserved = Number(b.reserved);
  const scale = (v: number) => (ceiling > 0 ? Math.min(200, (v / ceiling) * 200) : 0);
  const c = scale(consumed);
  const r = Math.min(200 - c, scale(reserved));
  const text = `${label}: ${b.consumed} consumed, ${b.reserved} reserved of ${b.ceiling}`;
  return html`<span class="budget"><svg role="img" aria-label="${text}" width="200" height="12" viewBox="0 0 200 12"><rect width="200" height="12" fill="#e6e6e6" stroke="#555"/><rect width="${c.toFixed(1)}" height="12" fill="#1f5fa8"/><rect x="${c.toFixed(1)}" width="${r.toFixed(1)}" height="12" fill="#c77700"/></svg> <span class="budget-text">${label} ${b.consumed}+${b.reserved}/${b.ceiling}</span></span>`;
}
