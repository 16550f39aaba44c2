/**
 * The first step of every front door (the A2A bindings, the MCP endpoints):
 * the source's throttle, then the caller the request's credentials name
 * (callers.ts), in a `baton.authenticate` span. A refused credential is
 * `authentication_required` and counts against its source
 * (src/http/auth-throttle.ts); a failure behind the check (e.g. the store)
 * keeps its own code. Each front renders the refusal in its own binding.
 */
import type { IncomingMessage } from 'node:http';
import { trace } from '@opentelemetry/api';
import { BatonError } from '../errors.ts';
import { retryAfter, type AuthThrottle } from '../http/auth-throttle.ts';
import { inSpan } from '../telemetry/tracing.ts';
import type { Caller, CallerAuthenticator } from './callers.ts';

export type Authenticated = { caller: Caller } | { refusal: BatonError; retryAfter?: string };

export async function authenticateRequest(req: IncomingMessage, deps: { auth: CallerAuthenticator; throttle?: AuthThrottle | undefined }, binding: string): Promise<Authenticated> {
  const throttled = deps.throttle?.refusal(req);
  if (throttled) return { refusal: throttled, retryAfter: retryAfter(throttled) };
  try {
    const request = trace.getActiveSpan();
    const caller = await inSpan('baton.authenticate', { 'baton.binding': binding }, async (span) => {
      const found = await deps.auth.authenticate(req.headers);
      if (!found) throw new BatonError('authentication_required', 'this gateway requires an API key or bearer token');
      for (const s of [span, request]) s?.setAttribute('baton.caller', found.id);
      return found;
    });
    return { caller };
  } catch (err) {
    const e = err instanceof BatonError ? err : new BatonError('authentication_required', 'credentials were not accepted');
    if (e.code === 'authentication_required') deps.throttle?.failed(req);
    return { refusal: e };
  }
}
