/** Attempt records, a store, keys and a loopback receiver for the push tests. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AttemptBody } from '../../src/attempts/record.ts';
import { Keyring } from '../../src/keys/keyring.ts';
import { createLogger } from '../../src/log.ts';
import { refOf, sealRecord, type SealedRecord } from '../../src/records/envelope.ts';
import { randomIds } from '../../src/records/ids.ts';
import { systemClock } from '../../src/records/time.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';

export const actor = { object_id: 'actor_gw', revision_id: 'rev_1', content_digest: `sha256:${'a'.repeat(64)}` };
const deps = { ids: randomIds, clock: systemClock };
export const quietLogger = () => createLogger({ level: 'silent' });

export function tempDir(prefix = 'baton-push-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function world() {
  const dir = tempDir();
  const store = SqliteStore.open(join(dir, 'baton.db'), { create: true });
  const keyring = await Keyring.open(join(dir, 'keys'));
  return { dir, store, keyring };
}

/** A stored attempt in `dispatching`, as admission leaves it. */
export function openAttempt(patch: Partial<AttemptBody> = {}): SealedRecord<AttemptBody> {
  const attemptId = randomIds.next('att');
  return sealRecord<AttemptBody>(
    {
      type: 'execution_attempt',
      issuedBy: actor,
      lifecycle: 'active',
      body: {
        attempt_id: attemptId,
        space_id: 'sp',
        delegatee_id: 'alice',
        delegation_ref: actor,
        root_ref: actor,
        caller_id: 'planner',
        effect_id: 'eff_1',
        reservation_id: 'res_1',
        fence_set: [],
        remote: { endpoint: 'http://127.0.0.1:1/a2a/jsonrpc', protocol: 'a2a', protocol_version: '1.0', binding: 'JSONRPC', card_ref: actor, extensions: [], task_id: 'remote-task-1' },
        context_id: 'ctx_1',
        idempotency_key: 'eff_1',
        state: 'open',
        ...patch,
      },
    },
    { ids: { next: (p) => (p === 'rev' ? randomIds.next('rev') : attemptId) }, clock: systemClock },
  );
}

/** The next revision of `attempt`, closed with `outcome`, issued now or `at`. */
export function closeAttempt(attempt: SealedRecord<AttemptBody>, outcome: AttemptBody['outcome'] = 'succeeded', at?: Date): SealedRecord<AttemptBody> {
  return sealRecord<AttemptBody>(
    { type: 'execution_attempt', issuedBy: actor, lifecycle: 'recorded', recordId: attempt.record_id, prior: refOf(attempt), body: { ...attempt.body, state: 'closed', outcome, receipt_ref: actor } },
    at ? { ids: randomIds, clock: { now: () => at } } : deps,
  );
}

export interface Received {
  headers: IncomingMessage['headers'];
  body: string;
  url: string;
}

/** A loopback webhook receiver answering with `respond(n)` for the n-th request (1-based). */
export async function receiver(respond: (n: number, req: Received) => number | 'hang' = () => 200) {
  const received: Received[] = [];
  const hung: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), url: req.url ?? '' };
      received.push(r);
      const answer = respond(received.length, r);
      if (answer === 'hang') hung.push(res);
      else res.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const h of hung) h.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export { until } from '../helpers/until.ts';
