/**
 * RW-003 §4.3 / §9: "Secrets, bearer tokens, cookies, private keys, and
 * credential material are forbidden" in a card. A card is public and signed,
 * so a leaked secret there is both published and hard to take back. This scan
 * is a tripwire, not a proof: it refuses the shapes credentials usually take
 * and reports only the JSON path, never the value.
 */
import { invalidRequest } from '../errors.ts';

/** Member names whose (non-empty string) value is a credential by construction. */
const SECRET_KEYS = new Set([
  'password',
  'passwd',
  'passphrase',
  'secret',
  'clientsecret',
  'apikey',
  'apikeyvalue',
  'accesstoken',
  'refreshtoken',
  'idtoken',
  'token',
  'bearertoken',
  'privatekey',
  'cookie',
  'setcookie',
  'authorization',
  'credential',
  'credentials',
  'sessiontoken',
]);

const VALUE_PATTERNS: Array<[string, RegExp]> = [
  ['PEM private key', /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/],
  // A token needs 16+ token68 chars including a digit, so prose ("accepts bearer tokens") passes.
  ['bearer token', /\bbearer\s+(?=\S*\d)[A-Za-z0-9\-._~+/]{16,}=*/i],
  ['basic credentials', /\bbasic\s+(?=\S*\d)[A-Za-z0-9+/]{12,}={0,2}/i],
  ['JWT', /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/],
  ['AWS access key', /\bAKIA[0-9A-Z]{16}\b/],
  ['GitHub token', /\bgh[pousr]_[A-Za-z0-9]{30,}\b/],
  ['Slack token', /\bxox[abposr]-[A-Za-z0-9-]{10,}/],
  ['API secret key', /\bsk-[A-Za-z0-9_-]{20,}/],
  ['URL with credentials', /\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:[^/\s@]+@/i],
];

// JWK members that only a private or symmetric key has (RFC 7518 §6.2.2, §6.3.2, §6.4).
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** Throws invalid_request naming the first path that looks like credential material. */
export function assertNoSecrets(value: unknown, where = 'card'): void {
  const found = findSecret(value, []);
  if (found) throw invalidRequest(`${where} contains credential material (${found.kind})`, { path: found.path });
}

function findSecret(value: unknown, path: string[]): { path: string; kind: string } | undefined {
  if (typeof value === 'string') {
    for (const [kind, re] of VALUE_PATTERNS) if (re.test(value)) return { path: pointer(path), kind };
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const hit = findSecret(item, [...path, String(i)]);
      if (hit) return hit;
    }
    return undefined;
  }
  const record = isJws(value) ? jwsView(value) : (value as Record<string, unknown>);
  if (typeof record.kty === 'string' && PRIVATE_JWK_MEMBERS.some((m) => m in record)) {
    return { path: pointer(path), kind: 'private or symmetric JWK' };
  }
  for (const [key, v] of Object.entries(record)) {
    const norm = key.toLowerCase().replace(/[-_\s]/g, '');
    if (SECRET_KEYS.has(norm) && typeof v === 'string' && v.length > 0) return { path: pointer([...path, key]), kind: `"${key}" member` };
    const hit = findSecret(v, [...path, key]);
    if (hit) return hit;
  }
  return undefined;
}

/** A JWS in the JSON serialization: a card's signatures (A2A AgentCardSignature), a continuity attestation. */
function isJws(value: object): value is { protected: string; signature: string } {
  const v = value as Record<string, unknown>;
  return typeof v.protected === 'string' && typeof v.signature === 'string';
}

/**
 * A JWS as the scan sees it. `signature` is base64url of a signature's random
 * bytes: it carries nothing a publisher wrote, and it matched the `sk-` shape
 * by chance in a generated ES256 signature (a card refusing itself at
 * start-up). `protected` is scanned as the JSON header it encodes, where a
 * publisher's values are.
 */
function jwsView(jws: { protected: string; signature: string }): Record<string, unknown> {
  const { signature: _opaque, ...rest } = jws as Record<string, unknown> & { protected: string };
  return { ...{}, ...rest, protected: decodedHeader(rest.protected) };
}

function decodedHeader(b64url: string): unknown {
  try {
    return JSON.parse(Buffer.from(b64url, 'base64url').toString('utf8')) as unknown;
  } catch {
    return b64url;
  }
}

/** RFC 6901 JSON pointer. */
function pointer(path: string[]): string {
  return path.length === 0 ? '' : `/${path.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
}
