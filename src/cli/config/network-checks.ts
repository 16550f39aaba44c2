/**
 * The checks only `baton config check` runs (serve would find out by failing):
 * each delegatee's card is fetched and put through the gateway's own rules —
 * the trust store built from this configuration, the same card resolver, and
 * `usableCard` (src/gateway/delegatees.ts: RW-003 identity, lifecycle,
 * endpoint origin and scheme) — and the listen ports must be free. An
 * unreachable card is a warning (the agent may simply be down right now); a
 * card the gateway would refuse is an error (issue 25 item 8).
 */
import { createServer } from 'node:net';
import { createDocumentFetcher, type DocumentFetcher, type FetchResult } from '../../cards/fetch.ts';
import { CardResolver } from '../../cards/resolver.ts';
import { originOf, type TrustStore } from '../../cards/trust-store.ts';
import type { Config } from '../../config.ts';
import type { BatonError } from '../../errors.ts';
import type { CardVerification } from '../../cards/verify.ts';
import { toBatonError } from '../../http/error-map.ts';
import { usableCard } from '../../gateway/delegatees.ts';
import { error, warning, type Problem } from './problems.ts';

type Delegatee = Config['delegatees'][number];

/**
 * `trust`: the trust store the gateway would build from `c` (key-checks.ts);
 * `known`: the problems found so far (a pin already reported broken is not blamed again).
 */
export async function checkNetwork(c: Config, trust: TrustStore, known: readonly Problem[]): Promise<Problem[]> {
  const reported = new Set(known.map((p) => p.path));
  // The fetcher the gateway uses (src/main.ts): https, http to loopback only.
  const fetcher = createDocumentFetcher();
  const cards = await Promise.all(c.delegatees.map((d, i) => checkCard(c, d, i, { fetcher, trust, reported })));
  return [...cards.flat(), ...(await checkPorts(c))];
}

async function checkCard(c: Config, d: Delegatee, i: number, gw: { fetcher: DocumentFetcher; trust: TrustStore; reported: ReadonlySet<string> }): Promise<Problem[]> {
  if (!/^https?:$/.test(new URL(d.cardUrl).protocol)) return []; // already an error (static-checks.ts)
  let fetched: FetchResult;
  try {
    fetched = await gw.fetcher(d.cardUrl);
  } catch (err) {
    return [warning(`delegatees[${i}].cardUrl`, `card not reachable: ${(err as Error).message}`, 'the gateway starts anyway; calls to this delegatee fail until its card can be fetched')];
  }
  let verification: CardVerification;
  try {
    verification = await new CardResolver({ fetch: async () => fetched, trust: gw.trust }).resolve(d.cardUrl, 'public', { allowUnsigned: d.allowUnsigned });
  } catch (err) {
    const problem = unverified(c, d, i, err as Error);
    return gw.reported.has(problem.path) ? [] : [problem];
  }
  try {
    usableCard(d, verification);
    return [];
  } catch (err) {
    return [refusal(d, i, toBatonError(err))];
  }
}

/** A card that does not verify: blame the pin when there is one. */
function unverified(c: Config, d: Delegatee, i: number, err: Error): Problem {
  const origin = originOf(d.cardUrl);
  const pinned = Object.keys(c.trust.pinnedJwks).find((o) => sameOrigin(o, origin));
  if (pinned !== undefined) return error(`trust.pinnedJwks["${pinned}"]`, `does not verify the current card of delegatee "${d.id}" (${d.cardUrl}): ${err.message}`, 'the agent may have rotated its keys: pin its current JWKS');
  return error(`delegatees[${i}].cardUrl`, `the card of delegatee "${d.id}" does not verify: ${err.message}`, `pin the agent's JWKS under trust.pinnedJwks["${origin}"] (or allow its jku origin)`);
}

/** A verified card the gateway would still refuse on every call: point at the setting that decides. */
function refusal(d: Delegatee, i: number, err: BatonError): Problem {
  const message = `every call to delegatee "${d.id}" would be refused: ${err.message}`;
  switch (err.details.reason) {
    case 'no_identity':
      return error(`delegatees[${i}].rw003`, message, 'a plain A2A agent needs its RW-003 facts declared: attested_by, agent_actor_ref, accountable_operator (README "Putting an agent behind Baton")');
    case 'endpoint_origin':
      return error(`delegatees[${i}].endpointOrigins`, `${message} (${String(err.details.endpoint_origin)})`, 'list that origin under endpointOrigins if you trust it with this delegatee\'s calls');
    case 'endpoint_scheme':
      return error(`delegatees[${i}].allowHttp`, message, 'serve the agent over https, or set allowHttp: true on a network you vouch for');
    default:
      return error(`delegatees[${i}]`, message);
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
