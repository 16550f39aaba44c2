/**
 * Push notification storage (webhook configs and the delivery outbox), shared
 * by both adapters. The SQL is the same in both dialects except for
 * placeholders and PostgreSQL's row locks, so an adapter supplies only a way
 * to run one statement. Every write is a single statement, hence atomic on
 * its own, so none needs a transaction (a large enqueue is several, which is
 * harmless: it is idempotent).
 */
import type { DeliveryRow, PushConfigRow, PushStore } from './port.ts';

/** Migration 4 in both dialects; `strict` is ' STRICT' for SQLite. */
export const pushTablesSql = (strict: string) => `
  CREATE TABLE push_configs (
    task_id             TEXT NOT NULL,
    config_id           TEXT NOT NULL,
    caller_id           TEXT NOT NULL,
    url                 TEXT NOT NULL,
    sealed_credentials  TEXT,
    created_at          TEXT NOT NULL,
    deleted_at          TEXT,
    seen_revision       TEXT,
    PRIMARY KEY (task_id, config_id)
  )${strict};
  -- Outbox recovery scans active configs only; deleted ones are kept for audit.
  -- The (task_id, config_id) scan that seeds the outbox's watch list uses the primary key.
  CREATE INDEX push_configs_active ON push_configs(created_at) WHERE deleted_at IS NULL;
  CREATE TABLE push_deliveries (
    delivery_id   TEXT PRIMARY KEY,
    task_id       TEXT NOT NULL,
    config_id     TEXT NOT NULL,
    revision_id   TEXT NOT NULL,
    body          TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('pending', 'delivering', 'delivered', 'dead')),
    attempts      INTEGER NOT NULL CHECK (attempts >= 0),
    next_at       TEXT NOT NULL,
    lease_until   TEXT,
    lease_owner   TEXT,
    last_error    TEXT,
    created_at    TEXT NOT NULL,
    delivered_at  TEXT,
    -- A lease exists exactly while a delivery is being delivered.
    CHECK ((status = 'delivering') = (lease_owner IS NOT NULL AND lease_until IS NOT NULL))
  )${strict};
  CREATE INDEX push_deliveries_due ON push_deliveries(status, next_at);
  CREATE INDEX push_deliveries_by_task ON push_deliveries(task_id, created_at);
`;

/**
 * Migration 13: the gateway (its actor id) that registered a config and that
 * enqueued a delivery. Gateways of several organisations can share one store
 * (README "one shared ledger"); a gateway's outbox recovers only its own
 * configs and claims only its own deliveries — another organisation's it
 * would sign with its own key, to that organisation's integrators (as
 * migration 12 does for the work queue, work-sql.ts). Rows from before carry
 * none and stay everyone's.
 */
export const pushGatewaySql = `
  ALTER TABLE push_configs ADD COLUMN gateway_id TEXT;
  ALTER TABLE push_deliveries ADD COLUMN gateway_id TEXT;
`;

/** A gateway's own rows (`gateway`: the placeholder of its id), and those from before rows named their gateway; `t` qualifies the column. */
export const ownRows = (gateway: string, t = '') => `(${t}gateway_id = ${gateway} OR ${t}gateway_id IS NULL)`;

/**
 * What a purged delivery's body becomes. Never valid JSON, so no body Baton
 * POSTs (always a JSON document) can be mistaken for it.
 */
export const PURGED_BODY_PREFIX = 'purged-by-retention:';
export const purgedBody = (purgeRef: string) => `${PURGED_BODY_PREFIX}${purgeRef}`;
export const isPurgedBody = (body: string) => body.startsWith(PURGED_BODY_PREFIX);

export interface PushDialect {
  /** The placeholder of the n-th (1-based) parameter; it may appear more than once. */
  p(n: number): string;
  /** Appended to the claim's inner SELECT so concurrent claimers pass over each other's rows. */
  lock: string;
  /** Runs one statement, resolving with its rows (a write's RETURNING rows; none without RETURNING). */
  all<T>(sql: string, params: readonly unknown[]): Promise<T[]>;
}

const DELIVERY_COLUMNS = [
  'delivery_id', 'task_id', 'config_id', 'revision_id', 'body', 'status',
  'attempts', 'next_at', 'lease_until', 'lease_owner', 'last_error', 'created_at', 'delivered_at', 'gateway_id',
] as const satisfies ReadonlyArray<keyof DeliveryRow>;
// Adding a field to DeliveryRow without a column here fails to compile.
const _everyField: Record<Exclude<keyof DeliveryRow, (typeof DELIVERY_COLUMNS)[number]>, never> = {};

/** Rows per INSERT: 14 columns × 500 stays under both engines' parameter limits. */
const CHUNK = 500;

const clamp = (limit: number) => Math.min(Math.max(Math.trunc(limit) || 1, 1), 1000);

/** SQLite reads integers as BigInt. */
const deliveryOf = (row: DeliveryRow): DeliveryRow => ({ ...{}, ...row, attempts: Number(row.attempts) });

const byDue = (a: DeliveryRow, b: DeliveryRow) =>
  a.next_at < b.next_at ? -1 : a.next_at > b.next_at ? 1 : a.delivery_id < b.delivery_id ? -1 : a.delivery_id > b.delivery_id ? 1 : 0;

export function composePush({ p, lock, all }: PushDialect): PushStore {
  // substr, not LIKE: a purge id is free to hold LIKE's wildcards. Parameters n (length) and n+1 (prefix).
  const NOT_PURGED = (n: number) => `substr(body, 1, ${p(n)}) <> ${p(n + 1)}`;
  const list = (from: number, n: number) => Array.from({ length: n }, (_, i) => p(from + i)).join(', ');
  const ACTIVE = 'deleted_at IS NULL';
  const changed = (sql: string, params: unknown[]) => all<{ changed: string }>(`${sql} RETURNING 1 AS changed`, params).then((r) => r.length > 0);
  return {
    putConfig: async (c) => {
      // A2A Create is an upsert: the new registration replaces the old one wholesale, and is looked at afresh.
      await all(
        `INSERT INTO push_configs(task_id, config_id, caller_id, url, sealed_credentials, created_at, gateway_id) VALUES (${list(1, 7)})
         ON CONFLICT(task_id, config_id) DO UPDATE SET caller_id = excluded.caller_id, url = excluded.url,
           sealed_credentials = excluded.sealed_credentials, created_at = excluded.created_at, gateway_id = excluded.gateway_id, deleted_at = NULL, seen_revision = NULL`,
        [c.task_id, c.config_id, c.caller_id, c.url, c.sealed_credentials, c.created_at, c.gateway_id],
      );
    },
    config: async (taskId, configId) =>
      (await all<PushConfigRow>(`SELECT * FROM push_configs WHERE task_id = ${p(1)} AND config_id = ${p(2)} AND ${ACTIVE}`, [taskId, configId]))[0],
    configs: (taskId) => all<PushConfigRow>(`SELECT * FROM push_configs WHERE task_id = ${p(1)} AND ${ACTIVE} ORDER BY created_at, config_id`, [taskId]),
    deleteConfig: (taskId, configId, at) =>
      changed(`UPDATE push_configs SET deleted_at = ${p(3)} WHERE task_id = ${p(1)} AND config_id = ${p(2)} AND ${ACTIVE}`, [taskId, configId, at]),
    changedConfigs: (limit, gateway) =>
      all<PushConfigRow & { head_revision: string }>(
        `SELECT c.*, h.revision_id AS head_revision FROM push_configs c JOIN record_heads h ON h.record_id = c.task_id
         WHERE c.${ACTIVE} AND (c.seen_revision IS NULL OR c.seen_revision <> h.revision_id) AND ${ownRows(p(2), 'c.')}
         ORDER BY c.created_at, c.task_id, c.config_id LIMIT ${p(1)}`,
        [clamp(limit), gateway],
      ),
    markSeen: async (taskId, configId, revisionId, generation) => {
      if (generation === undefined) {
        await all(`UPDATE push_configs SET seen_revision = ${p(3)} WHERE task_id = ${p(1)} AND config_id = ${p(2)}`, [taskId, configId, revisionId]);
      } else {
        await all(`UPDATE push_configs SET seen_revision = ${p(3)} WHERE task_id = ${p(1)} AND config_id = ${p(2)} AND created_at = ${p(4)}`, [taskId, configId, revisionId, generation]);
      }
    },
    enqueue: async (rows) => {
      let inserted = 0;
      for (let i = 0; i < rows.length; i += CHUNK) {
        const chunk = rows.slice(i, i + CHUNK);
        const values = chunk.map((_, r) => `(${list(r * DELIVERY_COLUMNS.length + 1, DELIVERY_COLUMNS.length)})`).join(', ');
        inserted += (
          await all(
            `INSERT INTO push_deliveries(${DELIVERY_COLUMNS.join(', ')}) VALUES ${values} ON CONFLICT(delivery_id) DO NOTHING RETURNING delivery_id`,
            chunk.flatMap((row) => DELIVERY_COLUMNS.map((col) => row[col])),
          )
        ).length;
      }
      return inserted;
    },
    claim: async (owner, now, leaseUntil, limit, gateway) => {
      if (limit < 1) return []; // asking for none must not take one
      const rows = await all<DeliveryRow>(
        `UPDATE push_deliveries SET status = 'delivering', lease_owner = ${p(1)}, lease_until = ${p(3)}, attempts = attempts + 1
         WHERE delivery_id IN (
           SELECT delivery_id FROM push_deliveries
           WHERE ((status = 'pending' AND next_at <= ${p(2)}) OR (status = 'delivering' AND lease_until <= ${p(2)})) AND ${ownRows(p(5))}
           ORDER BY next_at, delivery_id LIMIT ${p(4)}${lock})
         RETURNING *`,
        [owner, now, leaseUntil, clamp(limit), gateway],
      );
      return rows.map(deliveryOf).sort(byDue); // RETURNING follows no ORDER BY
    },
    finish: (deliveryId, owner, result) =>
      changed(
        `UPDATE push_deliveries SET status = ${p(3)}, next_at = coalesce(${p(4)}, next_at), last_error = ${p(5)}, delivered_at = ${p(6)},
           lease_owner = NULL, lease_until = NULL
         WHERE delivery_id = ${p(1)} AND status = 'delivering' AND lease_owner = ${p(2)}`,
        [deliveryId, owner, result.status, result.next_at ?? null, result.last_error ?? null, result.status === 'delivered' ? result.at : null],
      ),
    delivery: async (deliveryId) => {
      const row = (await all<DeliveryRow>(`SELECT * FROM push_deliveries WHERE delivery_id = ${p(1)}`, [deliveryId]))[0];
      return row && deliveryOf(row);
    },
    deliveries: async (filter) => {
      const params: unknown[] = [];
      const where = [
        ...(filter.status !== undefined ? [`status = ${p(params.push(filter.status))}`] : []),
        ...(filter.task_id !== undefined ? [`task_id = ${p(params.push(filter.task_id))}`] : []),
      ];
      const rows = await all<DeliveryRow>(
        `SELECT * FROM push_deliveries ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY created_at DESC, delivery_id DESC LIMIT ${p(params.push(clamp(filter.limit)))}`,
        params,
      );
      return rows.map(deliveryOf);
    },
    requeue: (deliveryId, at) =>
      changed(
        `UPDATE push_deliveries SET status = 'pending', next_at = ${p(2)}, attempts = 0, lease_owner = NULL, lease_until = NULL
         WHERE delivery_id = ${p(1)} AND status = 'dead' AND ${NOT_PURGED(3)}`,
        [deliveryId, at, PURGED_BODY_PREFIX.length, PURGED_BODY_PREFIX],
      ),
    purgeBodies: async (before, purgeRef) =>
      (
        await all(
          `UPDATE push_deliveries SET body = ${p(2)}
           WHERE status IN ('delivered', 'dead') AND created_at < ${p(1)} AND ${NOT_PURGED(3)} RETURNING delivery_id`,
          [before, purgedBody(purgeRef), PURGED_BODY_PREFIX.length, PURGED_BODY_PREFIX],
        )
      ).length,
  };
}
