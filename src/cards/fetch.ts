/**
 * The one I/O edge of card verification: GET a card or JWKS with undici and
 * hand back the RAW bytes plus the caching headers. Bounded on every axis an
 * untrusted server controls: total time, body size, redirect count and
 * scheme. The bytes are never parsed here; verify.ts does that strictly.
 */
import { request, type Dispatcher } from 'undici';
import { BatonError, invalidRequest, limitExceeded, unavailable } from '../errors.ts';

export interface FetchLimits {
  /** Whole-exchange deadline, redirects included. */
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
  /** Plain http is refused except to loopback unless this says otherwise. */
  allowHttp?: (url: URL) => boolean;
}

export interface ConditionalHeaders {
  etag?: string;
  lastModified?: string;
}

/** A fetched document: either fresh bytes or "not modified". */
export type FetchResult =
  | { status: 200; bytes: Uint8Array; url: string; etag?: string; lastModified?: string; cacheControl?: string; date?: string; age?: string }
  | { status: 304; url: string; etag?: string; cacheControl?: string; date?: string };

/** The injected fetch function cards/resolver.ts uses. */
export type DocumentFetcher = (url: string, conditional?: ConditionalHeaders) => Promise<FetchResult>;

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);
const defaultAllowHttp = (u: URL): boolean => LOOPBACK.has(u.hostname);

/** Creates the undici-backed fetcher. Defaults: 5 s, 256 KiB, 3 redirects. */
export function createDocumentFetcher(limits: FetchLimits = {}): DocumentFetcher {
  const timeoutMs = limits.timeoutMs ?? 5_000;
  const maxBytes = limits.maxBytes ?? 256 * 1024;
  const maxRedirects = limits.maxRedirects ?? 3;
  const allowHttp = limits.allowHttp ?? defaultAllowHttp;
  return async (start, conditional) => {
    const signal = AbortSignal.timeout(timeoutMs);
    let url = checkUrl(start, allowHttp);
    for (let hop = 0; ; hop++) {
      const res = await send(url, conditional, signal, timeoutMs);
      const header = (name: string) => single(res.headers[name]);
      if (res.statusCode >= 300 && res.statusCode < 400 && res.statusCode !== 304) {
        await res.body.dump().catch(() => undefined);
        if (hop >= maxRedirects) throw limitExceeded('too many redirects fetching a card', { maxRedirects });
        const location = header('location');
        if (!location) throw unavailable('redirect without a Location', { status: res.statusCode });
        url = checkUrl(new URL(location, url).toString(), allowHttp);
        continue;
      }
      const common = { url: url.toString(), etag: header('etag'), cacheControl: header('cache-control'), date: header('date') };
      if (res.statusCode === 304) {
        await res.body.dump().catch(() => undefined);
        return { status: 304, ...common };
      }
      if (res.statusCode !== 200) {
        await res.body.dump().catch(() => undefined);
        throw unavailable('remote answered with an error status', { status: res.statusCode });
      }
      const bytes = await readBounded(res.body, maxBytes, header('content-length'), signal);
      return { status: 200, bytes, ...common, lastModified: header('last-modified'), age: header('age') };
    }
  };
}

async function send(url: URL, conditional: ConditionalHeaders | undefined, signal: AbortSignal, timeoutMs: number) {
  const headers: Record<string, string> = { accept: 'application/json', 'a2a-version': '1.0' };
  if (conditional?.etag) headers['if-none-match'] = conditional.etag;
  if (conditional?.lastModified) headers['if-modified-since'] = conditional.lastModified;
  try {
    return await request(url, { method: 'GET', headers, signal, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  } catch (cause) {
    throw unavailable(signal.aborted ? 'timed out fetching a card' : 'could not reach the card host', { host: url.host }, cause);
  }
}

async function readBounded(body: Dispatcher.ResponseData['body'], maxBytes: number, length: string | undefined, signal: AbortSignal) {
  // Destroying the body makes undici emit an AbortError; we already know why we stopped.
  body.on('error', () => undefined);
  if (length !== undefined && Number(length) > maxBytes) {
    body.destroy();
    throw limitExceeded('card document exceeds the size bound', { maxBytes });
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for await (const chunk of body) {
      total += chunk.byteLength;
      if (total > maxBytes) {
        body.destroy();
        throw limitExceeded('card document exceeds the size bound', { maxBytes });
      }
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof BatonError) throw err;
    throw unavailable(signal.aborted ? 'timed out reading a card' : 'card transfer failed', {}, err);
  }
  return Buffer.concat(chunks);
}

function checkUrl(text: string, allowHttp: (u: URL) => boolean): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch (cause) {
    throw invalidRequest('card URL is not absolute', {}, cause);
  }
  if (url.username || url.password) throw invalidRequest('card URL must not carry credentials');
  if (url.protocol === 'https:' || (url.protocol === 'http:' && allowHttp(url))) return url;
  throw invalidRequest('card URL scheme is not allowed', { scheme: url.protocol });
}

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** A JWKS fetcher over the same limits, for TrustStore's allow-listed `jku`. */
export function jwksFetcherOf(fetcher: DocumentFetcher): (url: string) => Promise<Uint8Array> {
  return async (url) => {
    const res = await fetcher(url);
    if (res.status !== 200) throw unavailable('JWKS fetch returned no body', { status: res.status });
    return res.bytes;
  };
}
