/**
 * What the access log does per request, counted (issue #24): pino-http binds
 * each request to a logger of the whole request — headers and socket read by
 * pino's request serializer, redacted and stringified — although both its
 * request and response loggers are quiet and that logger is never written
 * to. The access log keeps the line it writes (test/http/access-log.test.ts)
 * and reads none of that.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { accessLog } from '../../src/http/access-log.ts';
import { createLogger } from '../../src/log.ts';

const servers: Array<{ close(): void }> = [];
afterEach(() => servers.splice(0).forEach((s) => s.close()));

describe('the access log', () => {
  it('writes its line without serialising the request it answers', async () => {
    let written!: (line: Record<string, unknown>) => void;
    const line = new Promise<Record<string, unknown>>((resolve) => (written = resolve));
    const destination = new Writable({ write: (chunk: Buffer, _e, done) => (written(JSON.parse(chunk.toString()) as Record<string, unknown>), done()) });
    const logger = createLogger({ level: 'info', destination });
    let reads = 0;
    const app = express();
    // pino's request serializer takes the peer's address from `req.info` (hapi) before `req.socket`: a read of it is a serialisation.
    app.use((req, _res, next) => {
      Object.defineProperty(req, 'info', { get: () => (reads++, undefined), configurable: true });
      next();
    });
    app.use(accessLog(logger));
    app.get('/ping', (_req, res) => {
      res.json({ ok: true });
    });
    const server = createServer(app).listen(0, '127.0.0.1');
    servers.push(server);
    await new Promise((resolve) => server.once('listening', resolve));
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/ping`, { headers: { 'x-request-id': 'cost-1' } });
    expect(res.status).toBe(200);
    await res.text();
    // The one line this logger writes: the request's, once it is answered.
    const logged = await line;
    expect(logged).toMatchObject({ msg: 'request', request_id: 'cost-1', status: 200, method: 'GET /ping', binding: 'other' });
    expect(logged).not.toHaveProperty('req');
    expect(reads).toBe(0);
  });
});
