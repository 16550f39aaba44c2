/** MetaStore on PostgreSQL: a claim locks the gateway's row (inserting it first if absent) for the read-decide-write. */
import type { Queryable } from './pipeline.ts';
import type { MetaStore } from '../meta.ts';

export function pgMeta(deps: {
  read: <T>(sql: string, params: unknown[]) => Promise<T[]>;
  write: <T>(sql: string, params: unknown[]) => Promise<T[]>;
  withClient: <T>(fn: (client: Queryable) => Promise<T>) => Promise<T>;
}): MetaStore {
  return {
    claimIdentity: (gatewayId, decide, at) =>
      deps.withClient(async (client) => {
        const existing = await client.query<{ document: string }>('SELECT document FROM gateway_identity WHERE gateway_id = $1 FOR UPDATE', [gatewayId]);
        const stored = existing.rows[0]?.document;
        const next = decide(stored);
        if (stored === undefined) {
          const inserted = await client.query('INSERT INTO gateway_identity(gateway_id, document, claimed_at) VALUES ($1, $2, $3) ON CONFLICT (gateway_id) DO NOTHING', [gatewayId, next, at]);
          // Another node claimed it between our read and insert: the retry decides against its claim.
          if (inserted.rowCount !== 1) throw Object.assign(new Error('identity claimed concurrently'), { code: '40001' });
        } else if (next !== stored) {
          await client.query('UPDATE gateway_identity SET document = $2, claimed_at = $3 WHERE gateway_id = $1', [gatewayId, next, at]);
        }
        return next;
      }),
    lastCard: async (origin, id) =>
      (await deps.read<{ document: string }>('SELECT document FROM card_history WHERE origin = $1 AND agent_card_id = $2 ORDER BY seq DESC LIMIT 1', [origin, id]))[0]?.document,
    appendCard: async (origin, id, document, at) => {
      await deps.write('INSERT INTO card_history(origin, agent_card_id, document, accepted_at) VALUES ($1, $2, $3, $4)', [origin, id, document, at]);
    },
  };
}
