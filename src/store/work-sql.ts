/**
 * The durable attempt work queue (DESIGN "The request path is one durable
 * state machine per attempt"): one row per admitted effect that still needs
 * a verdict. The admission inserts it leased to the admitting node, the
 * verdict deletes it, and any node claims a row whose lease lapsed (its
 * node died or gave up), so every open attempt is followed until it ends.
 * The SQL is shared by both adapters, as push-sql.ts is.
 */
import type { WorkStore } from './port.ts';
import { ownRows, type PushDialect } from './push-sql.ts';
import type { WorkRow } from './tx/ops.ts';

/** Migration 5 in both dialects; `strict` is ' STRICT' for SQLite. */
export const workTablesSql = (strict: string) => `
  ALTER TABLE ledger_nodes ADD COLUMN preset_id TEXT;
  CREATE INDEX ledger_nodes_by_preset ON ledger_nodes(preset_id, created_at) WHERE parent_id IS NULL AND preset_id IS NOT NULL;
  -- One row per preset that has issued a root: PostgreSQL locks it to serialise that preset's issuance.
  CREATE TABLE preset_locks (preset_id TEXT PRIMARY KEY)${strict};
  CREATE TABLE attempt_work (
    effect_id       TEXT PRIMARY KEY,
    attempt_id      TEXT NOT NULL,
    reservation_id  TEXT NOT NULL,
    lease_owner     TEXT,
    lease_until     TEXT NOT NULL,
    tries           INTEGER NOT NULL CHECK (tries >= 0),
    deadline        TEXT NOT NULL,
    created_at      TEXT NOT NULL
  )${strict};
  CREATE INDEX attempt_work_due ON attempt_work(lease_until);
  CREATE INDEX attempt_work_by_attempt ON attempt_work(attempt_id);
`;

/**
 * Migration 11: the remote task id rides on the work row while a turn is
 * followed (issue #24: two attempt revisions per turn, admitted and closed;
 * the verdict copies it onto the closing revision).
 */
export const workRemoteTaskSql = 'ALTER TABLE attempt_work ADD COLUMN remote_task_id TEXT;';

/**
 * Migration 12: the gateway (its actor id) that admitted the turn. Gateways of
 * several organisations can share one store (README "one shared ledger"); a
 * node follows, stops and sweeps only its own gateway's turns — another
 * organisation's it could reach only without that organisation's
 * credentials, and would judge under its own name (issue #25 item 2). Rows
 * from before carry none and stay everyone's.
 */
export const workGatewaySql = 'ALTER TABLE attempt_work ADD COLUMN gateway_id TEXT;';

/**
 * Migration 20 (issue #24): an effect's follow-up ends when its reservation
 * leaves `held` (a verdict, or durable uncertainty: the reconciler takes
 * over), in the statement that resolves it — the verdict's own DELETE was a
 * statement of its own on SQLite. A settlement that resolves from another
 * status still ends it explicitly (ledger/settle.ts).
 */
export const workEndsOnResolveSql = (dialect: 'sqlite' | 'postgres'): string => {
  const when = "OLD.status = 'held' AND NEW.status <> 'held'";
  const body = 'DELETE FROM attempt_work WHERE effect_id = NEW.effect_id';
  if (dialect === 'sqlite') return `CREATE TRIGGER attempt_work_ends_on_resolve AFTER UPDATE OF status ON ledger_reservations WHEN ${when} BEGIN ${body}; END;`;
  return `CREATE FUNCTION attempt_work_ends_on_resolve() RETURNS trigger LANGUAGE plpgsql AS $fn$ BEGIN ${body}; RETURN NULL; END $fn$;
  CREATE TRIGGER attempt_work_ends_on_resolve AFTER UPDATE OF status ON ledger_reservations FOR EACH ROW WHEN (${when}) EXECUTE FUNCTION attempt_work_ends_on_resolve();`;
};

const COLUMNS = 'effect_id, attempt_id, reservation_id, lease_owner, lease_until, tries, deadline, created_at, remote_task_id, gateway_id';
const rowOf = (r: WorkRow): WorkRow => ({ ...{}, ...r, tries: Number(r.tries) });
const clamp = (limit: number) => Math.min(Math.max(Math.trunc(limit) || 1, 1), 1000);

export function composeWork({ p, lock, all }: PushDialect): WorkStore {
  return {
    claim: async (owner, now, leaseUntil, limit, gateway) =>
      (
        await all<WorkRow>(
          `UPDATE attempt_work SET lease_owner = ${p(1)}, lease_until = ${p(3)}, tries = tries + 1
           WHERE effect_id IN (SELECT effect_id FROM attempt_work WHERE lease_until <= ${p(2)} AND ${ownRows(p(5))} ORDER BY lease_until, effect_id LIMIT ${p(4)}${lock})
           RETURNING ${COLUMNS}`,
          [owner, now, leaseUntil, clamp(limit), gateway],
        )
      ).map(rowOf),
    renew: async (effectId, owner, leaseUntil) =>
      (await all(`UPDATE attempt_work SET lease_until = ${p(3)} WHERE effect_id = ${p(1)} AND lease_owner = ${p(2)} RETURNING effect_id`, [effectId, owner, leaseUntil])).length === 1,
    release: async (effectId, owner, dueAt) =>
      (await all(`UPDATE attempt_work SET lease_owner = NULL, lease_until = ${p(3)} WHERE effect_id = ${p(1)} AND lease_owner = ${p(2)} RETURNING effect_id`, [effectId, owner, dueAt])).length === 1,
    claimIdle: async (effectId, owner, leaseUntil) =>
      (
        await all<WorkRow>(
          `UPDATE attempt_work SET lease_owner = ${p(2)}, lease_until = ${p(3)}, tries = tries + 1 WHERE effect_id = ${p(1)} AND lease_owner IS NULL RETURNING ${COLUMNS}`,
          [effectId, owner, leaseUntil],
        )
      ).map(rowOf)[0],
    noteRemoteTask: async (effectId, taskId) =>
      (await all(`UPDATE attempt_work SET remote_task_id = ${p(2)} WHERE effect_id = ${p(1)} AND remote_task_id IS NULL RETURNING effect_id`, [effectId, taskId])).length === 1,
    done: async (effectId) => void (await all(`DELETE FROM attempt_work WHERE effect_id = ${p(1)}`, [effectId])),
    get: async (effectId) => (await all<WorkRow>(`SELECT ${COLUMNS} FROM attempt_work WHERE effect_id = ${p(1)}`, [effectId])).map(rowOf)[0],
    ofAttempt: async (attemptId) => (await all<WorkRow>(`SELECT ${COLUMNS} FROM attempt_work WHERE attempt_id = ${p(1)} ORDER BY created_at, effect_id`, [attemptId])).map(rowOf),
    list: async (limit, gateway) => (await all<WorkRow>(`SELECT ${COLUMNS} FROM attempt_work WHERE ${ownRows(p(2))} ORDER BY created_at, effect_id LIMIT ${p(1)}`, [clamp(limit), gateway])).map(rowOf),
  };
}
