/**
 * A partner organisation is trusted for its own delegations only (issue 25,
 * items 13 and 14). Two gateways on two stores, A → B → agent:
 * - a control notice, even one genuinely signed with A's keys, is accepted
 *   only for a delegation A issued to B; a trip is escalated at B and B's
 *   operator can reset it;
 * - a chain A presents is clamped at B to B's own preset for A: invocations,
 *   lifetime, depth and active roots, whatever A's chain grants.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { CompactSign, exportJWK, generateKeyPair } from 'jose';
import { join } from 'node:path';
import { TaskState, type Task } from '@a2a-js/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from './federation-suite.ts';
import { expectBatonCode } from './gateway/errors.ts';
import { pollUntil } from './harness/process.ts';
import { sentChain } from './agents/testlog.ts';
import { forwardKey, startFederation, type Federation } from './gateway/federation.ts';
import { HEAD_STATEMENT_TYPE } from '../src/federation/head-statement.ts';
import { NOTICE_JWS_TYP } from '../src/federation/federation.ts';
import { signJws } from '../src/federation/jws.ts';
import { Keyring } from '../src/keys/keyring.ts';
import { schemaRefFor } from '../src/records/schema-ref.ts';
import type { Store } from '../src/store/port.ts';
import { baton as batonCli } from '../test/cli/run.ts';

const CONTRACT_EXT = 'urn:rw-agent-delegation:0.1.1:delegation-contract';
type Link = {
  record_id: string;
  issued_at: string;
  body: { limits: { not_after: string }; budget_ceilings: Array<{ name: string; ceiling: string }>; subdelegation_policy: { max_remaining_depth: number } };
};

async function chainAtAgent(fed: Federation): Promise<Link[]> {
  const log = await fed.agent.log();
  const sent = [...log.requests].reverse().find((r) => r.method === 'SendStreamingMessage' || r.method === 'SendMessage')!;
  return sentChain<Link>(sent)!;
}

async function atB<T>(fed: Federation, fn: (s: Store) => Promise<T>): Promise<T> {
  const s = await fed.orgs[1]!.store();
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

/** A's chain (root, A's leaf for B) presented at B again, as A's gateway would. */
function presentAtB(fed: Federation, chain: readonly Link[]): Promise<{ result?: unknown; error?: unknown }> {
  return fetch(`${fed.orgs[1]!.url}/agents/x/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': forwardKey('a', 'b') },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'again' }], metadata: { [CONTRACT_EXT]: { chain: chain.slice(0, 2) } } } } }),
  }).then((r) => r.json() as Promise<{ result?: unknown; error?: unknown }>);
}

describe('control notices at B: only for delegations A issued to B; escalated; resettable', () => {
  let fed: Federation;
  // A second partner of B, org Z: a configured upstream with keys of its own.
  const zDir = mkdtempSync(join(tmpdir(), 'h3-org-z-'));
  let zKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  beforeAll(async () => {
    const pair = await generateKeyPair('ES256', { extractable: true });
    zKey = pair.privateKey;
    writeFileSync(join(zDir, 'z.jwks.json'), JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'z-1', alg: 'ES256', use: 'sig' }] }));
    const orgZ = { id: 'org-z', apiKeySha256: 'f'.repeat(64), upstream: { actorObjectId: 'actor_baton_z', contractJwksFile: join(zDir, 'z.jwks.json'), headsUrl: 'http://127.0.0.1:9/federation/v1/heads' } };
    fed = await startFederation({ presetA: { maxInvocations: 20 }, extraCallers: { 1: [orgZ] } });
  }, 180_000);
  afterAll(async () => {
    await fed?.close();
    rmSync(zDir, { recursive: true, force: true });
  });

  /** A notice signed with A's own contract keys (A's operator, or a compromised A, could send exactly this). */
  const noticeFromA = async (subject: string) => {
    const keys = await Keyring.open(join(fed.orgs[0]!.dir, 'keys'));
    const heads = [{ scope: { space_id: 'space_a', scope_kind: 'delegation', scope_id: subject }, boundary: null, state: 'revoked' }];
    const jws = await signJws(keys, NOTICE_JWS_TYP, { typ: HEAD_STATEMENT_TYPE, iss: 'actor_baton_a', aud: 'actor_baton_b', subject, issued_at: new Date().toISOString(), max_staleness_ms: 0, heads });
    return fetch(`${fed.orgs[1]!.url}/federation/v1/notify`, { method: 'POST', headers: { 'content-type': 'application/jose' }, body: jws });
  };
  const headAtB = (space: string, id: string) => atB(fed, async (s) => (await s.control.head({ space_id: space, scope_kind: 'delegation', scope_id: id }))?.state);

  it('a notice from A naming a delegation B issued itself is refused (deny) and trips nothing; B keeps serving', async () => {
    const client = await fed.client();
    expect(((await client.sendMessage(send('before the notice'))) as Task).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const own = (await chainAtAgent(fed))[2]!.record_id;
    const res = await noticeFromA(own);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('deny');
    expect(await headAtB('space_a', own)).toBe('active');
    expect(((await client.sendMessage(send('after the notice'))) as Task).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('a notice from another partner (Z, genuinely signed with Z\'s pinned keys) naming A\'s delegation to B is refused (deny) and trips nothing', async () => {
    const client = await fed.client();
    await client.sendMessage(send('A\'s own work'));
    const leaf = (await chainAtAgent(fed))[1]!.record_id;
    const heads = [{ scope: { space_id: 'space_a', scope_kind: 'delegation', scope_id: leaf }, boundary: null, state: 'revoked' }];
    const payload = { typ: HEAD_STATEMENT_TYPE, iss: 'actor_baton_z', aud: 'actor_baton_b', subject: leaf, issued_at: new Date().toISOString(), max_staleness_ms: 0, heads };
    const jws = await new CompactSign(new TextEncoder().encode(JSON.stringify(payload))).setProtectedHeader({ alg: 'ES256', kid: 'z-1', typ: NOTICE_JWS_TYP }).sign(zKey);
    const res = await fetch(`${fed.orgs[1]!.url}/federation/v1/notify`, { method: 'POST', headers: { 'content-type': 'application/jose' }, body: jws });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('deny');
    expect(await headAtB('space_a', leaf)).toBe('active');
  });

  it('a genuine notice on A\'s delegation to B trips it, is escalated at B, and B\'s operator resets it with the CLI', async () => {
    const client = await fed.client();
    await client.sendMessage(send('to be tripped'));
    const chain = await chainAtAgent(fed);
    const leaf = chain[1]!.record_id;
    const res = await noticeFromA(leaf);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ tripped: 1 });
    expect(await headAtB('space_a', leaf)).toBe('tripped');
    const escalations = await atB(fed, async (s) => (await s.listCurrent(schemaRefFor('escalation'), { limit: 50 })).records.map((r) => r.body as { kind: string; subject: { delegation_id?: string } }));
    expect(escalations.filter((e) => e.kind === 'breaker_tripped' && e.subject.delegation_id === leaf)).toHaveLength(1);
    expect(JSON.stringify((await presentAtB(fed, chain)).error)).toMatch(/CONTEXT_INVALIDATED/);

    const out = await batonCli(['breaker', 'reset', `delegation:${leaf}`, '--reason', 'e2e: A says it is usable again'], { BATON_CONFIG: fed.orgs[1]!.config, BATON_LOG_LEVEL: 'silent' });
    expect(out.code, out.stderr).toBe(0);
    expect(await headAtB('space_a', leaf)).toBe('active');
    expect((await presentAtB(fed, chain)).error).toBeUndefined();
  }, 60_000);
});

describe('an imported chain is clamped to B\'s preset for A, whatever A grants', () => {
  let fed: Federation;
  beforeAll(async () => {
    // No owner bound for A here: B accounts everything A sends in one namespace of its own for A.
    fed = await startFederation({ presetA: { maxInvocations: 1_000_000 }, presetBelow: { maxInvocations: 3, lifetimeSeconds: 600, maxActiveRoots: 2 }, upstream: { ownerNamespace: undefined, spaceId: undefined } });
  }, 180_000);
  afterAll(async () => fed?.close());

  it('B\'s child carries B\'s ceilings (invocations, lifetime, depth) and B\'s ledger refuses past them', async () => {
    const client = await fed.client();
    expect(((await client.sendMessage(send('first of three'))) as Task).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const chain = await chainAtAgent(fed);
    const invocations = (l: Link) => l.body.budget_ceilings.find((b) => b.name === 'invocations')!.ceiling;
    expect(invocations(chain[1]!)).toBe('1000000');
    expect(invocations(chain[2]!)).toBe('3');
    expect(Date.parse(chain[2]!.body.limits.not_after)).toBeLessThanOrEqual(Date.parse(chain[1]!.issued_at) + 600_000);
    expect(chain[2]!.body.subdelegation_policy.max_remaining_depth).toBe(0);
    // A's leaf would allow a million; B's own bound is three in all.
    expect((await presentAtB(fed, chain)).error).toBeUndefined();
    expect((await presentAtB(fed, chain)).error).toBeUndefined();
    expect(JSON.stringify((await presentAtB(fed, chain)).error)).toMatch(/LIMIT_EXCEEDED/);
    await atB(fed, async (s) => {
      const node = await s.ledger.node(chain[1]!.record_id);
      expect(node?.not_after).toBe(new Date(Date.parse(chain[1]!.issued_at) + 600_000).toISOString());
      expect(node?.owner_namespace).toBe('upstream:org-a');
    });
  });

  it('every new root A sends counts against B\'s active-root ceiling for A: with two live, the third is refused', async () => {
    const client = await fed.client();
    const sends = () => (async () => { const c = (await fed.agent.log()).counts; return (c.SendMessage ?? 0) + (c.SendStreamingMessage ?? 0); })();
    const before = await sends();
    // Two tasks the agent keeps WORKING: their roots hold B's capacity until they end.
    const running = [client.sendMessage(send('slow one')), client.sendMessage(send('slow two'))].map((p) => p.catch(() => undefined));
    await pollUntil(sends, (n) => n >= before + 2, { polls: 400, what: 'two slow tasks at the agent' });
    await expectBatonCode(client.sendMessage(send('third root')), 'limit_exceeded');
    expect(await sends()).toBe(before + 2);
    void running;
  }, 60_000);
});
