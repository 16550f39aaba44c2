/** The charts page: admissions and refusals by code, held reservations, outbox depth, latency. */
import { timeChart } from '../charts.ts';
import { html, type Html } from '../html.ts';
import type { ConsoleSeries, SeriesView } from '../series.ts';

const pick = (v: SeriesView, keep: (key: string) => boolean): SeriesView => ({ starts: v.starts, values: new Map([...v.values].filter(([k]) => keep(k))) });

export function chartsView(series: ConsoleSeries | undefined): Html {
  if (!series) return html`<p>Charts are drawn by the serving gateway; this console runs without its series.</p>`;
  const levels = series.levels();
  return html`<p class="hint">Per minute, the last hour, as seen by this gateway process (a restart starts them afresh; the store holds the facts).</p>
<div class="charts">
${timeChart('c-adm', 'SendMessage admissions and refusals by code', series.counts(), { kind: 'bars', unit: 'requests', empty: 'No SendMessage calls in the last hour.' })}
${timeChart('c-held', 'Held reservations (held or unknown)', pick(levels, (k) => k === 'held reservations'), { kind: 'lines', unit: 'reservations', empty: 'No samples yet.' })}
${timeChart('c-outbox', 'Push outbox depth (pending and in delivery)', pick(levels, (k) => k === 'outbox depth'), { kind: 'lines', unit: 'deliveries', empty: 'No samples yet.' })}
${timeChart('c-lat', 'SendMessage latency, mean (ms; includes the delegatee round trips and read-back)', series.means(), { kind: 'lines', unit: 'ms', empty: 'No SendMessage calls in the last hour.' })}
</div>`;
}
