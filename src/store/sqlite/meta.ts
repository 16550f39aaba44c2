/**
 * MetaStore on SQLite: a claim is one program of the group commit (one BEGIN
 * IMMEDIATE transaction, or a savepoint in one), so two starting nodes cannot
 * both win, and, as every write on the connection, it is answered once durable.
 */
import type { MetaStore } from '../meta.ts';
import type { Db } from './database.ts';
import type { SqliteRunners } from './push.ts';

export function sqliteMeta(db: Db, { guard, write }: SqliteRunners): MetaStore {
  const identity = db.prepare<[string], { document: string }>('SELECT document FROM gateway_identity WHERE gateway_id = ?');
  const putIdentity = db.prepare(
    'INSERT INTO gateway_identity(gateway_id, document, claimed_at) VALUES (?, ?, ?) ON CONFLICT(gateway_id) DO UPDATE SET document = excluded.document, claimed_at = excluded.claimed_at',
  );
  // Read on every card verification (the hot path): prepared once.
  const lastCard = db.prepare<[string, string], { document: string }>('SELECT document FROM card_history WHERE origin = ? AND agent_card_id = ? ORDER BY seq DESC LIMIT 1');
  const appendCard = db.prepare('INSERT INTO card_history(origin, agent_card_id, document, accepted_at) VALUES (?, ?, ?, ?)');
  return {
    claimIdentity: async (gatewayId, decide, at) =>
      write(() => {
        const stored = identity.get(gatewayId)?.document;
        const next = decide(stored);
        if (next !== stored) putIdentity.run(gatewayId, next, at);
        return next;
      }),
    lastCard: async (origin, id) => guard(() => lastCard.get(origin, id)?.document),
    appendCard: async (origin, id, document, at) => write(() => void appendCard.run(origin, id, document, at)),
  };
}
