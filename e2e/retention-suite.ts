/**
 * Data retention against a real gateway process and a real agent (issue #17;
 * RW-003 §9 minimal data, ADR-0014 nothing erased): message and task-view
 * content is stored apart from the immutable records, `baton retention purge`
 * removes it, `baton audit verify` stays clean and tells purged from missing
 * or tampered, and a purged task still reads (content: purged). Run on SQLite
 * and on PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttemptBody, TaskInputBody } from '../src/attempts/record.ts';
import type { Store } from '../src/store/port.ts';
import { purgedBody } from '../src/store/push-sql.ts';
import { baton as cli } from '../test/cli/run.ts';
import { pollUntil } from './harness/process.ts';
import { API_KEY, startWorld, type World } from './gateway/world.ts';

export interface RetentionSetup {
  store?: Record<string, unknown>;
  open(world: World): Promise<Store>;
  /** Runs one raw SQL statement on the store (to simulate tampering); `?` placeholders. */
  exec(world: World, sql: string, params: unknown[]): Promise<void>;
  /** The files the store keeps its bytes in, when it is a local file (SQLite: the database and its WAL). */
  files?(world: World): string[];
}

/** Which of `markers` the files hold (never the bytes themselves, to keep a failure readable). */
function onDisk(files: string[], ...markers: string[]): string[] {
  const bytes = Buffer.concat(files.filter((f) => existsSync(f)).map((f) => readFileSync(f)));
  return markers.filter((m) => bytes.includes(m, 0, 'latin1'));
}

type Task = { id: string; status: { state: string }; artifacts?: unknown[]; metadata: Record<string, { outcome: string | null; content?: string }> };
const OUTCOME = 'urn:baton:outcome:v2';

export function retentionSuite(name: string, setup: () => Promise<RetentionSetup>): void {
  describe(`${name}: data retention`, () => {
    let world: World;
    let s: RetentionSetup;
    // An integrator's webhook on loopback: answers 200 to every delivery (issue 25 item 16: its bodies are purged too).
    let hook: Server;
    let hookUrl: string;
    const env = () => ({ BATON_CONFIG: world.configFile, BATON_LOG_LEVEL: 'silent' });

    beforeAll(async () => {
      s = await setup();
      hook = createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end()));
      await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
      hookUrl = `http://127.0.0.1:${(hook.address() as { port: number }).port}/hook`;
      world = await startWorld({
        agents: { honest: { behaviour: 'honest', stepMs: 10 } },
        presets: [{ id: 'standard', maxInvocations: 50 }],
        config: { ...(s.store ? { store: s.store } : {}), push: { allowHttp: true, allowAddresses: ['127.0.0.0/8'], intervalMs: 50 } },
      });
    }, 90_000);
    afterAll(async () => {
      await world?.close();
      await new Promise((resolve) => hook?.close(resolve));
    });

    async function rpc(method: string, params: unknown): Promise<{ result?: { task?: Task } & Task; error?: { code: number; data?: Array<Record<string, unknown>> } }> {
      const res = await world.fetch(`${world.url}/agents/honest/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY },
        body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params }),
      });
      return (await res.json()) as never;
    }
    const send = async (text: string) => (await rpc('SendMessage', { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] } })).result!.task!;
    async function withStore<T>(fn: (st: Store) => Promise<T>): Promise<T> {
      const st = await s.open(world);
      try {
        return await fn(st);
      } finally {
        await st.close();
      }
    }
    const audit = async () => {
      const r = await cli(['audit', 'verify', '--json'], env());
      return { code: r.code, report: JSON.parse(r.stdout) as { break_count: number; content_checked: number; content_purged: number; breaks: Array<{ kind: string }> } };
    };

    let purgedTask: Task;
    // The text the caller sends with a webhook, and the honest agent's artifact (its reverse).
    const PUSHED = 'pushed-marker-3e8b1f';
    const PUSHED_ARTIFACT = [...PUSHED].reverse().join('');
    let deliveryId: string;
    it('records keep digests only; the content is stored apart and GetTask still shows it', async () => {
      const task = await send('keep me for now');
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(task.artifacts?.length).toBeGreaterThan(0);
      purgedTask = task;
      await withStore(async (st) => {
        const attempt = (await st.getRecord(task.id))!.body as unknown as AttemptBody;
        expect(attempt.view).toBeUndefined(); // not in the immutable record…
        expect(attempt.view_digest).toMatch(/^sha256:/);
        expect((await st.content.get(attempt.view_digest!))?.document).toContain('TASK_STATE_COMPLETED'); // …but beside it
        const input = (await st.getRecord(attempt.input_ref!.object_id))!.body as unknown as TaskInputBody;
        expect(input).toMatchObject({ message: null, content: 'apart' });
        expect((await st.content.get(input.message_digest))?.document).toContain('keep me for now');
        // The signed root and child contracts are kept for good: they name the message by digest, never by its text (issue 25 item 16).
        for (const ref of [attempt.root_ref, attempt.delegation_ref]) {
          const contract = (await st.getRecord(ref.object_id, ref.revision_id))!.body as { objective: { text: string } };
          expect(contract.objective.text).toBe(`A2A message ${input.message_digest}`);
          expect(JSON.stringify(contract)).not.toContain('keep me');
        }
      });
      const got = (await rpc('GetTask', { id: task.id })).result!;
      expect(got.artifacts).toEqual(task.artifacts);
      expect((await audit()).report).toMatchObject({ break_count: 0 });
    });

    it("a webhook's delivered body carries the artifact until a purge", async () => {
      const sent = await rpc('SendMessage', { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: PUSHED }] }, configuration: { taskPushNotificationConfig: { url: hookUrl } } });
      const taskId = sent.result!.task!.id;
      const [row] = await pollUntil(
        () => withStore((st) => st.push.deliveries({ task_id: taskId, limit: 10 })),
        (rows) => rows.some((d) => d.status === 'delivered'),
        { what: 'the delivery delivered', intervalMs: 50 },
      );
      deliveryId = row!.delivery_id;
      expect(row!.body).toContain(PUSHED_ARTIFACT);
      if (s.files) expect(onDisk(s.files(world), PUSHED, PUSHED_ARTIFACT)).toEqual([PUSHED, PUSHED_ARTIFACT]); // so their absence later means something
    });

    it('baton retention purge removes the content; every chain and audit verify stay clean; the purge is recorded', async () => {
      const before = new Date().toISOString();
      const r = await cli(['retention', 'purge', '--before', before, '--json'], env());
      expect(r.code).toBe(0);
      const result = JSON.parse(r.stdout) as { purge_id: string; purged: number; purged_deliveries: number };
      expect(result.purged).toBeGreaterThanOrEqual(2); // the message and the task view (at least)
      expect(result.purged_deliveries).toBe(1); // the webhook's delivered body
      const { code, report } = await audit();
      expect(code).toBe(0);
      expect(report.break_count).toBe(0);
      expect(report.content_purged).toBeGreaterThanOrEqual(2);
      await withStore(async (st) => {
        const purge = (await st.listRevisions(result.purge_id)).map((x) => x.body as { purged?: number; before: string });
        expect(purge).toHaveLength(2); // sealed before anything was purged, revised with the count after
        expect(purge[1]).toMatchObject({ before, purged: result.purged, purged_deliveries: 1 });
        // The delivered body no longer holds the artifact (nor the message): a stub naming the purge.
        const delivered = (await st.push.delivery(deliveryId))!;
        expect(delivered).toMatchObject({ status: 'delivered', body: purgedBody(result.purge_id) });
      });
      // SQLite: no copy left in the database file or the WAL, with the gateway running beside the purge (issue 25 item 16).
      expect(onDisk(s.files?.(world) ?? [], PUSHED, PUSHED_ARTIFACT)).toEqual([]);
      // A purged delivery is never sent again.
      const requeue = await cli(['push', 'requeue', deliveryId], env());
      expect(requeue.code).not.toBe(0);
      expect(requeue.stderr).toContain('invalid_request: delivery body was purged by retention');
    });

    it('a purged task still reads: outcome and state from the records, content: purged', async () => {
      const got = (await rpc('GetTask', { id: purgedTask.id })).result!;
      expect(got.status.state).toBe('TASK_STATE_COMPLETED');
      expect(got.artifacts ?? []).toEqual([]); // the wire drops an empty list
      expect(got.metadata[OUTCOME]).toMatchObject({ outcome: 'succeeded', content: 'purged' });
      const audit = await cli(['attempt', 'audit', purgedTask.id, '--json'], env());
      expect(audit.code).toBe(0);
      expect((JSON.parse(audit.stdout) as { content: unknown }).content).toEqual({ input: 'purged', view: 'purged' });
      // New work is unaffected: its content is kept until the next purge.
      expect((await send('after the purge')).artifacts?.length).toBeGreaterThan(0);
    });

    it('audit verify tells purged from missing, tampered, or erased without a purge record', async () => {
      const task = await send('to be tampered with');
      const { view, input } = await withStore(async (st) => {
        const a = (await st.getRecord(task.id))!.body as unknown as AttemptBody;
        const i = (await st.getRecord(a.input_ref!.object_id))!.body as unknown as TaskInputBody;
        return { view: a.view_digest!, input: i.message_digest };
      });
      const tampered = await withStore(async (st) => (await st.content.get(view))!.document!.replace('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED'));
      await s.exec(world, 'UPDATE content SET document = ? WHERE digest = ?', [tampered, view]);
      await s.exec(world, "UPDATE content SET document = NULL, purged_at = '2026-01-01T00:00:00Z', purge_ref = 'rp_forged' WHERE digest = ?", [input]);
      const first = await audit();
      expect(first.code).toBe(1);
      expect(first.report.breaks.map((b) => b.kind).sort()).toEqual(['content_purge_unaccounted', 'content_tampered']);
      await s.exec(world, 'DELETE FROM content WHERE digest = ?', [view]);
      const second = await audit();
      expect(second.report.breaks.map((b) => b.kind).sort()).toEqual(['content_missing', 'content_purge_unaccounted']);
      // Reading an attempt whose content is missing (not purged) is a storage error, never an empty task.
      const got = await rpc('GetTask', { id: task.id });
      expect(got.error?.data?.[0]).toMatchObject({ reason: 'STORAGE_ERROR' });
    });
  });
}
