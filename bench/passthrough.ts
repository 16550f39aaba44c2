/**
 * The floor for any Node proxy: a minimal node:http server that buffers each
 * request body and forwards it with undici to one upstream origin, returning
 * status, content-type and body. No parsing, no auth, no storage.
 *   tsx bench/passthrough.ts <upstream-origin> [--read-back]
 * With --read-back it makes the same agent round trips as Baton (DESIGN.md
 * "Performance floor"): after a JSON-RPC SendMessage answers with a task, it
 * re-reads that task with a GetTask on a separate connection pool and only
 * then answers with the original SendMessage bytes (502 if the read-back
 * fails or disagrees on the state). Still no auth, no storage, no signing.
 * Prints `{"url": ...}` once listening; exits on SIGTERM or when stdin closes.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const upstream = process.argv[2];
const readBack = process.argv.includes('--read-back');
if (!upstream) {
  process.stderr.write('usage: passthrough.ts <upstream-origin> [--read-back]\n');
  process.exit(2);
}
const options = { connections: 64, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000, keepAliveTimeout: 60_000 };
const pool = new Pool(upstream, options);
// A separate route for the read-back, as Baton's (its own connections, never the forwarding ones).
const readPool = new Pool(upstream, options);

interface Rpc {
  result?: { task?: { id?: string; status?: { state?: string } }; id?: string; status?: { state?: string } };
}

/** The task a JSON-RPC SendMessage/GetTask answer carries (v1.0 `{task}` or a bare task). */
function taskOf(body: Buffer): { id?: string; state?: string } {
  try {
    const r = (JSON.parse(body.toString('utf8')) as Rpc).result;
    const t = r?.task ?? r;
    return { ...(t?.id ? { id: t.id } : {}), ...(t?.status?.state ? { state: t.status.state } : {}) };
  } catch {
    return {};
  }
}

/** GetTask on the read-back pool; the state it reports, or a reason it could not. */
async function reread(path: string, headers: Record<string, string>, id: string): Promise<{ state?: string; error?: string }> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id } });
  const up = await readPool.request({ path, method: 'POST', headers, body });
  const bytes = Buffer.from(await up.body.arrayBuffer());
  if (up.statusCode !== 200) return { error: `read-back HTTP ${up.statusCode}` };
  const t = taskOf(bytes);
  return t.state ? { state: t.state } : { error: 'read-back without a task' };
}

async function forward(path: string, method: string, headers: Record<string, string>, body: Buffer): Promise<{ status: number; type: string; body: Buffer }> {
  const up = await pool.request({ path, method: method as 'POST', headers, body });
  const bytes = Buffer.from(await up.body.arrayBuffer());
  const type = String(up.headers['content-type'] ?? 'application/json');
  if (!readBack || up.statusCode !== 200) return { status: up.statusCode, type, body: bytes };
  const seen = taskOf(bytes);
  if (!seen.id) return { status: up.statusCode, type, body: bytes };
  const again = await reread(path, headers, seen.id);
  if (again.error || again.state !== seen.state) return { status: 502, type: 'text/plain', body: Buffer.from(again.error ?? `read-back state ${again.state} != ${seen.state}`) };
  return { status: up.statusCode, type, body: bytes };
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const headers: Record<string, string> = { 'content-type': String(req.headers['content-type'] ?? 'application/json') };
    for (const h of ['a2a-version', 'a2a-extensions', 'accept']) if (req.headers[h]) headers[h] = String(req.headers[h]);
    forward(req.url ?? '/', req.method ?? 'POST', headers, Buffer.concat(chunks))
      .then((r) => {
        res.writeHead(r.status, { 'content-type': r.type, 'content-length': r.body.length });
        res.end(r.body);
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
  server.close(() => void Promise.all([pool.close(), readPool.close()]).finally(() => process.exit(0)));
  server.closeAllConnections();
};
process.once('SIGTERM', stop);
process.stdin.on('end', stop).resume();
