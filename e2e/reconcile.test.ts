/**
 * Reconciliation rules (RW-003 §7.1, §9; ADR-0014), through a real gateway,
 * real agents and the real CLI: an effect whose reads agree but whose fence
 * moved is settled as consumed — it happened — and stays `unknown` (it was
 * not an authorised success); a disputed one is never re-labelled, and the
 * dispute is recorded once with what was claimed and what was read back.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttemptBody } from '../src/attempts/record.ts';
import { schemaRefFor } from '../src/records/schema-ref.ts';
import { baton as batonCli } from '../test/cli/run.ts';
import { until } from '../test/helpers/until.ts';
import { API_KEY, startWorld, type World } from './gateway/world.ts';

let world: World;
beforeAll(async () => {
  world = await startWorld({
    agents: { dropper: { behaviour: 'drop-after-accept', stepMs: 10 }, liar: { behaviour: 'lying-readback' } },
    // Nothing follows a lost reply on its own here: the revocation sweep is what finds it.
    config: { revocationSweepMs: 100, follow: { tickMs: 60_000, pollMinMs: 60_000, pollMaxMs: 60_000 } },
  });
}, 60_000);
afterAll(async () => world?.close());

const env = () => ({ BATON_CONFIG: world.configFile, BATON_LOG_LEVEL: 'silent' });
async function send(agent: string, text: string) {
  const res = await fetch(`${world.url}/agents/${agent}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] } } }),
  });
  return ((await res.json()) as { result: { task: { id: string } } }).result.task.id;
}
async function attempt(id: string): Promise<AttemptBody> {
  const store = world.store();
  try {
    return (await store.getRecord(id))!.body as AttemptBody;
  } finally {
    await store.close();
  }
}

describe('baton reconcile', () => {
  it('reads that agree after a fence moved settle the effect as consumed, never as an authorised success', async () => {
    const id = await send('dropper', 'lost, then revoked');
    const admitted = await attempt(id);
    const revoke = await batonCli(['control', 'revoke', admitted.root_ref.object_id, '--reason', 'e2e: revoked while the reply was lost'], env());
    expect(revoke.code, revoke.stderr).toBe(0);
    // The sweep stops it: the task was COMPLETED at the agent, but its fences moved, so unknown and held.
    const stopped = await until(async () => ((await attempt(id)).state === 'closed' ? attempt(id) : undefined), 400, 25, 'the revocation sweep');
    expect(stopped!.outcome).toBe('unknown');
    const store = world.store();
    expect((await store.ledger.reservation(admitted.reservation_id))?.status).toBe('unknown');
    await store.close();

    const out = await batonCli(['reconcile'], env());
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(new RegExp(`^${admitted.reservation_id}\\s+settled\\s+two agreeing reads projected unknown`, 'm'));
    const after = world.store();
    try {
      expect((await after.ledger.reservation(admitted.reservation_id))?.status).toBe('settled');
      const tree = await after.ledger.tree(admitted.root_ref.object_id);
      expect(tree!.balances.find((b) => b.dimension === 'invocations')).toMatchObject({ consumed: '1', reserved: '0' });
    } finally {
      await after.close();
    }
    expect((await attempt(id)).outcome).not.toBe('succeeded');
  }, 60_000);

  it('a disputed outcome is reported, recorded once with expected and observed, and left held', async () => {
    const id = await send('liar', 'claim one thing, read back another');
    const a = await attempt(id);
    for (let i = 0; i < 2; i++) {
      const out = await batonCli(['reconcile'], env());
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout).toMatch(new RegExp(`^${a.reservation_id}\\s+\\w+\\s+disputed: claimed TASK_STATE_COMPLETED \\S+, read back TASK_STATE_FAILED`, 'm'));
    }
    const store = world.store();
    try {
      expect(['held', 'unknown']).toContain((await store.ledger.reservation(a.reservation_id))?.status);
      const disputes = (await store.listCurrent(schemaRefFor('verification_receipt'), { limit: 500 })).records.filter((r) => r.body.profile === 'a2a-reconciliation/1' && r.body.reservation_id === a.reservation_id);
      expect(disputes).toHaveLength(1);
      expect(disputes[0]!.body).toMatchObject({ disputed: true, attempt_id: id, expected: { state: 'TASK_STATE_COMPLETED' }, observed: { state: 'TASK_STATE_FAILED' } });
    } finally {
      await store.close();
    }
  }, 60_000);
});
