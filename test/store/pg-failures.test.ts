/**
 * PostgreSQL going away under load: pg_terminate_backend on Baton's own
 * connections, a server that cannot be reached, a database that does not
 * exist. ADR-0014: an unavailable coordinator is `unavailable`; nothing is
 * admitted on it, the process stays up, and the ledger stays consistent.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatonError } from '../../src/errors.ts';
import { createApp } from '../../src/http/app.ts';
import { createLogger } from '../../src/log.ts';
import { PgStore } from '../../src/store/postgres/store.ts';
import { wrapPgError } from '../../src/store/postgres/failure.ts';
import { expectCodeAsync } from '../helpers/errors.ts';
import { admission, chain, freshSpace, publishAgent } from './support/fixtures.ts';
import { freshSchema, PG_URL } from './support/pg.ts';
import { tcpProxy, type TcpProxy } from './support/tcp-proxy.ts';

const withParam = (url: string, k: string, v: string) => `${url}${url.includes('?') ? '&' : '?'}${k}=${encodeURIComponent(v)}`;

describe.skipIf(!PG_URL)('postgres: connection loss', () => {
  let db: Awaited<ReturnType<typeof freshSchema>>;
  let admin: pg.Client;
  beforeAll(async () => {
    db = await freshSchema();
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await db?.drop();
  });

  it('pg_terminate_backend mid-load: every failure is unavailable, the process stays up, the ledger stays consistent', async () => {
    const app = `baton-kill-${process.pid}-${Date.now()}`;
    const store = await PgStore.open(withParam(db.url, 'application_name', app), { max: 6 });
    const space = freshSpace();
    await publishAgent(store, space);
    const c = await chain(store, space, { root: 10_000n });
    const ids = [c.root, c.child, c.leaf];
    const outcomes = { ok: 0, failed: [] as string[] };
    let done = 0;
    let terminated = 0;
    const terminate = async () => {
      const { rowCount } = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [app]);
      terminated += rowCount ?? 0;
    };
    const worker = async () => {
      for (let i = 0; i < 40; i++) {
        try {
          await store.ledger.admit(await admission(store, space, ids, c.leaf));
          outcomes.ok++;
        } catch (err) {
          outcomes.failed.push(err instanceof BatonError ? err.code : `not a BatonError: ${String(err)}`);
        }
        // Event-driven: every 25 finished admissions, cut every connection Baton holds.
        if (++done % 25 === 0) await terminate();
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    expect(terminated).toBeGreaterThan(0);
    expect(new Set(outcomes.failed.filter((c) => c !== 'unavailable'))).toEqual(new Set());
    // Still usable afterwards, and the books balance: reservations held = admissions that committed.
    await store.ping();
    const after = await admission(store, space, ids, c.leaf);
    await store.ledger.admit(after);
    const held = (await store.ledger.unresolved(10_000)).filter((r) => r.chain.includes(c.leaf)).length;
    expect(held).toBeGreaterThanOrEqual(outcomes.ok + 1);
    expect(held).toBeLessThanOrEqual(outcomes.ok + 1 + outcomes.failed.length); // a commit-uncertain one may have landed
    for (const row of await store.ledger.balanceAudit(c.root)) expect(row).toMatchObject({ consistent: true });
    await store.close();
  }, 120_000);

  it('an unreachable server: calls and /readyz say unavailable, and both recover when it is back', async () => {
    const proxy: TcpProxy = await tcpProxy({ host: '127.0.0.1', port: Number(new URL(PG_URL!).port || 5432) });
    const via = new URL(db.url);
    via.port = String(proxy.port);
    const store = await PgStore.open(via.toString(), { max: 2 });
    const server: Server = createServer(createApp({ store, logger: createLogger({ level: 'silent' }) }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
      await proxy.cut();
      const res = await fetch(`${base}/readyz`);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ status: 'not_ready', code: 'unavailable' });
      await expectCodeAsync(store.control.head({ space_id: freshSpace(), scope_kind: 'space', scope_id: 'x' }), 'unavailable');
      await expectCodeAsync(publishAgent(store, freshSpace()), 'unavailable');
      await proxy.restore();
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
      await publishAgent(store, freshSpace());
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
      await store.close();
      await proxy.close();
    }
  }, 60_000);

  it('a database that does not exist at start is unavailable, not storage_error', async () => {
    const url = new URL(PG_URL!);
    url.pathname = `/baton_missing_${process.pid}_${Date.now()}`;
    const err = await expectCodeAsync(PgStore.open(url.toString()), 'unavailable');
    expect(err.details).toMatchObject({ reason: '3D000' });
  });

  it('a dropped table is storage_error at start', async () => {
    const own = await freshSchema();
    try {
      (await PgStore.open(own.url)).close();
      const c = new pg.Client({ connectionString: own.url });
      await c.connect();
      await c.query('DROP TABLE ledger_entries');
      await c.end();
      const err = await expectCodeAsync(PgStore.open(own.url), 'storage_error');
      expect(err.details).toMatchObject({ reason: 'missing_table' });
    } finally {
      await own.drop();
    }
  });

  it('classifies a full disk as storage_error and a shutdown as unavailable', () => {
    expect((wrapPgError(Object.assign(new Error('could not extend file'), { code: '53100' })) as BatonError).code).toBe('storage_error');
    expect((wrapPgError(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })) as BatonError).code).toBe('unavailable');
  });
});
