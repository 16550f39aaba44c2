/** MetaStore on SQLite: a claim is one BEGIN IMMEDIATE transaction, so two starting nodes cannot both win. */
import type { MetaStore } from '../meta.ts';
import { immediate, type Db } from './database.ts';

export function sqliteMeta(db: Db, guard: <T>(fn: () => T) => T): MetaStore {
  return {
    claimIdentity: async (gatewayId, decide, at) =>
      guard(() =>
        immediate(db, () => {
          const row = db.prepare('SELECT document FROM gateway_identity WHERE gateway_id = ?').get(gatewayId) as { document: string } | undefined;
          const next = decide(row?.document);
          if (next !== row?.document) {
            db.prepare('INSERT INTO gateway_identity(gateway_id, document, claimed_at) VALUES (?, ?, ?) ON CONFLICT(gateway_id) DO UPDATE SET document = excluded.document, claimed_at = excluded.claimed_at').run(gatewayId, next, at);
          }
          return next;
        }),
      ),
    lastCard: async (origin, id) =>
      guard(() => (db.prepare('SELECT document FROM card_history WHERE origin = ? AND agent_card_id = ? ORDER BY seq DESC LIMIT 1').get(origin, id) as { document: string } | undefined)?.document),
    appendCard: async (origin, id, document, at) =>
      guard(() => void db.prepare('INSERT INTO card_history(origin, agent_card_id, document, accepted_at) VALUES (?, ?, ?, ?)').run(origin, id, document, at)),
  };
}
