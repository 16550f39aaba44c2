/**
 * A real loopback HTTP hop between a downstream Baton and its upstream's
 * head-statement endpoint, so tests can make the upstream unreachable or its
 * statements forged, tampered or replayed without touching either gateway.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CompactSign, decodeProtectedHeader, generateKeyPair } from 'jose';

export type ProxyMode = 'pass' | 'down' | 'forge' | 'tamper' | 'replay';

export interface HeadsProxy {
  url: string;
  mode: ProxyMode;
  /** Statements passed through, newest last (for replay). */
  seen: string[];
  /** Requests received (every fetch B made). */
  requests: number;
  /** The delegation id of each request (the statement's subject). */
  subjects: string[];
  /** The statement `replay` answers with. */
  replay?: string;
  /** Mode for the n-th request (1-based) about one subject; undefined falls back to `mode`. Keyed by subject so late rechecks of earlier tasks never take a test's turn. */
  plan?: ((nth: number, subject: string) => ProxyMode | undefined) | undefined;
  /** Awaited before a request is handled (a test holds the upstream's answer while it acts). */
  gate?: (() => Promise<void>) | undefined;
  close(): Promise<void>;
}

const b64 = (s: string) => Buffer.from(s, 'base64url').toString('utf8');

export async function startHeadsProxy(upstream: () => string): Promise<HeadsProxy> {
  const forgeKey = (await generateKeyPair('ES256')).privateKey;
  const proxy: HeadsProxy = { url: '', mode: 'pass', seen: [], requests: 0, subjects: [], close: async () => undefined };
  const server: Server = createServer((req, res) => {
    proxy.requests++;
    const subject = decodeURIComponent((req.url ?? '').split('/').pop() ?? '');
    const nth = proxy.subjects.filter((s) => s === subject).length + 1;
    proxy.subjects.push(subject);
    const mode = proxy.plan?.(nth, subject) ?? proxy.mode;
    const gate = proxy.gate;
    void (async () => {
      await gate?.();
      if (mode === 'down') {
        res.destroy();
        return;
      }
      if (mode === 'replay') {
        res.writeHead(200, { 'content-type': 'application/jose' }).end(proxy.replay ?? proxy.seen[0] ?? '');
        return;
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host') headers[k] = v;
      const r = await fetch(`${upstream()}${req.url}`, { headers });
      let body = await r.text();
      if (r.ok) proxy.seen.push(body);
      if (r.ok && mode !== 'pass') body = await falsify(body, mode, forgeKey);
      res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'text/plain' }).end(body);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () => new Promise<void>((r) => server.close(() => r()));
  return proxy;
}

/** Every head reads `active`; `forge` re-signs under a key nobody pinned (same kid), `tamper` keeps the old signature. */
async function falsify(jws: string, mode: 'forge' | 'tamper', key: Awaited<ReturnType<typeof generateKeyPair>>['privateKey']): Promise<string> {
  const [h, p, s] = jws.split('.');
  const payload = JSON.parse(b64(p!)) as { heads: Array<{ state: string }>; max_staleness_ms: number };
  for (const head of payload.heads) head.state = 'active';
  payload.max_staleness_ms = 60_000;
  const bytes = new TextEncoder().encode(JSON.stringify(payload));
  if (mode === 'tamper') return `${h}.${Buffer.from(bytes).toString('base64url')}.${s}`;
  const header = decodeProtectedHeader(jws);
  return new CompactSign(bytes).setProtectedHeader({ alg: 'ES256', kid: header.kid!, typ: header.typ! }).sign(key);
}
