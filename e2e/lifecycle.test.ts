/**
 * Process lifecycle with real processes, signals and sockets: Baton listens
 * only once it can answer, and SIGTERM drains — requests in flight finish
 * within shutdown.drainMs; past it they are cut, their attempts stay open in
 * the store, and the next start takes their follow-ups over and verifies them.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { open } from 'node:fs/promises';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { exportJWK, generateKeyPair } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { textPart } from './agents/card.ts';
import { API_KEY, BATON_MAIN, startWorld, type World } from './gateway/world.ts';
import { pollUntil, spawnReady } from './harness/process.ts';
import { freePort, tryConnect } from './harness/net.ts';
import type { AttemptBody } from '../src/attempts/record.ts';

const message = (text: string): Message => ({ messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] });
const send = (text: string) => ({ tenant: '', message: message(text), configuration: undefined, metadata: undefined });



function attempts(world: World): AttemptBody[] {
  const store = world.store();
  try {
    const rows = store.handle.prepare("SELECT r.document FROM record_heads h JOIN records r ON r.revision_id = h.revision_id WHERE r.schema_ref LIKE '%#execution_attempt'").all() as Array<{ document: string }>;
    return rows.map((r) => (JSON.parse(r.document) as { body: AttemptBody }).body);
  } finally {
    void store.close();
  }
}

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('starting', () => {
  it('refuses connections while it starts, instead of accepting and never answering them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-start-'));
    try {
      // A pinned JWKS read from a FIFO: startup blocks on it until the test writes, so "while it starts" is an event.
      const fifo = join(dir, 'partner.jwks.json');
      execFileSync('mkfifo', [fifo]);
      const port = await freePort();
      const configFile = join(dir, 'baton.json');
      writeFileSync(configFile, JSON.stringify({ port, dataDir: dir, logLevel: 'warn', trust: { pinnedJwks: { 'https://partner.example': fifo } } }));
      const starting = spawnReady<{ url: string }>(BATON_MAIN, [configFile], {}, { timeoutMs: 60_000 });
      const writer = await open(fifo, 'w'); // opens once Baton is reading it: mid-start
      expect(await tryConnect(port)).toBe('refused');
      const { publicKey } = await generateKeyPair('ES256');
      await writer.writeFile(JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] }));
      await writer.close();
      const baton = await starting;
      expect((await fetch(`${baton.ready.url}/readyz`)).status).toBe(200);
      await baton.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});

const sends = (counts: Record<string, number>) => (counts.SendMessage ?? 0) + (counts.SendStreamingMessage ?? 0);

describe('SIGTERM', () => {
  it('drains: stops accepting, lets the request in flight finish, then exits 0', async () => {
    world = await startWorld({ agents: { slow: { behaviour: 'honest', stepMs: 600 } }, config: { shutdown: { drainMs: 60_000 } } });
    const client = await world.client('slow');
    const inFlight = client.sendMessage(send('drain me')) as Promise<Task>;
    await pollUntil(() => world!.agents.slow!.log(), (l) => sends(l.counts) > 0, { what: 'the agent received the message', polls: 400 });
    const port = Number(new URL(world.url).port);
    process.kill(world.baton.pid, 'SIGTERM');
    await pollUntil(() => tryConnect(port), (r) => r === 'refused', { what: 'new connections refused', polls: 400 });
    const task = await inFlight;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(await world.baton.exited).toEqual({ code: 0, signal: null });
  }, 120_000);

  it('past the drain deadline: the request is cut, its attempt stays open with its reservation held, and the next start follows it to a verified verdict', async () => {
    // A short follow-up lease, so the next start takes the cut attempt over within the test; one publicUrl, so the
    // restarted process (on another ephemeral port) is the same gateway, not a new card that moves Baton's agent stream.
    world = await startWorld({ agents: { slow: { behaviour: 'honest', stepMs: 1_500 } }, config: { shutdown: { drainMs: 200 }, follow: { leaseMs: 2_000, tickMs: 100 }, publicUrl: 'http://baton.test' } });
    // Straight to this node's door (the card names the cluster's publicUrl, which is not this test's address).
    const inFlight = fetch(`${world.url}/agents/slow/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'cut me' }] } } }),
    }).then(
      async (res) => ((await res.json()) as { result?: unknown }).result ? 'answered' : 'cut',
      () => 'cut',
    );
    await pollUntil(() => world!.agents.slow!.log(), (l) => sends(l.counts) > 0, { what: 'the agent received the message', polls: 400 });
    process.kill(world.baton.pid, 'SIGTERM');
    expect(await world.baton.exited).toEqual({ code: 0, signal: null });
    expect(await inFlight).toBe('cut');
    const [left] = attempts(world).filter((a) => a.delegatee_id === 'slow');
    // Not recorded as lost (or anything else) because Baton stopped: still open, budget still held.
    expect(left?.state).not.toBe('closed');
    expect(left?.outcome).toBeUndefined();
    const store = world.store();
    const held = await store.ledger.reservation(left!.reservation_id);
    await store.close();
    expect(held?.status).toBe('held');
    const again = await spawnReady<{ url: string }>(BATON_MAIN, [world.configFile]);
    try {
      // The follow-up is in the store: once its lease lapses the new process claims it, reads the task and verifies it.
      const done = await pollUntil(async () => attempts(world!).find((a) => a.attempt_id === left!.attempt_id), (a) => a?.state === 'closed', { what: 'the verdict after restart', polls: 600 });
      expect(done?.outcome).toBe('succeeded');
      const after = world.store();
      expect((await after.ledger.reservation(left!.reservation_id))?.status).toBe('settled');
      await after.close();
      expect(sends((await world.agents.slow!.log()).counts)).toBe(1); // followed, never sent again
    } finally {
      await again.stop();
    }
  }, 120_000);
});
