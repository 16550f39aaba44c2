/**
 * The scenario with real processes: a Baton gateway on PostgreSQL
 * serving real SDK calls while pg_terminate_backend cuts every connection it
 * holds. The process stays up, calls fail (if at all) with `unavailable`, and
 * it is ready and admitting again right after.
 */
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freshSchema, PG_URL } from '../test/store/support/pg.ts';
import { textPart } from './agents/card.ts';
import { startWorld, type World } from './gateway/world.ts';

const message = (text: string): Message => ({ messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] });
const send = (text: string) => ({ tenant: '', message: message(text), configuration: undefined, metadata: undefined });

describe.skipIf(!PG_URL)('postgres: a gateway whose connections are terminated', () => {
  let world: World | undefined;
  let db: Awaited<ReturnType<typeof freshSchema>> | undefined;
  afterAll(async () => {
    await world?.close();
    await db?.drop();
  });

  it('stays up under pg_terminate_backend mid-load and answers again afterwards', async () => {
    db = await freshSchema();
    const app = `baton-e2e-${process.pid}-${Date.now()}`;
    const url = `${db.url}&application_name=${app}`;
    world = await startWorld({ agents: { honest: { behaviour: 'honest', stepMs: 5 } }, presets: [{ id: 'standard', maxInvocations: 5, maxActiveRoots: 256, maxPerMinute: 1000 }], config: { store: { kind: 'postgres', url } } });
    let crashed = false;
    void world.baton.exited.then(() => (crashed = true));
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    let terminated = 0;
    const results: string[] = [];
    const client = await world.client('honest');
    const worker = async () => {
      for (let i = 0; i < 6; i++) {
        try {
          const task = (await client.sendMessage(send(`load ${i}`))) as Task;
          results.push(task.status?.state === TaskState.TASK_STATE_COMPLETED ? 'completed' : `state ${task.status?.state}`);
        } catch (err) {
          results.push(`error: ${err instanceof Error ? err.message : String(err)}`);
        }
        // Event-driven: after every finished call, cut every backend the gateway holds.
        const { rowCount } = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [app]);
        terminated += rowCount ?? 0;
      }
    };
    await Promise.all([worker(), worker(), worker()]);
    await admin.end();
    expect(terminated).toBeGreaterThan(0);
    expect(crashed, world.baton.stderrTail()).toBe(false);
    const ready = await fetch(`${world.url}/readyz`);
    expect(ready.status, world.baton.stderrTail()).toBe(200);
    const after = (await client.sendMessage(send('after'))) as Task;
    expect(after.status?.state, world.baton.stderrTail()).toBe(TaskState.TASK_STATE_COMPLETED);
    // Whatever failed said so in the ADR-0014 vocabulary, never as a dead process.
    for (const r of results.filter((r) => r.startsWith('error'))) expect(r).toMatch(/unavailable|unreachable|connection lost/i);
    console.info(`terminated ${terminated} backends; ${results.filter((r) => r === 'completed').length}/${results.length} calls completed; ${JSON.stringify(results.filter((r) => r !== 'completed'))}`);
  }, 180_000);
});
