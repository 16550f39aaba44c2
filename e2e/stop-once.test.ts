/**
 * RW-003 §8: descendants acknowledge or time out, and unknown
 * acknowledgements escalate — once. A revoked turn whose delegatee cannot be
 * stopped is asked to stop one time, not on every pass of the revocation
 * sweep, and ends `unknown` (held, escalated) at its follow-up bound.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AttemptBody } from '../src/attempts/record.ts';
import { schemaRefFor } from '../src/records/schema-ref.ts';
import { baton as batonCli } from '../test/cli/run.ts';
import { until } from '../test/helpers/until.ts';
import { API_KEY, startWorld, type World } from './gateway/world.ts';

let world: World;
beforeAll(async () => {
  world = await startWorld({
    agents: { silent: { behaviour: 'never-answer' } },
    remote: { headersTimeoutMs: 1_000 },
    // The follow-up bound leaves room for the CLI's revocation on a loaded machine (it must come first).
    config: { revocationSweepMs: 50, follow: { maxFollowMs: 15_000, tickMs: 100, pollMaxMs: 200 } },
  });
}, 60_000);
afterAll(async () => world?.close());

it('a revoked turn that cannot be stopped is escalated once, however many sweeps pass, and ends unknown at its bound', async () => {
  const res = await fetch(`${world.url}/agents/silent/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'anyone?' }] } } }),
  });
  const id = ((await res.json()) as { result: { task: { id: string } } }).result.task.id;
  const read = async () => {
    const store = world.store();
    try {
      const attempt = (await store.getRecord(id))!.body as AttemptBody;
      const escalations = (await store.listCurrent(schemaRefFor('escalation'), { limit: 500 })).records.map((r) => r.body as { kind: string; subject: { attempt_id?: string } }).filter((e) => e.subject.attempt_id === id);
      return { attempt, escalations };
    } finally {
      await store.close();
    }
  };
  const revoke = await batonCli(['control', 'revoke', (await read()).attempt.root_ref.object_id, '--reason', 'e2e: revoke what cannot be stopped'], { BATON_CONFIG: world.configFile, BATON_LOG_LEVEL: 'silent' });
  expect(revoke.code, revoke.stderr).toBe(0);
  // The sweep stops it (its first cause is recorded) ...
  const stopped = await until(async () => ((await read()).attempt.cancel_cause ? read() : undefined), 400, 25, 'the revocation sweep');
  expect(stopped!.attempt.state).not.toBe('closed');
  // ... and the follow-up bound comes many 50 ms sweep passes later.
  const end = await until(async () => {
    const r = await read();
    return r.attempt.state === 'closed' && r.escalations.some((e) => e.kind === 'effect_unverifiable') ? r : undefined;
  }, 1_200, 25, 'the follow-up bound');
  expect(end!.attempt).toMatchObject({ outcome: 'unknown', cancel_cause: { cause: 'revocation' } });
  expect(end!.escalations.filter((e) => e.kind === 'cancel_unacknowledged')).toHaveLength(1);
}, 60_000);
