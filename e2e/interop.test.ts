/**
 * Issue #14, "agents Baton can front": a plain signed A2A v1.0 agent (no
 * RW-003 extension) with operator-declared facts, an unsigned one the
 * operator explicitly allowed, one nobody vouched for, and an A2A v0.3
 * agent; plus a v0.3 client calling Baton. Real agent processes, a real
 * gateway process, the stock SDK client and the SDK's v0.3 client.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { Role, TaskState, verifyAgentCardSignature, type AgentCard, type Message, type Task } from '@a2a-js/sdk';
import { LegacyJsonRpcTransport, LegacyRestTransport } from '@a2a-js/sdk/compat/v0_3/client';
import { importJWK, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AttemptBody } from '../src/attempts/record.ts';
import { digestOf } from '../src/records/digest.ts';
import { partsText, textPart } from './agents/card.ts';
import { sentChain } from './agents/testlog.ts';
import { assertNoDownstreamLeaks } from './gateway/leaks.ts';
import { API_KEY, recordingFetch, startWorld, type World } from './gateway/world.ts';

/** The v1.0 methods that carry an effect: Baton forwards a stream where the card offers one. */
const SENDS = new Set(['SendMessage', 'SendStreamingMessage']);

const INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
const OUTCOME = 'urn:baton:outcome:v2';
const message = (text: string): Message => ({ messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] });
const send = (text: string) => ({ tenant: '', message: message(text), configuration: undefined, metadata: undefined });

/** What the operator declares for an agent whose card says nothing RW-003 (delegatee-identity.ts). */
const facts = (name: string) => ({
  attested_by: 'principal_baton_operator',
  agent_actor_ref: { object_id: `actor_${name}`, revision_id: 'rev_1', content_digest: digestOf({ actor: name }) },
  accountable_operator: { operator_principal_ref: `principal_${name}_vendor`, resolution: 'declared', evidence_ref: 'contract_2026_041', effective_from: '2026-01-01T00:00:00Z' },
});

/** The `rw003` block of the README's first example under "Putting an agent behind Baton". */
function readmePlainFacts(): unknown {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('## Putting an agent behind Baton'));
  const yaml = /```yaml\n([\s\S]*?)```/.exec(section)![1]!;
  return (parse(yaml) as { delegatees: Array<{ rw003: unknown }> }).delegatees[0]!.rw003;
}

let world: World;
beforeAll(async () => {
  world = await startWorld({
    agents: {
      plain: { behaviour: 'honest', stepMs: 10, card: 'plain' },
      bare: { behaviour: 'honest', stepMs: 10, card: 'plain' },
      loose: { behaviour: 'honest', stepMs: 10, card: 'unsigned' },
      unvouched: { behaviour: 'honest', stepMs: 10, card: 'unsigned' },
      legacy: { behaviour: 'honest', stepMs: 10, protocol: '0.3' },
      modern: { behaviour: 'honest', stepMs: 10 },
    },
    delegatees: {
      // Exactly the README's plain-agent example (only the card URL and pin are this agent's).
      plain: { rw003: readmePlainFacts() },
      loose: { rw003: facts('loose'), allowUnsigned: true },
      unvouched: { rw003: facts('unvouched') },
    },
    presets: [{ id: 'standard', maxInvocations: 20 }],
    remote: { headersTimeoutMs: 4000, bodyTimeoutMs: 20_000 },
  });
}, 90_000);
afterAll(async () => world?.close());

/** The newest revision of the attempt behind a Baton task id. */
async function attempt(taskId: string): Promise<AttemptBody> {
  const store = world.store();
  try {
    const row = store.handle.prepare('SELECT r.document FROM record_heads h JOIN records r ON r.revision_id = h.revision_id WHERE h.record_id = ?').get(taskId) as { document: string };
    return (JSON.parse(row.document) as { body: AttemptBody }).body;
  } finally {
    await store.close();
  }
}

describe('a plain A2A v1.0 agent (signed card, pinned key, no RW-003 extension)', () => {
  it('is fronted with the operator’s facts, recorded as operator-attested, with the card form and digest used', async () => {
    const task = (await (await world.client('plain')).sendMessage(send('plain agent'))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(partsText(task.artifacts[0]!.parts)).toBe('tnega nialp');
    expect(task.metadata?.[OUTCOME]).toMatchObject({ outcome: 'succeeded', verified: true });
    const a = await attempt(task.id);
    expect(a.remote.card).toMatchObject({ form: 'public', signed: true, identity: 'operator_attested', attested_by: 'principal_our_ops', payload_digest: expect.stringMatching(/^sha256:/), facts_digest: expect.stringMatching(/^sha256:/) });
    expect(a.remote.card_ref).toMatchObject({ object_id: 'card_partner_summariser', content_digest: a.remote.card!.payload_digest });
    const sent = (await world.agents.plain!.log()).requests.find((r) => SENDS.has(r.method))!;
    expect(sentChain(sent)).toHaveLength(2);
  });

  it('without declared facts it is refused as UnsupportedOperationError, and its card route is an uncacheable A2A error', async () => {
    const res = await world.fetch(`${world.url}/agents/bare/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } } }),
    });
    const body = (await res.json()) as { error: { code: number; message: string; data: unknown[] } };
    expect(body.error.code).toBe(-32004);
    expect(body.error.message).toMatch(/declare its facts in delegatees\[\]\.rw003/);
    expect(body.error.data).toEqual([{ '@type': INFO, reason: 'UNSUPPORTED_OPERATION', domain: 'a2a-protocol.org' }]);
    const card = await world.fetch(`${world.url}/agents/bare/.well-known/agent-card.json`);
    expect(card.status).toBe(400);
    expect(card.headers.get('cache-control')).toBe('no-store');
    expect(card.headers.get('content-type')).toBe('application/a2a+json; charset=utf-8');
    expect(((await card.json()) as { error: unknown }).error).toMatchObject({ status: 'FAILED_PRECONDITION', details: [{ reason: 'UNSUPPORTED_OPERATION' }] });
    const rest = await world.fetch(`${world.url}/agents/bare/a2a/rest/message:send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY },
      body: JSON.stringify({ message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } }),
    });
    expect(rest.status).toBe(400); // not a 500
    expect(rest.headers.get('content-type')).toBe('application/a2a+json; charset=utf-8');
    expect(((await rest.json()) as { error: unknown }).error).toMatchObject({ code: 400, status: 'FAILED_PRECONDITION', details: [{ '@type': INFO, reason: 'UNSUPPORTED_OPERATION', domain: 'a2a-protocol.org' }] });
    expect((await world.agents.bare!.log()).counts.SendMessage ?? 0).toBe(0);
  });

  it('the card Baton serves for it (and for every other delegatee here) verifies with the SDK verifier', async () => {
    const jwks = (await (await world.fetch(`${world.url}/.well-known/jwks.json`)).json()) as { keys: JWK[] };
    const spy = vi.spyOn(console, 'debug').mockImplementation(() => undefined);
    try {
      for (const id of ['plain', 'loose', 'legacy', 'modern']) {
        const card = (await (await world.fetch(`${world.url}/agents/${id}/.well-known/agent-card.json`)).json()) as AgentCard;
        await expect(verifyAgentCardSignature(async (kid) => (await importJWK(jwks.keys.find((k) => k.kid === kid)!, 'ES256')) as CryptoKey)(card), id).resolves.toBeUndefined();
      }
    } finally {
      spy.mockRestore();
    }
  });
});

describe('unsigned cards', () => {
  it('are used only where the operator allowed them, and every attempt records signed: false', async () => {
    const task = (await (await world.client('loose')).sendMessage(send('unsigned ok'))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const a = await attempt(task.id);
    expect(a.remote.card).toMatchObject({ signed: false, identity: 'operator_attested' });
    // …and so does the VerificationReceipt that verified it.
    const store = world.store();
    try {
      const receipt = (await store.getRecord(a.receipt_ref!.object_id)) as unknown as { body: { card?: unknown; outcome: string } };
      expect(receipt.body).toMatchObject({ outcome: 'succeeded', card: { signed: false, identity: 'operator_attested', attested_by: 'principal_baton_operator' } });
    } finally {
      await store.close();
    }
  });

  it('are refused otherwise, facts or not', async () => {
    const res = await world.fetch(`${world.url}/agents/unvouched/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'never' }] } } }),
    });
    const body = (await res.json()) as { error: { code: number; message: string; data: unknown[] } };
    // The delegatee's card is at fault, not the caller's request (issue #17): unavailable, naming the delegatee — never InvalidParams.
    expect(body.error).toMatchObject({ code: -32050, message: 'delegatee unvouched: its card does not verify: Agent Card is unsigned', data: [{ reason: 'UNAVAILABLE', domain: 'baton', metadata: { baton: 'unavailable', delegatee: 'unvouched', reason: 'card_rejected' } }] });
    expect((await world.agents.unvouched!.log()).counts.SendMessage ?? 0).toBe(0);
  });
});

describe('A2A v0.3', () => {
  it('a v0.3 delegatee is fronted through the SDK’s compatibility layer, with read-back and the contract chain', async () => {
    const task = (await (await world.client('legacy')).sendMessage(send('old friend'))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(partsText(task.artifacts[0]!.parts)).toBe('dneirf dlo');
    expect(task.metadata?.[OUTCOME]).toMatchObject({ outcome: 'succeeded', verified: true });
    const a = await attempt(task.id);
    expect(a.remote.protocol_version).toBe('0.3');
    const log = await world.agents.legacy!.log();
    // Forwarded non-blocking: v0.3's message/stream where the card streams, else message/send.
    expect((log.counts['message/send'] ?? 0) + (log.counts['message/stream'] ?? 0)).toBeGreaterThanOrEqual(1);
    expect(log.counts['tasks/get']).toBeGreaterThanOrEqual(1); // the read-back
    expect((log.counts.SendMessage ?? 0) + (log.counts.SendStreamingMessage ?? 0)).toBe(0);
    const sent = log.requests.find((r) => r.method === 'message/send' || r.method === 'message/stream')!;
    expect(sentChain(sent)).toHaveLength(2); // v0.3's MessageSendParams.metadata
    expect(sent.messageRole).toBe('user'); // v0.3's wire shape
    expect(sent.a2aVersion).toBe('0.3');
  });

  it('streams from a v0.3 delegatee end verified', async () => {
    const events = [];
    for await (const ev of (await world.client('legacy')).sendMessageStream(send('stream old'))) events.push(ev);
    const last = events.at(-1)!;
    const state = last.payload?.$case === 'task' ? last.payload.value.status?.state : last.payload?.$case === 'statusUpdate' ? last.payload.value.status?.state : undefined;
    expect(state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('a v0.3 client calls a per-delegatee endpoint with the same admission, attenuation and read-back', async () => {
    const sends = (c: Record<string, number>) => (c.SendMessage ?? 0) + (c.SendStreamingMessage ?? 0);
    const before = sends((await world.agents.modern!.log()).counts);
    const fetchImpl: typeof fetch = (input, init) => recordingFetch(world.bodies, world.pending)(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), 'x-api-key': API_KEY } });
    const legacy = new LegacyJsonRpcTransport({ endpoint: `${world.url}/agents/modern/a2a/jsonrpc`, fetchImpl });
    const task = (await legacy.sendMessage(send('v03 caller'))) as Task;
    expect(task.id).toMatch(/^att_/);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.metadata?.[OUTCOME]).toMatchObject({ outcome: 'succeeded', verified: true });
    // Forwarded as v1.0 under a minted child contract, and read back.
    const log = await world.agents.modern!.log();
    expect(sends(log.counts)).toBe(before + 1);
    const sent = log.requests.filter((r) => SENDS.has(r.method)).at(-1)!;
    expect(sent.messageRole).toBe('ROLE_USER'); // translated to v1.0, not the v0.3 params passed through
    const chain = sentChain<{ body: { lineage: unknown } }>(sent)!;
    expect(chain[1]!.body.lineage).toMatchObject({ kind: 'child', depth: 1 });
    expect((await legacy.getTask({ tenant: '', id: task.id, historyLength: undefined })).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('a v0.3 client’s stream is relayed and ends verified', async () => {
    const fetchImpl: typeof fetch = (input, init) => recordingFetch(world.bodies, world.pending)(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), 'x-api-key': API_KEY } });
    const legacy = new LegacyJsonRpcTransport({ endpoint: `${world.url}/agents/modern/a2a/jsonrpc`, fetchImpl });
    const states: Array<TaskState | undefined> = [];
    for await (const ev of legacy.sendMessageStream(send('v03 stream'))) {
      if (ev.payload?.$case === 'task') states.push(ev.payload.value.status?.state);
      if (ev.payload?.$case === 'statusUpdate') states.push(ev.payload.value.status?.state);
    }
    expect(states.at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('a v0.3 HTTP+JSON client is served too', async () => {
    const fetchImpl: typeof fetch = (input, init) => recordingFetch(world.bodies, world.pending)(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), 'x-api-key': API_KEY } });
    const legacy = new LegacyRestTransport({ endpoint: `${world.url}/agents/modern/a2a/rest`, fetchImpl });
    const task = (await legacy.sendMessage(send('v03 rest'))) as Task;
    expect(task.id).toMatch(/^att_/);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(partsText(task.artifacts[0]!.parts)).toBe('tser 30v');
  });

  it('speaks v0.3’s own wire shape to v0.3 callers (kind discriminators, lowercase states)', async () => {
    const res = await world.fetch(`${world.url}/agents/modern/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'message/send', params: { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'raw v03' }] } } }),
    });
    const body = (await res.json()) as { id: number; result: { kind: string; id: string; status: { state: string } } };
    expect(body.id).toBe(9);
    expect(body.result).toMatchObject({ kind: 'task', status: { state: 'completed' } });
    expect(body.result.id).toMatch(/^att_/);
  });

  it('Baton’s own door stays v1.0 only and says so with VersionNotSupportedError', async () => {
    const res = await world.fetch(`${world.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'message/send', params: { message: { kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'x' }] } } }),
    });
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32009);
  });
});

describe('what callers receive', () => {
  it('no response body names a downstream id or the contract extension', async () => {
    await assertNoDownstreamLeaks(world);
  });
});
