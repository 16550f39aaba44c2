/**
 * Approval requests of gateways sharing one store (README "one shared
 * ledger"), run against SQLite always and PostgreSQL when BATON_TEST_PG is
 * set: a gateway's human gate lists, reads and sweeps only its own requests,
 * and those from before requests named their gateway — another
 * organisation's approved effect it would admit and forward under its own name.
 */
import { describe, expect, it } from 'vitest';
import { HumanGates, type OpenRequest } from '../../../src/gates/approvals.ts';
import { ApprovalsConfig } from '../../../src/gates/policy.ts';
import { previewDigest } from '../../../src/gates/preview.ts';
import { REQUEST_SCHEMA, requestIdOf } from '../../../src/gates/records.ts';
import { digestOf } from '../../../src/records/digest.ts';
import { sealRecord } from '../../../src/records/envelope.ts';
import { randomIds } from '../../../src/records/ids.ts';
import { systemClock } from '../../../src/records/time.ts';
import type { MakeStore } from './contract.ts';
import { actor, FAR } from './fixtures.ts';

const request = (taskId: string): OpenRequest => {
  const message = { messageId: `m_${taskId}`, role: 'ROLE_USER', parts: [{ text: 'pay the invoice' }] };
  const preview = {
    tier: 'T3_consequential_propose' as const,
    operation: 'SendMessage',
    caller_id: 'planner',
    delegatee: { id: 'payer', card_object_id: 'card_payer', card_digest: `sha256:${'c'.repeat(64)}` },
    message_digest: digestOf(message),
    rendering: 'pay the invoice',
    scope: {},
    budget: {},
    expires_at: FAR,
  };
  return { task_id: taskId, context_id: 'ctx_1', caller_id: 'planner', delegatee_id: 'payer', tier: preview.tier, operation: 'SendMessage', params: { message }, preview, preview_digest: previewDigest(preview), fence_set: [] };
};

export function gatesContract(name: string, make: MakeStore): void {
  describe(`${name}: approval requests of gateways sharing the store`, () => {
    it("a gateway lists (as its approvals sweep does) and reads only its own gateway's requests (and requests that name none)", async () => {
      const store = await make();
      const gates = (gateway: string) =>
        new HumanGates({ store, clock: systemClock, ids: randomIds, gatewayActor: { ...actor, object_id: gateway }, config: ApprovalsConfig.parse({}), callerOf: () => undefined, requireApprovalOf: () => undefined });
      const [a, b] = [gates('actor_baton_a'), gates('actor_baton_b')];
      const t = { a: randomIds.next('att'), b: randomIds.next('att'), legacy: randomIds.next('att') };
      await a.revise(await a.open(request(t.a)), { state: 'approved' });
      await b.revise(await b.open(request(t.b)), { state: 'approved' });
      // A request from before requests named their gateway: no gateway_id, its message inline.
      const opened = await a.open(request(randomIds.next('att')));
      const { gateway_id: _none, ...before } = opened.body;
      const legacy = { ...before, task_id: t.legacy, content: undefined, params_digest: undefined, rendering_digest: undefined, state: 'approved' };
      const ids = { next: (p: string) => (p === 'rev' ? randomIds.next('rev') : requestIdOf(t.legacy)) };
      await store.putRecord(sealRecord({ type: 'approval_request', issuedBy: actor, lifecycle: 'active', body: JSON.parse(JSON.stringify(legacy)) }, { ids, clock: systemClock }));

      const ours = (rs: Array<{ body: { task_id: string } }>) => rs.map((r) => r.body.task_id).filter((id) => Object.values(t).includes(id)).sort();
      expect(ours(await b.list({ state: 'approved' }))).toEqual([t.b, t.legacy].sort());
      expect(ours(await a.list({ state: 'approved' }))).toEqual([t.a, t.legacy].sort());
      expect(await b.byTask(t.a)).toBeUndefined();
      expect((await a.byTask(t.a))?.body).toMatchObject({ gateway_id: 'actor_baton_a', state: 'approved', params: request(t.a).params });
      expect((await b.byTask(t.legacy))?.body).toMatchObject({ state: 'approved', params: opened.body.params });
      expect((await b.byTask(t.legacy))?.body.gateway_id).toBeUndefined();
      // Read as records, A's request is still in the shared store: only B's gate passes over it.
      expect((await store.getRecord(requestIdOf(t.a)))?.schema_ref).toBe(REQUEST_SCHEMA);
      await store.close();
    });
  });
}
