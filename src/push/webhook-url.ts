/**
 * The SSRF rules for integrator-supplied webhook URLs, as pure functions.
 * `checkWebhookUrl` gates the URL at registration and before every delivery;
 * `addressAllowed` judges one IP and is reused at connect time by
 * guarded-agent.ts, so an IP literal and a resolved name face the same rule.
 *
 * An address is refused unless it is public unicast or an operator names it in
 * `policy.allow`. IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4)
 * are judged by that IPv4, since that is where the packets end up.
 */
import { BlockList, isIP } from 'node:net';
import { deny, invalidRequest } from '../errors.ts';

export interface WebhookPolicy {
  /** Plain http is refused unless this is set (tests, local development). */
  allowHttp: boolean;
  /** CIDRs (or bare addresses) re-admitted although not public, e.g. '127.0.0.0/8', '::1/128'. */
  allow: readonly string[];
}

export const DEFAULT_WEBHOOK_POLICY: WebhookPolicy = Object.freeze({ allowHttp: false, allow: Object.freeze([]) });

const MAX_URL_LENGTH = 2048;

// RFC 6890 and the IANA special-purpose registries: nothing here is a host on
// the public internet, so an integrator has no business pointing us at it.
const NON_PUBLIC_V4 = [
  '0.0.0.0/8', // "this network"; 0.0.0.0 reaches the local host on Linux
  '10.0.0.0/8',
  '100.64.0.0/10', // carrier-grade NAT
  '127.0.0.0/8',
  '169.254.0.0/16', // link-local, including cloud metadata at 169.254.169.254
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24', // 6to4 relay anycast
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, including 255.255.255.255
];

const NON_PUBLIC_V6 = [
  '::/128',
  '::1/128',
  '100::/64', // discard-only
  '64:ff9b:1::/48', // local-use NAT64 (RFC 8215)
  '2001::/32', // Teredo: embeds an obfuscated IPv4 we do not try to judge
  '2001:db8::/32',
  '3fff::/20', // documentation (RFC 9637)
  'fc00::/7', // unique local
  'fe80::/10', // link-local
  'fec0::/10', // deprecated site-local, still routed inside some networks
  'ff00::/8', // multicast
];

const nonPublic = blockListOf([...NON_PUBLIC_V4, ...NON_PUBLIC_V6]);

// Global unicast is 2000::/3; everything else (IPv4-compatible ::a.b.c.d,
// unallocated space) is refused even when no range above names it.
const globalUnicast = blockListOf(['2000::/3']);

/**
 * Parses and vets a webhook URL. Throws `invalid_request` for a URL that is not
 * one, `deny` for one the policy refuses. The URL text is never echoed back:
 * it may carry credentials or tokens in the path or query.
 *
 * A hostname is only screened for the `localhost` family here; what it
 * resolves to is judged at connect time by guarded-agent.ts.
 */
export function checkWebhookUrl(raw: string, policy: WebhookPolicy = DEFAULT_WEBHOOK_POLICY): URL {
  if (raw.length > MAX_URL_LENGTH) throw invalidRequest('webhook URL is too long', { maxLength: MAX_URL_LENGTH });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // No `cause`: Node's ERR_INVALID_URL carries the raw input, secrets and all.
    throw invalidRequest('webhook URL is not a valid absolute URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw deny('webhook URL scheme is not allowed', { scheme: url.protocol });
  }
  if (url.username !== '' || url.password !== '') throw deny('webhook URL must not carry credentials', { host: url.host });
  // `hash` is '' for a bare trailing '#', the serialisation is not.
  if (url.href.includes('#')) throw deny('webhook URL must not carry a fragment', { host: url.host });

  // WHATWG parsing already normalised 0x7f.1, 2130706433 and friends to dotted form.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) !== 0) {
    if (!addressAllowed(host, policy)) throw deny('webhook address is not public', { host: url.host });
  } else if (isLocalhostName(host)) {
    // RFC 6761: resolvers may answer these without DNS, always with loopback.
    if (!addressAllowed('127.0.0.1', policy) && !addressAllowed('::1', policy)) {
      throw deny('webhook host is loopback', { host: url.host });
    }
  }
  return url;
}

/** True for a public unicast address, or for any address `policy.allow` names. */
export function addressAllowed(ip: string, policy: WebhookPolicy = DEFAULT_WEBHOOK_POLICY): boolean {
  // Zone ids pick an interface: link-local by construction, never a public host.
  if (ip.includes('%')) return false;
  const family = isIP(ip);
  if (family === 0) return false;
  if (allowListOf(policy).check(ip, family === 4 ? 'ipv4' : 'ipv6')) return true;
  const embedded = family === 6 ? embeddedIPv4(ip) : undefined;
  if (embedded !== undefined) return embedded.mapped ? addressAllowed(embedded.v4, policy) : isPublic(embedded.v4, 4);
  return isPublic(ip, family);
}

function isPublic(ip: string, family: number): boolean {
  if (family === 4) return !nonPublic.check(ip, 'ipv4');
  return globalUnicast.check(ip, 'ipv6') && !nonPublic.check(ip, 'ipv6');
}

/**
 * The IPv4 address an IPv6 form delivers to, if any. A mapped address IS that
 * IPv4 host, so the allow list applies to it too; NAT64 and 6to4 go through a
 * gateway, so only their public-ness transfers.
 */
function embeddedIPv4(ip: string): { v4: string; mapped: boolean } | undefined {
  const g = ipv6Groups(ip);
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && g[5] === 0xffff) return { v4: dotted(g[6]!, g[7]!), mapped: true }; // ::ffff:0:0/96
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return { v4: dotted(g[6]!, g[7]!), mapped: false }; // 64:ff9b::/96
  if (g[0] === 0x2002) return { v4: dotted(g[1]!, g[2]!), mapped: false }; // 2002::/16
  return undefined;
}

/** Eight 16-bit groups of an address `isIP` accepted as IPv6 (no zone id). */
function ipv6Groups(ip: string): number[] {
  let text = ip;
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const [a = 0, b = 0, c = 0, d = 0] = tail.split('.').map(Number);
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = rest === undefined || rest === '' ? [] : rest.split(':');
  const gap = rest === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array<string>(gap).fill('0'), ...right].map((h) => parseInt(h, 16));
}

function dotted(hi: number, lo: number): string {
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
}

function isLocalhostName(host: string): boolean {
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  return name === 'localhost' || name.endsWith('.localhost');
}

// Keyed by the list itself: policies are small, frozen-in-practice config.
const compiled = new WeakMap<readonly string[], BlockList>();

function allowListOf(policy: WebhookPolicy): BlockList {
  let list = compiled.get(policy.allow);
  if (list === undefined) {
    list = blockListOf(policy.allow);
    compiled.set(policy.allow, list);
  }
  return list;
}

function blockListOf(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of cidrs) {
    const [address = '', prefixText, extra] = entry.split('/');
    const family = isIP(address);
    const max = family === 4 ? 32 : 128;
    const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
    if (family === 0 || address.includes('%') || extra !== undefined || !(prefix >= 0 && prefix <= max)) {
      throw invalidRequest('webhook allow-list entry is not a CIDR', { entry });
    }
    list.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
  }
  return list;
}

/**
 * A webhook URL as Baton shows it (Get/List/Create answers, CLI, logs): the
 * stored URL keeps its query, which integrators often use for a token, but
 * the query and any userinfo are never shown again.
 */
export function redactedUrl(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(unparseable url)';
  }
}
