/**
 * Every remote result, classified (DESIGN "Every remote result is
 * classified"): a request that never left Baton, one the remote definitely
 * refused without executing it, or one whose effect is uncertain. Only the
 * uncertain kind holds capacity until reconciliation (ADR-0014); a refusal
 * releases with its recorded reason and the caller gets the remote's code.
 */
import { ERROR_INFO_TYPE } from '@a2a-js/sdk/errors';
import { ERROR_CODES, type ErrorCode } from '../../errors.ts';
import { RemoteFailure, RemoteRpcError } from '../remote.ts';

export type RemoteResult =
  | { kind: 'not_transmitted'; reason: string }
  | { kind: 'refused'; reason: string; error: RemoteRpcError | RemoteFailure }
  | { kind: 'uncertain'; reason: string };

/**
 * JSON-RPC and A2A (§9.4) error codes that say the request was not executed:
 * parse/shape/method/params errors, task not found or not cancelable, push,
 * operation, content type, extended card, required extension and version
 * not supported. -32603 (internal) and -32006 (invalid agent response) say
 * nothing of what ran, so they stay uncertain.
 */
const NOT_EXECUTED = new Set([-32700, -32600, -32601, -32602, -32001, -32002, -32003, -32004, -32005, -32007, -32008, -32009]);

/** A downstream Baton's ADR-0014 codes that are refusals before any effect (its `unavailable`/`storage_error` may not be). */
const REFUSING_CODES: ReadonlySet<ErrorCode> = new Set(ERROR_CODES.filter((c) => c !== 'unavailable' && c !== 'storage_error'));

export function classify(err: unknown): RemoteResult {
  if (err instanceof RemoteFailure) {
    if (!err.transmitted) return { kind: 'not_transmitted', reason: err.reason };
    // An HTTP 4xx is the server refusing the request before any task exists; 5xx and transport loss are not.
    if (err.status !== undefined && err.status >= 400 && err.status < 500) return { kind: 'refused', reason: err.reason, error: err };
    return { kind: 'uncertain', reason: err.reason };
  }
  if (err instanceof RemoteRpcError) {
    const code = batonCodeOf(err.data);
    if (NOT_EXECUTED.has(err.code) || (code !== undefined && (REFUSING_CODES.has(code) || saysNotTransmitted(err.data)))) return { kind: 'refused', reason: `remote error ${err.code}${code ? ` (${code})` : ''}`, error: err };
    return { kind: 'uncertain', reason: `remote error ${err.code}` };
  }
  return { kind: 'uncertain', reason: err instanceof Error ? err.message : 'unexpected failure' };
}

/**
 * The ADR-0014 code a downstream Baton names in its A2A v1.0 ErrorInfo
 * (`error.data` is a list of details, §9.5; an ErrorInfo whose domain is
 * "baton" and whose reason is the code in capitals). Shared with the error
 * renderer (src/gateway/a2a-error.ts), which relays that code and nothing else.
 */
export function batonCodeOf(data: unknown): ErrorCode | undefined {
  if (!Array.isArray(data)) return undefined;
  for (const d of data as Array<{ '@type'?: unknown; domain?: unknown; reason?: unknown }>) {
    const code = typeof d?.reason === 'string' ? d.reason.toLowerCase() : '';
    if (d?.['@type'] === ERROR_INFO_TYPE && d.domain === 'baton' && (ERROR_CODES as readonly string[]).includes(code)) return code as ErrorCode;
  }
  return undefined;
}

/**
 * A downstream Baton's `unavailable` is a refusal when it says it failed
 * before transmitting anything (its upstream's control heads could not be
 * fetched, issue #16): ErrorInfo metadata `beforeTransmission: "true"`.
 */
function saysNotTransmitted(data: unknown): boolean {
  if (!Array.isArray(data)) return false;
  return (data as Array<{ domain?: unknown; metadata?: { beforeTransmission?: unknown } }>).some((d) => d?.domain === 'baton' && d.metadata?.beforeTransmission === 'true');
}
