/**
 * Prometheus metrics (issue #17), served at `/metrics` on the operator
 * listener. Counters and histograms hang off what already happens — the
 * request path's domain events (src/gateway/path/events.ts) and the access
 * log's line per request — so no step of the path carries metric code.
 * Gauges that describe durable state (unresolved reservations, active roots,
 * budgets, the outbox, open escalations) are read from the store at scrape
 * time by bounded read-only queries (src/store/gauges-sql.ts), so every node
 * of a cluster reports the same shared truth and a restart loses nothing.
 *
 * Labels are bounded: delegatee and preset ids come from the config (anything
 * else is `other`), codes from the ADR-0014 vocabulary, outcomes and calls
 * from closed sets. No task, attempt or caller id is ever a label.
 */
import { Router } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { BreakerSignal, Trip } from '../control/breaker.ts';
import type { PathEvent, PathEvents } from '../gateway/path/events.ts';
import type { AccessLine } from '../http/access-log.ts';
import type { Logger } from '../log.ts';
import type { Store } from '../store/port.ts';

export interface MetricsDeps {
  store: Store;
  logger: Logger;
  /** Configured delegatee and MCP server ids: the only values of the `delegatee` label (others become `other`). */
  delegatees: readonly string[];
  /** Configured preset ids: the only values of the `preset` label. */
  presets: readonly string[];
  /** Open escalations, counted at scrape time (a bounded scan; see README "Metrics"). */
  openEscalations: () => Promise<number>;
  now?: () => Date;
}

/** Latency buckets (seconds) for upstream calls and requests: 5 ms … 60 s. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Revocation propagation buckets (seconds): the sweep runs every `revocationSweepMs`. */
const PROPAGATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300];

export class GatewayMetrics {
  readonly registry = new Registry();
  private delegatees: Set<string>;
  private presets: readonly string[];
  private readonly now: () => Date;
  private readonly c;

  constructor(private readonly deps: MetricsDeps) {
    this.delegatees = new Set(deps.delegatees);
    this.presets = deps.presets;
    this.now = deps.now ?? (() => new Date());
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'baton_' });
    this.c = {
      admissions: new Counter({ name: 'baton_admissions_total', help: 'Turns admitted (a reservation held, ADR-0014 final admission), by delegatee and operation.', labelNames: ['delegatee', 'operation'], registers }),
      refusals: new Counter({ name: 'baton_refusals_total', help: 'Requests answered with an ADR-0014 error code, by code, delegatee and binding.', labelNames: ['code', 'delegatee', 'binding'], registers }),
      outcomes: new Counter({ name: 'baton_outcomes_total', help: 'Attempt verdicts committed, by outcome and delegatee.', labelNames: ['outcome', 'delegatee'], registers }),
      disagreements: new Counter({ name: 'baton_readback_disagreements_total', help: 'Verdicts whose read-back disagreed with the observed terminal state, by delegatee.', labelNames: ['delegatee'], registers }),
      escalations: new Counter({ name: 'baton_escalations_raised_total', help: 'Escalations the request path raised to the operator, by kind.', labelNames: ['kind'], registers }),
      trips: new Counter({ name: 'baton_breaker_trips_total', help: 'Circuit breakers tripped automatically, by scope kind and trigger.', labelNames: ['scope_kind', 'trigger'], registers }),
      signals: new Counter({ name: 'baton_breaker_signals_total', help: 'Breaker-relevant facts observed, by kind.', labelNames: ['kind'], registers }),
      upstream: new Histogram({ name: 'baton_upstream_duration_seconds', help: 'Upstream calls to delegatees (send: to the reply or stream headers; read_back: the verification GetTask), by call, delegatee and result.', labelNames: ['call', 'delegatee', 'result'], buckets: LATENCY_BUCKETS, registers }),
      requests: new Histogram({ name: 'baton_request_duration_seconds', help: 'Requests answered, by binding (jsonrpc, rest, mcp, well-known, admin, health, webhook, other).', labelNames: ['binding'], buckets: LATENCY_BUCKETS, registers }),
      propagation: new Histogram({ name: 'baton_revocation_propagation_seconds', help: 'From an authority change being recorded (revocation, trip, suspension) to the sweep stopping a running attempt, by cause.', labelNames: ['cause'], buckets: PROPAGATION_BUCKETS, registers }),
      reservations: new Gauge({ name: 'baton_reservations_unresolved', help: 'Reservations held or unknown (awaiting a verdict or reconciliation), by status.', labelNames: ['status'], registers }),
      oldest: new Gauge({ name: 'baton_reservation_oldest_age_seconds', help: 'Age of the oldest unresolved reservation, by status (0 when none).', labelNames: ['status'], registers }),
      roots: new Gauge({ name: 'baton_active_roots', help: 'Root delegations holding capacity, per preset (the rule of the preset active-root limit).', labelNames: ['preset'], registers }),
      ...budgetGauges(registers),
      outbox: new Gauge({ name: 'baton_outbox_depth', help: 'Push deliveries not yet delivered (pending or being delivered).', registers }),
      dead: new Gauge({ name: 'baton_outbox_dead_letters', help: 'Push deliveries that gave up (dead letters awaiting an operator requeue).', registers }),
      openEscalations: new Gauge({ name: 'baton_escalations_open', help: 'Escalations raised and not yet acknowledged.', registers }),
      up: new Gauge({ name: 'baton_store_gauges_up', help: '1 when the last scrape read the store gauges, 0 when the store could not be read.', registers }),
    };
    for (const status of ['held', 'unknown']) {
      this.c.reservations.set({ status }, 0);
      this.c.oldest.set({ status }, 0);
    }
  }

  /** Subscribes to the request path's domain events. */
  observe(events: PathEvents): this {
    events.on((e) => this.onEvent(e));
    return this;
  }

  onEvent(e: PathEvent): void {
    switch (e.type) {
      case 'admitted':
        this.c.admissions.inc({ delegatee: this.delegatee(e.delegatee), operation: e.operation });
        return;
      case 'closed': {
        const delegatee = this.delegatee(e.attempt.body.delegatee_id);
        if (e.attempt.body.outcome) this.c.outcomes.inc({ outcome: e.attempt.body.outcome, delegatee });
        if (e.readback === 'disagreed') this.c.disagreements.inc({ delegatee });
        return;
      }
      case 'upstream':
        this.c.upstream.observe({ call: e.call, delegatee: this.delegatee(e.delegatee), result: e.ok ? 'ok' : 'error' }, e.seconds);
        return;
      case 'stopped':
        if (e.seconds !== undefined) this.c.propagation.observe({ cause: e.cause }, e.seconds);
        return;
      case 'escalate':
        this.c.escalations.inc({ kind: e.kind });
        return;
      case 'signal':
        this.signal(e.signal);
        return;
    }
  }

  signal(s: BreakerSignal): void {
    this.c.signals.inc({ kind: s.kind });
  }

  /** A breaker the monitor tripped (src/operator/breakers.ts). */
  tripped(t: Trip): void {
    this.c.trips.inc({ scope_kind: t.scope.kind, trigger: t.trigger });
  }

  /** One answered request, from its access-log line. */
  request(l: AccessLine): void {
    if (typeof l.latency_ms === 'number') this.c.requests.observe({ binding: l.binding }, l.latency_ms / 1000);
    if (l.code) this.c.refusals.inc({ code: l.code, delegatee: l.delegatee === undefined ? 'none' : this.delegatee(l.delegatee), binding: l.binding });
  }

  /** Reads the durable gauges from the store, then renders every metric. */
  async render(): Promise<string> {
    await this.refresh();
    return this.registry.metrics();
  }

  /** A reload changed the configured delegatees or presets: the label values follow (src/operator/reload.ts). */
  relabel(labels: Pick<MetricsDeps, 'delegatees' | 'presets'>): void {
    this.delegatees = new Set(labels.delegatees);
    this.presets = labels.presets;
  }

  /** The `/metrics` route (text exposition format 0.0.4). */
  router(): Router {
    const router = Router();
    router.get('/metrics', async (_req, res) => {
      const body = await this.render();
      res.setHeader('content-type', this.registry.contentType);
      res.setHeader('cache-control', 'no-store');
      res.end(body);
    });
    return router;
  }

  private async refresh(): Promise<void> {
    const now = this.now();
    try {
      const snap = await this.deps.store.gauges.snapshot(this.presets, now.toISOString());
      this.c.reservations.reset();
      this.c.oldest.reset();
      for (const status of ['held', 'unknown'] as const) {
        const r = snap.reservations.find((x) => x.status === status);
        this.c.reservations.set({ status }, r?.count ?? 0);
        this.c.oldest.set({ status }, r?.oldest ? Math.max(0, (now.getTime() - Date.parse(r.oldest)) / 1000) : 0);
      }
      this.c.roots.reset();
      for (const r of snap.activeRoots) this.c.roots.set({ preset: r.preset }, r.count);
      for (const g of [this.c.ceiling, this.c.consumed, this.c.reserved, this.c.remaining]) g.reset();
      for (const b of snap.budgets) {
        const at = { preset: b.preset, dimension: b.dimension };
        this.c.ceiling.set(at, b.ceiling);
        this.c.consumed.set(at, b.consumed);
        this.c.reserved.set(at, b.reserved);
        this.c.remaining.set(at, Math.max(0, b.ceiling - b.consumed - b.reserved));
      }
      const count = (status: string) => snap.outbox.find((o) => o.status === status)?.count ?? 0;
      this.c.outbox.set(count('pending') + count('delivering'));
      this.c.dead.set(count('dead'));
      this.c.openEscalations.set(await this.deps.openEscalations());
      this.c.up.set(1);
    } catch (err) {
      // A scrape still answers (process and event metrics stay useful); the store's state is marked unread.
      this.c.up.set(0);
      this.deps.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'metrics: store gauges could not be read');
    }
  }

  private delegatee(id: string): string {
    return this.delegatees.has(id) ? id : 'other';
  }
}

/** Budgets summed over each preset's unexpired roots, per dimension (one gauge each: their sum would mean nothing). */
function budgetGauges(registers: Registry[]) {
  const g = (name: string, what: string) => new Gauge({ name: `baton_budget_${name}`, help: `Budget ${what} over each preset's unexpired roots, per dimension.`, labelNames: ['preset', 'dimension'], registers });
  return { ceiling: g('ceiling', 'ceilings'), consumed: g('consumed', 'consumed'), reserved: g('reserved', 'reserved (admitted, not yet settled)'), remaining: g('remaining', 'remaining (ceiling − consumed − reserved)') };
}
