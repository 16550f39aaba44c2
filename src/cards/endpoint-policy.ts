/**
 * Where a verified card may send Baton. A correctly signed card proves who
 * wrote it, not where the operator agreed to send the partner credential and
 * the contract chain: the endpoint must stay on the origin the card was
 * pinned for (or one the operator lists), over https unless the operator
 * allows http for that delegatee.
 */
import { deny } from '../errors.ts';

export interface EndpointPolicy {
  /** The configured card URL: its origin is the pinned one. */
  cardUrl: string;
  /** Further origins the operator lists for this delegatee's endpoints. */
  endpointOrigins: readonly string[];
  /** Plain http endpoints (loopback tests, a private network the operator vouches for). */
  allowHttp: boolean;
}

/** Throws `deny` unless `endpoint` may receive this delegatee's calls. */
export function assertEndpointAllowed(endpoint: string, policy: EndpointPolicy): void {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw deny('delegatee card names an endpoint that is not a URL');
  }
  const allowed = new Set([new URL(policy.cardUrl).origin, ...policy.endpointOrigins.map((o) => new URL(o).origin)]);
  if (!allowed.has(url.origin)) throw deny('delegatee card moves its endpoint off the pinned origin', { endpoint_origin: url.origin.slice(0, 512), reason: 'endpoint_origin' });
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw deny('delegatee endpoint is not https and http is not allowed for this delegatee', { endpoint_origin: url.origin.slice(0, 512), reason: 'endpoint_scheme' });
  }
}
