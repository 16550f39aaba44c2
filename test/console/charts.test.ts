/** The console's time series and SVG charts: per-minute buckets, means, escaping, budget bars. */
import { describe, expect, it } from 'vitest';
import { budgetBar, timeChart } from '../../src/console/charts.ts';
import { BUCKET_MS, BUCKETS, ConsoleSeries } from '../../src/console/series.ts';

describe('console series', () => {
  it('counts per minute by key, keeps the last hour only, and averages latencies per minute', () => {
    let now = 10 * BUCKET_MS;
    const s = new ConsoleSeries(() => now);
    s.count('admitted');
    s.count('admitted');
    s.count('refused: limit_exceeded');
    s.latency('SendMessage', 10);
    s.latency('SendMessage', 30);
    now += BUCKET_MS;
    s.count('admitted');
    s.gauge('outbox depth', 3);
    s.gauge('outbox depth', 5);
    const c = s.counts();
    expect(c.starts).toHaveLength(BUCKETS);
    expect(c.values.get('admitted')!.slice(-2)).toEqual([2, 1]);
    expect(c.values.get('refused: limit_exceeded')!.slice(-2)).toEqual([1, 0]);
    expect(s.means().values.get('SendMessage')!.slice(-2)).toEqual([20, 0]);
    expect(s.levels().values.get('outbox depth')!.at(-1)).toBe(5);
    now += BUCKETS * BUCKET_MS; // an hour later: all of it has aged out
    expect([...s.counts().values.values()].flat().every((v) => v === 0)).toBe(true);
  });
});

describe('console charts', () => {
  it('render an accessible SVG with escaped series names and a data table', () => {
    const s = new ConsoleSeries(() => 5 * BUCKET_MS);
    s.count('<script>x</script>');
    const out = timeChart('c1', 'Admissions', s.counts(), { kind: 'bars', unit: 'requests', empty: 'none' }).value;
    expect(out).toContain('role="img"');
    expect(out).toContain('aria-labelledby="c1-t c1-d"');
    expect(out).not.toContain('<script>');
    expect(out).toContain('&lt;script&gt;x&lt;/script&gt;');
    expect(out).toContain('<details><summary>Data (requests)</summary>');
    expect(timeChart('c2', 'Empty', new ConsoleSeries().counts(), { kind: 'lines', unit: 'ms', empty: 'Nothing yet.' }).value).toContain('<desc id="c2-d">Nothing yet.</desc>');
  });

  it('label the axis with a short number (a long fraction would overflow it)', () => {
    const s = new ConsoleSeries(() => 5 * BUCKET_MS);
    s.latency('SendMessage', 1241.0123);
    expect(timeChart('c3', 'Latency', s.means(), { kind: 'lines', unit: 'ms', empty: '' }).value).toContain('fill="#222">1241</text>');
  });

  it('draw consumed then reserved against the ceiling, clamped, and say the numbers', () => {
    const bar = budgetBar('invocations', { ceiling: '10', consumed: '5', reserved: '8' }).value;
    expect(bar).toContain('aria-label="invocations: 5 consumed, 8 reserved of 10"');
    expect(bar).toContain('<rect width="100.0" height="12"');
    expect(bar).toContain('<rect x="100.0" width="100.0" height="12"'); // reserved clamped to what is left of the bar
  });
});
