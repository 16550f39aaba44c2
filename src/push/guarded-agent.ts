/**
 * The I/O half of the webhook SSRF guard: an undici Agent whose sockets only
 * connect to addresses webhook-url.ts allows, and the one POST a delivery
 * makes through it.
 *
 * The check runs at connect time, inside the `lookup` net.connect uses for the
 * socket, so the address judged is the address dialled: a name that was public
 * when registered and resolves to 127.0.0.1 at delivery (DNS rebinding) is
 * still refused. net.connect skips `lookup` for IP-literal hosts; the connector
 * re-checks those itself, but callers must still run checkWebhookUrl first, as
 * only it sees the scheme, credentials and fragment.
 *
 * Redirects are never followed: undici's `request` only follows them when a
 * redirect interceptor is composed, and none is, so a 3xx is just a status.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector, request, type Dispatcher } from 'undici';
import { deny, isBatonError, unavailable, type BatonError } from '../errors.ts';
import { addressAllowed, type WebhookPolicy } from './webhook-url.ts';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Name resolution as the guard sees it; tests inject answers instead of DNS. */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export interface GuardedAgentOptions {
  /** Bounds DNS plus the TCP/TLS handshake. Default 10 s. */
  connectTimeoutMs?: number;
  resolve?: Resolver;
}

export interface PostWebhookOptions {
  /** Deadline for the whole exchange, also used as undici's headers and body timeouts. */
  timeoutMs: number;
  /** Response bytes read (and discarded) before the body is dropped. Default 64 KiB. */
  maxResponseBytes?: number;
}

const systemResolve: Resolver = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));

/** An Agent that refuses, at connect time, every address `policy` does not allow. */
export function guardedAgent(policy: WebhookPolicy, opts: GuardedAgentOptions = {}): Agent {
  const base = buildConnector({ lookup: guardedLookup(policy, opts.resolve ?? systemResolve), timeout: opts.connectTimeoutMs ?? 10_000 });
  const connect: buildConnector.connector = (options, callback) => {
    const host = options.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host) !== 0 && !addressAllowed(host, policy)) return callback(refused(host), null);
    base(options, callback);
  };
  return new Agent({ connect });
}

function guardedLookup(policy: WebhookPolicy, resolve: Resolver): LookupFunction {
  return (hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    resolve(hostname).then(
      (answers) => {
        // Judge the whole answer, not just the record net would pick: a public
        // record next to a private one is how a rebinding attack hedges.
        if (answers.some((a) => !addressAllowed(a.address, policy))) return callback(refused(hostname), '');
        const usable = family === 4 || family === 6 ? answers.filter((a) => a.family === family) : answers;
        const first = usable[0];
        if (first === undefined) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
        // With autoSelectFamily (Node 20's default) net asks for every address.
        if (options.all === true) callback(null, usable);
        else callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}

/**
 * POSTs `body` to `url` through a guarded agent and reports the status; 3xx is
 * returned like any other status, never followed.
 *
 * Failures: a guard refusal throws BatonError `deny` (permanent; dead-letter
 * the delivery), anything else on the way (DNS failure, refused connection,
 * TLS, timeout) throws BatonError `unavailable` (transient; retry).
 */
export async function postWebhook(
  agent: Agent,
  url: URL,
  body: string,
  headers: Record<string, string>,
  opts: PostWebhookOptions,
): Promise<{ status: number }> {
  const { timeoutMs } = opts;
  const signal = AbortSignal.timeout(timeoutMs);
  let res: Dispatcher.ResponseData;
  try {
    res = await request(url, { dispatcher: agent, method: 'POST', headers, body, signal, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  } catch (cause) {
    const refusal = guardRefusal(cause);
    if (refusal !== undefined) throw refusal;
    const timedOut = signal.aborted || TIMEOUT_CODES.has((cause as { code?: unknown }).code);
    throw unavailable(timedOut ? 'webhook delivery timed out' : 'webhook delivery failed', { host: url.host }, cause);
  }
  // Only the status matters. A bounded read lets a short reply keep the
  // connection reusable; anything longer is cut off, never waited for.
  await res.body.dump({ limit: opts.maxResponseBytes ?? 64 * 1024, signal }).catch(() => undefined);
  return { status: res.statusCode };
}

const TIMEOUT_CODES = new Set<unknown>(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

// The resolved address stays out of the details: it may be an internal one
// the integrator should not learn from our error messages.
function refused(host: string): BatonError {
  return deny('webhook host is not an allowed address', { host });
}

function guardRefusal(err: unknown): BatonError | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (isBatonError(e, 'deny')) return e;
  }
  return undefined;
}
