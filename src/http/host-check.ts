/**
 * The operator listener answers only requests addressed to it by a name it
 * knows (issue #25 item 19): a DNS-rebinding page resolves its own host
 * name to 127.0.0.1 and could otherwise read `/metrics` or `/readyz` from
 * the operator's browser. Loopback names, the configured `admin.host` (a
 * wildcard such as 0.0.0.0 too: the CLI addresses the listener by it, and
 * no page's host name is one), `admin.allowedHosts` and any IP literal (a
 * rebinding page is reached by a domain name, never by an address: a
 * scraper addressing the listener by IP is not one) are accepted; any other
 * name is refused as `deny` (403) before any route runs.
 */
import { isIP } from 'node:net';
import type { RequestHandler } from 'express';
import { deny } from '../errors.ts';
import { sendHttpError } from './error-map.ts';

const LOOPBACK = ['localhost', '127.0.0.1', '::1'];

/** Express middleware refusing a request whose Host header names none of `host`, `allowed` or loopback. */
export function hostCheck(host: string, allowed: readonly string[]): RequestHandler {
  const names = new Set([...LOOPBACK, host, ...allowed].map((n) => n.toLowerCase()));
  return (req, res, next) => {
    const name = hostName(req.headers.host ?? '');
    if (names.has(name) || isIP(name) !== 0) return next();
    sendHttpError(res, deny('this listener does not answer for that host name; add it to admin.allowedHosts', { rule: 'host' }));
  };
}

/** The host part of a Host header (RFC 9110 §7.2): `[v6]:port`, `name:port` or `name`. */
function hostName(header: string): string {
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') > 0 ? h.indexOf(']') : undefined);
  const colon = h.lastIndexOf(':');
  return colon >= 0 && h.indexOf(':') === colon ? h.slice(0, colon) : h;
}
