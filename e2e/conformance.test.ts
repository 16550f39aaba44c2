/**
 * Issue #14, "spec-exact front door": each point that failed an A2A v1.0
 * conformance test through Baton, checked against a real gateway process
 * in front of real SDK agents, with the stock SDK client and raw HTTP.
 */
import { createPublicKey, verify as verifySignature } from 'node:crypto';
import { randomUUID } from 'node:crypto';
import { Role, TaskState, verifyAgentCardSignature, type AgentCard, type Message, type Task } from '@a2a-js/sdk';
import { importJWK, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { verifyCardBytes } from '../src/cards/verify.ts';
import { parseJwks } from '../src/cards/jwks.ts';
import { TrustStore } from '../src/cards/trust-store.ts';
import { systemClock } from '../src/records/time.ts';
import { textPart } from './agents/card.ts';
import { assertNoDownstreamLeaks } from './gateway/leaks.ts';
import { API_KEY, startWorld, type World } from './gateway/world.ts';

const INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
const OUTCOME = 'urn:baton:outcome:v2';
const send = (text: string) => ({ tenant: '', message: { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] } as Message, configuration: undefined, metadata: undefined });

let world: World;
beforeAll(async () => {
  world = await startWorld({ agents: { honest: { behaviour: 'honest', stepMs: 10 } }, remote: { headersTimeoutMs: 4000, bodyTimeoutMs: 20_000 } });
}, 60_000);
afterAll(async () => world?.close());

const rpc = async (path: string, method: string, params: unknown, headers: Record<string, string> = {}) => {
  const res = await world.fetch(`${world.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY, ...headers }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return { res, body: (await res.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string; data: Array<Record<string, unknown>> } } };
};

describe('per-delegatee Agent Card', () => {
  const cardUrl = () => `${world.url}/agents/honest/.well-known/agent-card.json`;

  it('has ETag and Last-Modified and answers conditional GETs with 304 (A2A §8.6.1)', async () => {
    const first = await world.fetch(cardUrl());
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    const lastModified = first.headers.get('last-modified')!;
    expect(etag).toMatch(/^W\/"[0-9a-f]{32}"$/);
    expect(Number.isNaN(Date.parse(lastModified))).toBe(false);
    expect(first.headers.get('cache-control')).toBe('public, max-age=60');
    expect((await world.fetch(cardUrl(), { headers: { 'if-none-match': etag } })).status).toBe(304);
    expect((await world.fetch(cardUrl(), { headers: { 'if-modified-since': lastModified } })).status).toBe(304);
    expect((await world.fetch(cardUrl(), { headers: { 'if-none-match': 'W/"other"' } })).status).toBe(200);
  });

  it('every card Baton serves verifies with the SDK verifier, with Baton, and with an independent JWS/JCS', async () => {
    const jwks = (await (await world.fetch(`${world.url}/.well-known/jwks.json`)).json()) as { keys: JWK[] };
    const ext = await rpc('/a2a/jsonrpc', 'GetExtendedAgentCard', {});
    const cards: Array<[string, Record<string, unknown>]> = [
      ['own public', (await (await world.fetch(`${world.url}/.well-known/agent-card.json`)).json()) as Record<string, unknown>],
      ['own extended', ext.body.result!],
      ['per-delegatee', (await (await world.fetch(cardUrl())).json()) as Record<string, unknown>],
    ];
    const trust = new TrustStore();
    trust.pin(new URL(world.url).origin, await parseJwks(JSON.stringify(jwks)));
    const spy = vi.spyOn(console, 'debug').mockImplementation(() => undefined);
    try {
      for (const [label, card] of cards) {
        await expect(verifyAgentCardSignature(sdkKeys(jwks.keys))(card as unknown as AgentCard), label).resolves.toBeUndefined();
        await verifyCardBytes({ bytes: Buffer.from(JSON.stringify(card)), origin: new URL(world.url).origin, source: label }, { trust, clock: systemClock });
        expect(independentlyVerified(card, jwks.keys), label).toBe(true);
      }
    } finally {
      spy.mockRestore();
    }
  });
});

describe('errors and unsupported operations', () => {
  it('GetExtendedAgentCard on a per-delegatee card that declares none is UnsupportedOperationError on both bindings', async () => {
    const { body } = await rpc('/agents/honest/a2a/jsonrpc', 'GetExtendedAgentCard', {});
    expect(body.error?.code).toBe(-32004);
    expect(body.error?.data).toEqual([{ '@type': INFO, reason: 'UNSUPPORTED_OPERATION', domain: 'a2a-protocol.org' }]);
    const rest = await world.fetch(`${world.url}/agents/honest/a2a/rest/extendedAgentCard`, { headers: { 'a2a-version': '1.0', 'x-api-key': API_KEY } });
    expect(rest.status).toBe(400);
    expect(rest.headers.get('content-type')).toBe('application/a2a+json; charset=utf-8');
    expect(((await rest.json()) as { error: unknown }).error).toMatchObject({ code: 400, status: 'FAILED_PRECONDITION', details: [{ '@type': INFO, reason: 'UNSUPPORTED_OPERATION' }] });
  });

  it('SubscribeToTask on a terminal task is UnsupportedOperationError on both bindings, and through the stock client', async () => {
    const client = await world.client('honest');
    const task = (await client.sendMessage(send('finish me'))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const { body } = await rpc('/agents/honest/a2a/jsonrpc', 'SubscribeToTask', { id: task.id }, { accept: 'text/event-stream' });
    expect(body.error?.code).toBe(-32004);
    expect(body.error?.data[0]).toMatchObject({ '@type': INFO, reason: 'UNSUPPORTED_OPERATION' });
    const rest = await world.fetch(`${world.url}/agents/honest/a2a/rest/tasks/${task.id}:subscribe`, { headers: { 'a2a-version': '1.0', 'x-api-key': API_KEY, accept: 'text/event-stream' } });
    expect(rest.status).toBe(400);
    expect(((await rest.json()) as { error: { details: Array<{ reason: string }> } }).error.details[0]!.reason).toBe('UNSUPPORTED_OPERATION');
    const events = client.resubscribeTask({ tenant: '', id: task.id });
    await expect((async () => { for await (const _ of events) { /* drain */ } })()).rejects.toThrow(/terminal state/);
  });

  it('CancelTask on a finished task is TaskNotCancelableError, answered from Baton\'s own view', async () => {
    const client = await world.client('honest');
    const task = (await client.sendMessage(send('cancel after'))) as Task;
    const before = (await world.agents.honest!.log()).counts.CancelTask ?? 0;
    const { body } = await rpc('/agents/honest/a2a/jsonrpc', 'CancelTask', { id: task.id });
    expect(body.error?.code).toBe(-32002);
    expect(body.error?.data[0]).toMatchObject({ '@type': INFO, reason: 'TASK_NOT_CANCELABLE' });
    expect((await world.agents.honest!.log()).counts.CancelTask ?? 0).toBe(before); // nothing to ask the delegatee
  });
});

describe('what a caller sees of a task', () => {
  it('outcome metadata is camelCase under a versioned key; history carries no contract chain', async () => {
    const client = await world.client('honest');
    const task = (await client.sendMessage(send('history please'))) as Task;
    const { body } = await rpc('/agents/honest/a2a/jsonrpc', 'GetTask', { id: task.id, historyLength: 10 });
    const shown = body.result as { metadata: Record<string, Record<string, unknown>>; history?: Array<{ metadata?: Record<string, unknown> }> };
    expect(Object.keys(shown.metadata[OUTCOME]!).sort()).toEqual(['attemptId', 'delegationId', 'outcome', 'receipt', 'rootDelegationId', 'verified']);
    expect(shown.metadata['urn:baton:outcome:v1']).toBeUndefined();
    for (const m of shown.history ?? []) expect(Object.keys(m.metadata ?? {})).not.toContain('urn:rw-agent-delegation:0.1.1:delegation-contract');
  });

  it('no response body a caller received in this suite names a downstream id or the contract extension', async () => {
    await assertNoDownstreamLeaks(world);
  });
});

const sdkKeys = (keys: JWK[]) => async (kid: string): Promise<CryptoKey> => {
  const jwk = keys.find((k) => k.kid === kid)!;
  return (await importJWK(jwk, jwk.alg)) as CryptoKey;
};

/**
 * An implementation sharing nothing with Baton's or the SDK's: RFC 8785 over
 * the card minus `signatures` exactly as served (no default stripping — a
 * card in served form has none), and RFC 7515 ES256/EdDSA with node:crypto.
 */
function independentlyVerified(card: Record<string, unknown>, keys: JWK[]): boolean {
  const { signatures, ...unsigned } = card as { signatures: Array<{ protected: string; signature: string }> };
  const payload = Buffer.from(jcs(unsigned)).toString('base64url');
  return signatures.every((sig) => {
    const header = JSON.parse(Buffer.from(sig.protected, 'base64url').toString()) as { alg: string; kid: string };
    const jwk = keys.find((k) => k.kid === header.kid)!;
    const key = createPublicKey({ key: jwk as never, format: 'jwk' });
    const input = Buffer.from(`${sig.protected}.${payload}`);
    const signature = Buffer.from(sig.signature, 'base64url');
    return header.alg === 'ES256' ? verifySignature('sha256', input, { key, dsaEncoding: 'ieee-p1363' }, signature) : verifySignature(null, input, key, signature);
  });
}

function jcs(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(jcs).join(',')}]`;
  const keys = Object.keys(v).sort(); // UTF-16 code unit order (RFC 8785 §3.2.3)
  return `{${keys.map((k) => `${JSON.stringify(k)}:${jcs((v as Record<string, unknown>)[k])}`).join(',')}}`;
}
