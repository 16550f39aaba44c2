/**
 * Data retention (RW-003 §9 minimal data; ADR-0014 nothing erased): content
 * stored apart from the records (records/detached.ts) — callers' messages and
 * task views — is purged once older than the retention period, while every
 * record, digest chain and control stream stays as it was. A purge is itself
 * recorded: a `retention_purge` record is sealed before any content goes
 * (naming the cut-off and who asked) and revised with the count after, and
 * every purged row names it, so `baton audit verify` can tell "purged by
 * retention" from "missing" or "tampered with". Delivered and dead push
 * bodies are stubbed too, and the store is then asked to drop older copies
 * of the bytes (issue 25 item 16).
 */
import { z } from 'zod';
import { invalidRequest } from '../errors.ts';
import { refOf, sealRecord } from '../records/envelope.ts';
import type { IdSource } from '../records/ids.ts';
import type { ActorRef } from '../records/revision-ref.ts';
import type { Clock } from '../records/time.ts';
import type { Store } from '../store/port.ts';

export const RetentionConfig = z.strictObject({
  /** Purge message and task-view content older than this many days; unset keeps it (no periodic purge). */
  contentDays: z.number().int().min(1).max(36_500).optional(),
  /** How often the gateway purges when contentDays is set. */
  purgeIntervalMs: z.number().int().min(1_000).max(7 * 24 * 3_600_000).default(3_600_000),
});
export type RetentionConfig = z.infer<typeof RetentionConfig>;

export interface RetentionPurgeBody {
  [key: string]: unknown;
  /** Content stored before this instant is purged. */
  before: string;
  requested_by: ActorRef;
  trigger: 'operator' | 'schedule';
  started_at: string;
  /** Set on the second revision, once the content is gone. */
  purged?: number;
  /** Delivered or dead push bodies replaced by a stub (the same revision). */
  purged_deliveries?: number;
  finished_at?: string;
}

export interface PurgeResult {
  purge_id: string;
  before: string;
  purged: number;
  /** Delivered or dead push deliveries whose body was replaced by a stub. */
  purged_deliveries: number;
  /**
   * Whether the store confirmed older copies of the purged bytes are gone
   * (SQLite: WAL checkpointed and truncated; false when a reader held it back,
   * and the next purge retries). PostgreSQL: always true, see README.
   */
  reclaimed: boolean;
  /** Content still held and purged overall, after this purge. */
  stats: { stored: number; purged: number };
}

export interface PurgeDeps {
  store: Store;
  clock: Clock;
  ids: IdSource;
}

/** The cut-off for a retention period of `days`, from now. */
export function cutoffFor(days: number, now: Date): Date {
  return new Date(now.getTime() - days * 86_400_000);
}

/** Purges content stored before `before`; recorded before and after. */
export async function purgeContent(deps: PurgeDeps, before: Date, by: ActorRef, trigger: RetentionPurgeBody['trigger']): Promise<PurgeResult> {
  if (Number.isNaN(before.getTime())) throw invalidRequest('--before is not a date (use ISO 8601, e.g. 2026-01-31 or 2026-01-31T00:00:00Z)');
  // Never the future: content stored after "now" is still within any retention period.
  if (before.getTime() > deps.clock.now().getTime()) throw invalidRequest('--before is in the future', { before: before.toISOString() });
  const iso = before.toISOString();
  const started = sealRecord<RetentionPurgeBody>(
    { type: 'retention_purge', issuedBy: by, lifecycle: 'active', body: { before: iso, requested_by: by, trigger, started_at: deps.clock.now().toISOString() } },
    deps,
  );
  await deps.store.putRecord(started);
  const purged = await deps.store.content.purge(iso, started.record_id, deps.clock.now().toISOString());
  // The exact bytes POSTed hold history and artifacts too; pending and delivering rows keep theirs (still to be sent identically).
  const purgedDeliveries = await deps.store.push.purgeBodies(iso, started.record_id);
  const reclaimed = await deps.store.content.reclaim();
  const finished = sealRecord<RetentionPurgeBody>(
    { type: 'retention_purge', issuedBy: by, lifecycle: 'recorded', recordId: started.record_id, prior: refOf(started), body: { ...{}, ...started.body, purged, purged_deliveries: purgedDeliveries, finished_at: deps.clock.now().toISOString() } },
    deps,
  );
  await deps.store.putRecord(finished);
  return { purge_id: started.record_id, before: iso, purged, purged_deliveries: purgedDeliveries, reclaimed, stats: await deps.store.content.stats() };
}
