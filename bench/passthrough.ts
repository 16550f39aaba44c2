/**
 * The floor for any Node proxy: a minimal node:http server that buffers each
 * request body and forwards it with undici to one upstream origin, returning
 * status, content-type and body. No parsing, no auth, no storage.
 *   tsx bench/passthrough.ts <upstream-origin>
 * Prints `{"url": ...}` once listening; exits on SIGTERM or when stdin closes.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const upstream = process.argv[2];
if (!upstream) {
  process.stderr.write('usage: passthrough.ts <upstream-origin>\n');
  process.exit(2);
}
const pool = new Pool(upstream, { connections: 64, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000, keepAliveTimeout: 60_000 });

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const headers: Record<string, string> = { 'content-type': String(req.headers['content-type'] ?? 'application/json') };
    for (const h of ['a2a-version', 'a2a-extensions', 'accept']) if (req.headers[h]) headers[h] = String(req.headers[h]);
    pool
      .request({ path: req.url ?? '/', method: (req.method ?? 'POST') as 'POST', headers, body: Buffer.concat(chunks) })
      .then(async (up) => {
        const body = Buffer.from(await up.body.arrayBuffer());
        res.writeHead(up.statusCode, { 'content-type': String(up.headers['content-type'] ?? 'application/json'), 'content-length': body.length });
        res.end(body);
      })
      .catch((err: Error) => {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(err.message);
      });
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});
const stop = () => {
  setTimeout(() => process.exit(0), 2_000).unref();
  server.close(() => void pool.close().finally(() => process.exit(0)));
  server.closeAllConnections();
};
process.once('SIGTERM', stop);
process.stdin.on('end', stop).resume();
