/**
 * Process lifecycle with real processes, signals and sockets: Baton listens
 * only once it can answer, and SIGTERM drains — requests in flight finish
 * within shutdown.drainMs; past it they are cut, their attempts stay open in
 * the store, and the next start adopts and verifies them.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { open } from 'node:fs/promises';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { exportJWK, generateKeyPair } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { textPart } from './agents/card.ts';
import { BATON_MAIN, startWorld, type World } from './gateway/world.ts';
import { pollUntil, spawnReady } from './harness/process.ts';
import type { AttemptBody } from '../src/gateway/attempt-record.ts';

const message = (text: string): Message => ({ messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] });
const send = (text: string) => ({ tenant: '', message: message(text), configuration: undefined, metadata: undefined });

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Resolves 'refused' or 'accepted' for one TCP connection attempt. */
function tryConnect(port: number): Promise<'refused' | 'accepted'> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve('accepted')));
    s.once('error', () => resolve('refused'));
  });
}

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

describe('SIGTERM', () => {
  it('drains: stops accepting, lets the request in flight finish, then exits 0', async () => {
    world = await startWorld({ agents: { slow: { behaviour: 'honest', stepMs: 600 } }, config: { shutdown: { drainMs: 60_000 } } });
    const client = await world.client('slow');
    const inFlight = client.sendMessage(send('drain me')) as Promise<Task>;
    await pollUntil(() => world!.agents.slow!.log(), (l) => (l.counts.SendMessage ?? 0) > 0, { what: 'the agent received the message', polls: 400 });
    const port = Number(new URL(world.url).port);
    process.kill(world.baton.pid, 'SIGTERM');
    await pollUntil(() => tryConnect(port), (r) => r === 'refused', { what: 'new connections refused', polls: 400 });
    const task = await inFlight;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(await world.baton.exited).toEqual({ code: 0, signal: null });
  }, 120_000);

  it('past the drain deadline: the request is cut, its attempt stays open with its reservation held, and the next start adopts it', async () => {
    world = await startWorld({ agents: { slow: { behaviour: 'honest', stepMs: 1_500 } }, config: { shutdown: { drainMs: 200 } } });
    const client = await world.client('slow');
    const inFlight = (client.sendMessage(send('cut me')) as Promise<Task>).then(
      () => 'answered',
      () => 'cut',
    );
    await pollUntil(() => world!.agents.slow!.log(), (l) => (l.counts.SendMessage ?? 0) > 0, { what: 'the agent received the message', polls: 400 });
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
    const again = await spawnReady<{ url: string }>(BATON_MAIN, [world.configFile], { BATON_E2E_LOG: 'info' });
    try {
      expect(again.stderrTail()).toMatch(/"adopted":1\b/);
    } finally {
      await again.stop();
    }
  }, 120_000);
});
