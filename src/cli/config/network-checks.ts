/**
 * The checks only `baton config check` runs (serve would find out by failing):
 * does each pinned JWKS verify its delegatee's current card, and are the
 * listen ports free. An unreachable card is a warning — the agent may simply
 * be down right now — but a card the pinned keys do not verify is an error.
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { createDocumentFetcher, type FetchResult } from '../../cards/fetch.ts';
import { CardResolver } from '../../cards/resolver.ts';
import { originOf, TrustStore } from '../../cards/trust-store.ts';
import type { Config } from '../../config.ts';
import { error, warning, type Problem } from './problems.ts';

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

export async function checkNetwork(c: Config): Promise<Problem[]> {
  const cards = await Promise.all(c.delegatees.map((d, i) => checkCard(c, d, i)));
  return [...cards.flat(), ...(await checkPorts(c))];
}

async function checkCard(c: Config, d: Config['delegatees'][number], i: number): Promise<Problem[]> {
  if (!/^https?:$/.test(new URL(d.cardUrl).protocol)) return []; // already an error (static-checks.ts)
  const origin = originOf(d.cardUrl);
  const pinnedFile = Object.entries(c.trust.pinnedJwks).find(([o]) => sameOrigin(o, origin))?.[1];
  const fetcher = createDocumentFetcher({ allowHttp: (u) => d.allowHttp || LOOPBACK.has(u.hostname) });
  let fetched: FetchResult;
  try {
    fetched = await fetcher(d.cardUrl);
  } catch (err) {
    return [warning(`delegatees[${i}].cardUrl`, `card not reachable: ${(err as Error).message}`, 'the gateway starts anyway; calls to this delegatee fail until its card can be fetched')];
  }
  if (pinnedFile === undefined) return [];
  try {
    const trust = await TrustStore.fromConfig({ pinnedJwks: { [origin]: pinnedFile }, jkuAllowedOrigins: [] }, { readFile: async (p) => readFile(p) });
    await new CardResolver({ fetch: async () => fetched, trust }).resolve(d.cardUrl);
    return [];
  } catch (err) {
    return [error(`trust.pinnedJwks["${origin}"]`, `does not verify the current card of delegatee "${d.id}" (${d.cardUrl}): ${(err as Error).message}`, 'the agent may have rotated its keys: pin its current JWKS')];
  }
}

function sameOrigin(a: string, b: string): boolean {
  try {
    return originOf(a) === b;
  } catch {
    return false;
  }
}

async function checkPorts(c: Config): Promise<Problem[]> {
  const wanted: Array<[string, string, number]> = [['port', c.host, c.port]];
  // The operator listener runs with operators, or for /metrics alone (README "Metrics").
  if (c.operators.length > 0 || c.metrics.enabled === true) wanted.push(['admin.port', c.admin.host, c.admin.port]);
  const out: Problem[] = [];
  for (const [path, host, port] of wanted) {
    if (port === 0) continue;
    const why = await tryListen(host, port);
    if (why) out.push(error(path, `cannot listen on ${host}:${port} (${why})`, why === 'EADDRINUSE' ? 'another process uses this port: stop it or choose another port' : 'check host and port'));
  }
  return out;
}

/** Binds and releases host:port; resolves with the error code, or undefined when free. */
function tryListen(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    s.listen(port, host, () => s.close(() => resolve(undefined)));
  });
}
