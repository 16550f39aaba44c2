/**
 * RW-003 §11.4 mid-execution reassignment, end to end: a real Baton process,
 * two real SDK delegatees, the operator API and CLI. ATT-1 runs under D at
 * alpha; it is checkpointed; alpha becomes unavailable; the operator revokes
 * D and reassigns it to beta as D@r2 with the remaining budget; ATT-2 resumes
 * from the checkpoint with a fresh fence set. Anything carrying the old head
 * fails; ATT-1 is never rewritten.
 */
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollUntil } from './harness/process.ts';
import { assertNoDownstreamLeaks } from './gateway/leaks.ts';
import { expectRpcA2A } from './gateway/errors.ts';
import { API_KEY, startWorld, type World } from './gateway/world.ts';
import { baton as batonCli } from '../test/cli/run.ts';
import { sealRecord } from '../src/records/envelope.ts';
import { randomIds } from '../src/records/ids.ts';
import { systemClock } from '../src/records/time.ts';
import type { AttemptBody } from '../src/attempts/record.ts';

const OPS_KEY = 'e2e-operator-key-not-a-secret';
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
let world: World;

beforeAll(async () => {
  world = await startWorld({
    agents: { alpha: { behaviour: 'honest', stepMs: 30 }, beta: { behaviour: 'honest', stepMs: 30 }, gamma: { behaviour: 'honest', stepMs: 30 } },
    presets: [{ id: 'standard', maxInvocations: 5 }],
    remote: { headersTimeoutMs: 2000, bodyTimeoutMs: 10_000 },
    config: { operators: [{ id: 'ops', apiKeySha256: sha256(OPS_KEY) }], admin: { port: 0 }, revocationSweepMs: 100 },
  });
}, 90_000);
afterAll(async () => world?.close());

async function admin<T = Record<string, unknown>>(method: 'GET' | 'POST', path: string, body?: unknown, key = OPS_KEY): Promise<{ status: number; json: T }> {
  const res = await fetch(`${world.adminUrl}${path}`, { method, headers: { 'content-type': 'application/json', 'x-api-key': key }, ...(body ? { body: JSON.stringify(body) } : {}) });
  return { status: res.status, json: (await res.json()) as T };
}

let rpcId = 0;
async function rpc(agent: string, method: string, params: Record<string, unknown>) {
  const res = await world.fetch(`${world.url}/agents/${agent}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': API_KEY, 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }),
  });
  return (await res.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown[] } };
}

/** A slow task at `agent` that stays WORKING; returns Baton's task id. */
/** Effects an agent received (sends; reads such as Baton's follow-up GetTask polls do not count). */
async function sendsTo(agent: string): Promise<number> {
  const c = (await world.agents[agent]!.log()).counts;
  return (c.SendMessage ?? 0) + (c.SendStreamingMessage ?? 0);
}

async function startSlow(agent: string, text = 'slow research: stage two sources'): Promise<string> {
  const out = await rpc(agent, 'SendMessage', { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] }, configuration: { returnImmediately: true } });
  expect(out.error).toBeUndefined();
  return (out.result!.task as { id: string }).id;
}

type Audit = { attempt: { body: AttemptBody; revision_id: string }; revisions: Array<{ revision_id: string }>; fences: Array<{ branch_id: string; moved: boolean }>; following: Array<{ remote_task_id: string | null }> };
const audit = async (id: string) => (await admin<Audit>('GET', `/admin/attempts/${id}`)).json;

describe('RW-003 §11.4 mid-execution reassignment', () => {
  it('the operator API refuses requests without operator credentials, and the front-door key is not one', async () => {
    expect((await admin('GET', '/admin/trees', undefined, 'nope')).status).toBe(401);
    expect((await admin('GET', '/admin/trees', undefined, API_KEY)).status).toBe(401);
    const res = await fetch(`${world.adminUrl}/admin/trees`);
    expect(res.status).toBe(401);
    // And the operator API is not on the front door.
    expect((await world.fetch(`${world.url}/admin/trees`, { headers: { 'x-api-key': OPS_KEY } })).status).toBe(404);
  });

  it('checkpoint, revoke, D@r2 for another agent with the remaining budget, ATT-2 from the checkpoint under fresh fences', async () => {
    const att1 = await startSlow('alpha');
    const first = await audit(att1);
    const a1 = first.attempt.body;
    const d = a1.delegation_ref.object_id;
    // Running: the task the delegatee named is on the followed turn's work row (the verdict records it on the attempt).
    expect(first.following.map((f) => f.remote_task_id)).toEqual([expect.stringMatching(/\S/)]);

    const cp = await admin<{ record_id: string; body: { control_fence_set: Array<{ branch_id: string; position: number }>; input_revisions: unknown[]; sequence: number } }>('POST', `/admin/attempts/${att1}/checkpoint`, { reason: 'CP-7: two sources staged' });
    expect(cp.status).toBe(201);
    expect(cp.json.body.sequence).toBe(1);
    expect(cp.json.body.input_revisions).toHaveLength(1);
    const db4 = cp.json.body.control_fence_set.find((b) => b.branch_id === `delegation:${d}`)!;
    const att1Revisions = (await audit(att1)).revisions.map((r) => r.revision_id);

    await world.agents.alpha!.kill9(); // the agent becomes unavailable

    const r = await admin<{ checkpoint: string; revoked: { position: number }; reassigned: { position: number }; contract_revision: string; attempt: string }>('POST', `/admin/delegations/${d}/reassign`, {
      to: 'beta',
      reason: 'alpha unavailable mid-task',
      checkpoint: cp.json.record_id,
      resolvePrevious: { as: 'consumed', note: 'alpha died after staging two sources; treat its invocation as spent' },
    });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json.checkpoint).toBe(cp.json.record_id);
    expect(r.json.revoked.position).toBe(db4.position + 1); // DB4 → DB5
    expect(r.json.reassigned.position).toBe(db4.position + 2);

    // D@r2: same delegation, next revision, beta's card, no wider, remaining budget.
    const store = world.store();
    try {
      const revisions = await store.listRevisions(d);
      expect(revisions.map((x) => x.revision_id).at(-1)).toBe(r.json.contract_revision);
      const [r1, r2] = revisions.slice(-2) as unknown as Array<{ revision_id: string; prior_revision_ref?: { revision_id: string }; body: { delegatee_agent_ref: { card_ref: { object_id: string } }; scope: unknown; budget_ceilings: Array<{ ceiling: string }> } }>;
      expect(r2!.prior_revision_ref?.revision_id).toBe(r1!.revision_id);
      expect(r2!.body.delegatee_agent_ref.card_ref.object_id).not.toBe(r1!.body.delegatee_agent_ref.card_ref.object_id);
      expect(r2!.body.scope).toEqual(r1!.body.scope);
      expect(Number(r2!.body.budget_ceilings[0]!.ceiling)).toBe(Number(r1!.body.budget_ceilings[0]!.ceiling) - 1);

      // ATT-2 references the checkpoint and ATT-1, and fences the new head, not DB4.
      const a2 = (await audit(r.json.attempt)).attempt.body;
      expect(a2.resumed_from?.object_id).toBe(cp.json.record_id);
      expect(a2.reassigned_from).toBe(att1);
      expect(a2.delegatee_id).toBe('beta');
      expect(a2.delegation_ref.revision_id).toBe(r.json.contract_revision);
      const fenced = a2.fence_set.find((b) => b.branch_id === `delegation:${d}`)!;
      expect(fenced.position).toBe(r.json.reassigned.position);
      expect(a2.input_ref?.content_digest).not.toBe(undefined);

      // Beta got exactly the checkpointed input, under the r2 chain.
      const beta = await world.agents.beta!.log();
      // (The contracts name the message by digest only; the words are in the message's parts.)
      expect(JSON.stringify(beta.requests.map((r) => r.messageParts))).toContain('slow research: stage two sources');

      // ATT-1 is not rewritten: its earlier revisions are untouched and it still names r1.
      const after = await audit(att1);
      expect(after.revisions.map((x) => x.revision_id).slice(0, att1Revisions.length)).toEqual(att1Revisions);
      expect(after.attempt.body.delegation_ref.revision_id).toBe(r1!.revision_id);
      expect(after.attempt.body.cancel_cause?.cause).toBe('reassignment');

      // A stale effect carrying DB4 fails the control-head compare — from another process on the same ledger.
      const effect = randomIds.next('eff');
      const decision = sealRecord({ type: 'permission_decision', body: { effect_id: effect, decision: 'allow' }, issuedBy: a1.delegation_ref, lifecycle: 'recorded' }, { ids: randomIds, clock: systemClock });
      await expect(
        store.ledger.admit({
          effect_id: effect,
          reservation_id: randomIds.next('res'),
          node_id: d,
          kind: 'reserve',
          amounts: { invocations: 1n },
          fence_set: a1.fence_set,
          scopes: [],
          decision,
          attempt_scope: { space_id: a1.space_id, scope_kind: 'attempt', scope_id: att1 },
          actor_ref: a1.delegation_ref,
          at: new Date().toISOString(),
        }),
      ).rejects.toMatchObject({ code: 'context_invalidated' });
    } finally {
      await store.close();
    }

    // And at the front door: a follow-up turn on ATT-1 is refused — ATT-1 is closed (cancelled for the
    // reassignment), so it takes no more messages (alpha is dead: a turn that reached it would be unavailable);
    // no effect reaches beta.
    // (Reads of ATT-2, which Baton follows at beta in the background, may; sends may not.)
    const before = await sendsTo('beta');
    const turn = (agent: string) => rpc(agent, 'SendMessage', { message: { messageId: randomUUID(), role: 'ROLE_USER', taskId: att1, parts: [{ text: 'continue' }] } });
    expectRpcA2A((await turn('alpha')).error, 'unsupported', 'this task cannot take another message');
    // At beta's door ATT-1 is no task of that route at all (A2A TaskNotFoundError).
    expect((await turn('beta')).error).toMatchObject({ code: -32001, data: [{ reason: 'TASK_NOT_FOUND' }] });
    expect(await sendsTo('beta')).toBe(before);

    // Cancelling ATT-1's dead agent could not be acknowledged: escalated, visible to the operator.
    const escalations = (await admin<Array<{ body: { kind: string; subject: { attempt_id?: string } } }>>('GET', '/admin/escalations?state=open')).json;
    expect(escalations.some((e) => e.body.kind === 'cancel_unacknowledged' && e.body.subject.attempt_id === att1)).toBe(true);

    // ATT-2's outcome is verified like any other: cancel it and read back (it is a slow task).
    const cancelled = await rpc('beta', 'CancelTask', { id: r.json.attempt });
    expect(cancelled.error).toBeUndefined();
    const final = await pollUntil(async () => (await audit(r.json.attempt)).attempt.body, (b) => b.state === 'closed', { polls: 200, what: 'ATT-2 closed' });
    expect(final.outcome).toBe('cancelled');
    expect(final.cancel_cause?.cause).toBe('caller');
  });

  it('a turn the revocation sweep stops because its delegation was revoked for reassignment records the cause as reassignment', async () => {
    // The reassignment's own stop (step 4) usually comes first; the sweep may come first on a loaded machine. Here only the sweep can.
    const att = await startSlow('gamma', 'slow: revoked for reassignment under the sweep');
    const a = (await audit(att)).attempt.body;
    const store = world.store();
    try {
      await store.control.appendControl({
        event_type: 'rw003.delegation.revoked',
        control_scope_ref: { space_id: a.space_id, scope_kind: 'delegation', scope_id: a.delegation_ref.object_id },
        actor_ref: a.delegation_ref,
        payload: { reason: 'e2e: reassignment begins', reassignment: true },
      });
    } finally {
      await store.close();
    }
    const stopped = await pollUntil(async () => (await audit(att)).attempt.body, (b) => b.cancel_cause !== undefined, { polls: 200, what: 'the sweep stopping the turn' });
    expect(stopped.cancel_cause?.cause).toBe('reassignment');
  });

  it('a finished, verified attempt is never reassigned (its effect would repeat), and a revocation for cause is final', async () => {
    const done = await rpc('gamma', 'SendMessage', { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'quick job' }] } });
    const att = (done.result!.task as { id: string }).id;
    const d = (await audit(att)).attempt.body.delegation_ref.object_id;
    const refused = await admin<{ error: { code: string; details: { reasons: string[] } } }>('POST', `/admin/delegations/${d}/reassign`, { to: 'beta', reason: 'second opinion' });
    expect(refused.status).toBe(409);
    expect(refused.json.error.details.reasons.join(' ')).toMatch(/completed and was verified/);
    const before = await sendsTo('beta');

    const other = await startSlow('gamma', 'slow: to be revoked for cause');
    const d2 = (await audit(other)).attempt.body.delegation_ref.object_id;
    expect((await admin('POST', `/admin/delegations/${d2}/revoke`, { reason: 'misconduct' })).status).toBe(200);
    const again = await admin<{ error: { code: string } }>('POST', `/admin/delegations/${d2}/reassign`, { to: 'beta', reason: 'try', resolvePrevious: { as: 'consumed', note: 'x' } });
    expect(again.status).toBe(400);
    expect(again.json.error.code).toBe('invalid_request');
    expect(await sendsTo('beta')).toBe(before); // beta never got either (Baton may still be reading ATT-2 there)
  });

  it('a checkpoint whose other fenced heads moved is refused and escalated; nothing is revoked or started', async () => {
    const att = await startSlow('gamma', 'slow: another task');
    const a = (await audit(att)).attempt.body;
    const d = a.delegation_ref.object_id;
    const cp = await admin<{ record_id: string }>('POST', `/admin/attempts/${att}/checkpoint`, { reason: 'before the root moves' });
    const root = a.root_ref.object_id;
    // An unrelated authority change on a fenced ancestor: suspend and resume the root.
    expect((await admin('POST', `/admin/delegations/${root}/suspend`, { reason: 'audit hold' })).status).toBe(200);
    await batonCli(['control', 'resume', root, '--reason', 'audit done'], { BATON_CONFIG: world.configFile, BATON_LOG_LEVEL: 'silent' }).then((o) => expect(o.code, o.stderr).toBe(0));
    const headBefore = (await admin<{ fences: Array<{ branch_id: string; head_position: number }> }>('GET', `/admin/attempts/${att}`)).json.fences.find((f) => f.branch_id === `delegation:${d}`)!.head_position;
    const refused = await admin<{ error: { code: string; details: { reasons: string[] } } }>('POST', `/admin/delegations/${d}/reassign`, {
      to: 'beta',
      reason: 'try anyway',
      checkpoint: cp.json.record_id,
      resolvePrevious: { as: 'consumed', note: 'test' },
    });
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe('context_invalidated');
    expect(refused.json.error.details.reasons.join(' ')).toContain(`delegation:${root}`);
    const headAfter = (await admin<{ fences: Array<{ branch_id: string; head_position: number }> }>('GET', `/admin/attempts/${att}`)).json.fences.find((f) => f.branch_id === `delegation:${d}`)!.head_position;
    expect(headAfter).toBe(headBefore); // not revoked
    const esc = await batonCli(['escalations', '--state', 'open'], { BATON_CONFIG: world.configFile, BATON_LOG_LEVEL: 'silent' });
    expect(esc.stdout).toMatch(/reassignment_refused/);
  });
});

describe('what callers receive', () => {
  it('no response body any caller received in this suite names a delegatee task/context id or the contract extension', async () => {
    await assertNoDownstreamLeaks(world);
  });
});
