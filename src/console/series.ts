/**
 * The console's time series: per-minute buckets for the last hour, kept in
 * this process (a picture for people, not a record: the store and the audit
 * chain are the facts; a restart starts the pictures afresh). Counters by
 * key (admissions, refusals by ADR-0014 code), gauges sampled by the console
 * (held reservations, outbox depth) and latencies (mean per minute).
 */
export const BUCKET_MS = 60_000;
export const BUCKETS = 60;

export interface SeriesView {
  /** Bucket start times (ms), oldest first. */
  starts: number[];
  /** key → value per bucket (counts, last gauge sample, or mean latency). */
  values: Map<string, number[]>;
}

interface Bucket {
  start: number;
  values: Map<string, number>;
  counts: Map<string, number>;
}

class Ring {
  private readonly buckets: Bucket[] = [];

  at(now: number): Bucket {
    const start = Math.floor(now / BUCKET_MS) * BUCKET_MS;
    let last = this.buckets[this.buckets.length - 1];
    if (!last || last.start !== start) {
      last = { start, values: new Map(), counts: new Map() };
      this.buckets.push(last);
      while (this.buckets.length > BUCKETS) this.buckets.shift();
    }
    return last;
  }

  view(now: number, mode: 'sum' | 'last' | 'mean'): SeriesView {
    const end = Math.floor(now / BUCKET_MS) * BUCKET_MS;
    const starts = Array.from({ length: BUCKETS }, (_, i) => end - (BUCKETS - 1 - i) * BUCKET_MS);
    const byStart = new Map(this.buckets.map((b) => [b.start, b]));
    const keys = new Set(this.buckets.flatMap((b) => [...b.values.keys()]));
    const values = new Map<string, number[]>();
    for (const k of [...keys].sort()) {
      values.set(
        k,
        starts.map((s) => {
          const b = byStart.get(s);
          const v = b?.values.get(k) ?? 0;
          return mode === 'mean' ? v / (b?.counts.get(k) || 1) : v;
        }),
      );
    }
    return { starts, values };
  }
}

export class ConsoleSeries {
  private readonly counters = new Ring();
  private readonly gauges = new Ring();
  private readonly latencies = new Ring();

  constructor(private readonly now: () => number = Date.now) {}

  count(key: string, n = 1): void {
    const b = this.counters.at(this.now());
    b.values.set(key, (b.values.get(key) ?? 0) + n);
  }

  gauge(key: string, value: number): void {
    this.gauges.at(this.now()).values.set(key, value);
  }

  latency(key: string, ms: number): void {
    const b = this.latencies.at(this.now());
    b.values.set(key, (b.values.get(key) ?? 0) + ms);
    b.counts.set(key, (b.counts.get(key) ?? 0) + 1);
  }

  counts(): SeriesView {
    return this.counters.view(this.now(), 'sum');
  }

  levels(): SeriesView {
    return this.gauges.view(this.now(), 'last');
  }

  means(): SeriesView {
    return this.latencies.view(this.now(), 'mean');
  }
}
