/**
 * The ADR-0014 code an error response names, read back from the bytes Baton
 * sent: the `google.rpc.ErrorInfo` (domain "baton") of an A2A error on either
 * binding, the `data.code` of an MCP JSON-RPC error, or the `{error: {code}}`
 * body of the operator API and health routes.
 */
import { ERROR_CODES, type ErrorCode } from '../errors.ts';

const CODES = new Set<string>(ERROR_CODES);

export function errorCodeOf(body: Buffer, status: number): ErrorCode | undefined {
  // Every answer is read here for the access log; most are successes, which never name
  // an "error" member (spelt plainly, or with a \u escape somewhere): not parsed (issue #15).
  if (!body.includes('"error"') && !body.includes('\\u')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  const error = (value as { error?: unknown } | null)?.error;
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as { code?: unknown; details?: unknown; data?: unknown };
  if (typeof e.code === 'string' && CODES.has(e.code) && status >= 400) return e.code as ErrorCode;
  for (const list of [e.details, e.data, (e.data as { details?: unknown } | undefined)?.details]) {
    const found = fromInfo(list);
    if (found) return found;
  }
  const baton = (e.data as { baton?: unknown } | undefined)?.baton;
  if (typeof baton === 'string' && CODES.has(baton)) return baton as ErrorCode;
  // The MCP binding's JSON-RPC error names the code in `data.code` (src/http/error-map.ts jsonRpcErrorOf).
  const named = (e.data as { code?: unknown } | undefined)?.code;
  if (typeof named === 'string' && CODES.has(named)) return named as ErrorCode;
  // A malformed request is rendered as A2A's own error (JSON-RPC 2.0 §5.1 codes, or its ErrorInfo reason on
  // REST) without Baton's: in ADR-0014's vocabulary it is still invalid_request.
  if (typeof e.code === 'number' && MALFORMED_RPC.has(e.code)) return 'invalid_request';
  return [e.details, e.data].some((l) => Array.isArray(l) && l.some((d: { reason?: unknown }) => typeof d?.reason === 'string' && MALFORMED_REASONS.has(d.reason))) ? 'invalid_request' : undefined;
}

const MALFORMED_RPC = new Set([-32700, -32600, -32602]);
const MALFORMED_REASONS = new Set(['INVALID_PARAMS', 'INVALID_REQUEST', 'PARSE_ERROR']);

function fromInfo(list: unknown): ErrorCode | undefined {
  if (!Array.isArray(list)) return undefined;
  for (const d of list as Array<{ domain?: unknown; reason?: unknown; metadata?: { baton?: unknown } }>) {
    if (d?.domain !== 'baton') continue;
    const code = typeof d.metadata?.baton === 'string' ? d.metadata.baton : typeof d.reason === 'string' ? d.reason.toLowerCase() : '';
    if (CODES.has(code)) return code as ErrorCode;
  }
  return undefined;
}
