/**
 * What hangs off the request path's domain events (src/gateway/path/events.ts),
 * and the metrics that observe them.
 */
import type { Config } from '../config.ts';
import type { BreakerSignal } from '../control/breaker.ts';
import { PathEvents } from '../gateway/path/events.ts';
import type { Logger } from '../log.ts';
import type { Escalations } from '../operator/escalation.ts';
import type { Outbox } from '../push/outbox.ts';
import type { Store } from '../store/port.ts';
import { GatewayMetrics } from '../telemetry/metrics.ts';

/**
 * The request path's domain events, wired to what hangs off them: verified
 * outcomes to the push outbox, breaker signals to the monitor, and what
 * Baton cannot settle itself to the operator's escalations.
 */
export function pathEvents(deps: { push: Outbox | undefined; escalations: Escalations; signal: (s: BreakerSignal) => void; logger: Logger }): PathEvents {
  const events = new PathEvents();
  const warn = (what: string) => (err: unknown) => deps.logger.warn({ err: err instanceof Error ? err.message : String(err) }, what);
  events.on(async (e) => {
    if (e.type === 'signal') deps.signal(e.signal);
    // Why a caller got WORKING: a lost reply is rare and worth a warning; a turn outlasting its wait is routine (the follower logs each retry).
    if (e.type === 'handed_over') deps.logger[e.lost ? 'warn' : 'debug']({ attempt: e.attempt_id, delegatee: e.delegatee, reason: e.reason }, e.lost ? 'reply lost: the turn continues on the follower, its caller was told unknown' : 'turn continues on the follower');
    if (e.type === 'escalate') await deps.escalations.raise(e.kind, e.subject, e.reasons).catch(warn('escalation failed'));
    if (e.type !== 'closed') return;
    const c = e.attempt.body;
    await deps.push?.notify(e.attempt, e.evidence).catch(warn('push: enqueue failed; the recovery pass will retry'));
    if (c.outcome) deps.signal({ kind: 'outcome', outcome: c.outcome, agent: c.remote.card_ref.object_id, delegation: c.delegation_ref.object_id });
    if (c.outcome === 'unknown' || c.outcome === 'partially_applied') {
      const reasons = [`outcome ${c.outcome}: the reservation is held until reconciliation`, ...e.reasons];
      await deps.escalations.raise('effect_unverifiable', { attempt_id: c.attempt_id, delegation_id: c.delegation_ref.object_id }, reasons).catch(warn('escalation failed'));
    }
  });
  return events;
}

/**
 * Metrics over this gateway's configured delegatees, MCP servers and presets (src/telemetry/metrics.ts).
 * An MCP server's calls are labelled with its id like an agent's (issue #26); the ids are distinct
 * (mcp/config.ts mcpConfigProblems) and at most 64 servers are configured, so the label stays bounded.
 */
export function gatewayMetrics(config: Config, deps: { store: Store; logger: Logger; escalations: Escalations }): GatewayMetrics {
  const openEscalations = async () => (await deps.escalations.list({ state: 'open', limit: 1000 })).length;
  return new GatewayMetrics({ store: deps.store, logger: deps.logger, ...metricLabels(config), openEscalations });
}

/** The label values a configuration allows (again after a reload: GatewayMetrics.relabel). */
export function metricLabels(config: Pick<Config, 'delegatees' | 'mcpServers' | 'presets'>): { delegatees: string[]; presets: string[] } {
  return { delegatees: [...config.delegatees.map((d) => d.id), ...config.mcpServers.map((s) => s.id)], presets: config.presets.map((p) => p.id) };
}
