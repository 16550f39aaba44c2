/**
 * Caller authentication. The caller's identity comes from a credential Baton
 * verifies — an API key whose sha256 is configured, or a bearer JWT from a
 * configured issuer — and becomes the ADR-0014 actorBinding. A name the
 * caller claims in a request body never does.
 */
import { callerActorRef } from '../contracts/identities.ts';
import { hash as sha256Once, timingSafeEqual } from 'node:crypto';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { z } from 'zod';
import { EnvCredential } from './credential.ts';
import { BatonError } from '../errors.ts';
import { Identifier } from '../records/ids.ts';
import type { ActorRef } from '../records/revision-ref.ts';

export const CallerConfig = z.strictObject({
  id: Identifier,
  /** Lowercase hex sha256 of the API key. The key itself is never configured or logged. */
  apiKeySha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  /** Or: the JWT `sub` this caller authenticates as (with `jwt` configured). */
  jwtSubject: z.string().min(1).optional(),
  /** Owner preset this caller may issue root authority from. */
  preset: Identifier.optional(),
  /**
   * An upstream gateway: its requests may carry the Delegation Contract chain
   * they were delegated under, which Baton verifies and extends instead of
   * issuing new root authority. Contracts must be signed by `actorObjectId`
   * with a key in the pinned `contractJwksFile`.
   */
  upstream: z
    .strictObject({
      actorObjectId: Identifier,
      contractJwksFile: z.string().min(1),
      /**
       * Separate stores (issue #16): where the upstream states its control
       * heads. Set, every effect under its chain is fenced remotely through
       * signed statements; unset, both gateways must share one ledger.
       */
      headsUrl: z.url({ protocol: /^https?$/ }).optional(),
      /** Credential for headsUrl: header name and the environment variable holding its value (never the value). */
      auth: EnvCredential.optional(),
      /**
       * Organisations further up the chain whose contracts this upstream presents
       * (three hops and more): their pinned contract keys. Their heads still come
       * only through this upstream's signed statements.
       */
      ancestors: z.array(z.strictObject({ actorObjectId: Identifier, contractJwksFile: z.string().min(1) })).max(4).optional(),
      /**
       * Separate stores (issue 25): the owner this upstream speaks for. Set, its chains must name
       * exactly it; every import from it is accounted in one ledger namespace (this one, or
       * `upstream:<caller id>`), so a fresh namespace per request gains no fresh capacity.
       */
      ownerNamespace: Identifier.optional(),
      /**
       * The local preset an imported chain is clamped to (lifetime, invocations, depth below this
       * gateway, active roots, issuance rate); unset, the default preset's values. It never lets the
       * upstream issue roots of its own here (that is the caller's `preset`).
       */
      preset: Identifier.optional(),
      spaceId: Identifier.optional(),
      /** How old a head statement may be at admission; 0 fetches one for every effect. */
      maxStalenessMs: z.number().int().nonnegative().max(60_000).default(0),
    })
    .optional(),
  /** A downstream gateway (separate store) that may fetch head statements for delegations issued to `actorObjectId`. */
  downstream: z
    .strictObject({
      actorObjectId: Identifier,
      /** Its control-notice endpoint: revocations of delegations issued to it are pushed there (signed). */
      notifyUrl: z.url({ protocol: /^https?$/ }).optional(),
      /** Its contract JWKS, pinned: the consumption receipts it returns are verified under these keys only. */
      contractJwksFile: z.string().min(1).optional(),
    })
    .optional(),
});
export type CallerConfig = z.infer<typeof CallerConfig>;

export const JwtConfig = z.strictObject({
  issuer: z.string().min(1),
  audience: z.string().min(1),
  /** Path of the issuer's JWKS (pinned; never fetched from the token). */
  jwksFile: z.string().min(1),
  algorithms: z.array(z.enum(['ES256', 'EdDSA', 'RS256'])).default(['ES256', 'EdDSA']),
});
export type JwtConfig = z.infer<typeof JwtConfig>;

/** The authenticated caller, as the core sees it. */
export interface Caller {
  id: string;
  actor: ActorRef;
  via: 'api_key' | 'jwt';
  preset?: string;
  upstream?: { actorObjectId: string; contractJwksFile: string; ancestors?: Array<{ actorObjectId: string; contractJwksFile: string }>; ownerNamespace?: string; spaceId?: string; preset?: string };
  downstream?: { actorObjectId: string };
}

export interface CallerAuthenticator {
  /** Resolves credentials from headers; undefined when none were presented; throws on bad ones. */
  authenticate(headers: Record<string, string | string[] | undefined>): Promise<Caller | undefined>;
}

export function createCallerAuthenticator(callers: readonly CallerConfig[], jwt?: { config: JwtConfig; jwks: JSONWebKeySet }): CallerAuthenticator {
  const byKey = callers.filter((c) => c.apiKeySha256).map((c) => ({ c, hash: Buffer.from(c.apiKeySha256!, 'hex') }));
  const bySubject = new Map(callers.filter((c) => c.jwtSubject).map((c) => [c.jwtSubject!, c]));
  const keySet = jwt && createLocalJWKSet(jwt.jwks);
  const toCaller = (c: CallerConfig, via: Caller['via']): Caller => ({
    id: c.id,
    actor: callerActorRef(c.id),
    via,
    ...(c.preset ? { preset: c.preset } : {}),
    ...(c.upstream ? { upstream: upstreamOf(c.upstream) } : {}),
    ...(c.downstream ? { downstream: { actorObjectId: c.downstream.actorObjectId } } : {}),
  });
  const rejected = () => new BatonError('authentication_required', 'credentials were not accepted');

  return {
    async authenticate(headers) {
      const apiKey = header(headers, 'x-api-key');
      const auth = header(headers, 'authorization');
      const bearer = auth?.match(/^Bearer\s+(\S+)$/i)?.[1];
      if (apiKey !== undefined || (bearer && !bearer.includes('.'))) {
        const presented = sha256Once('sha256', apiKey ?? bearer!, 'buffer');
        // Compare against every key in constant time so timing tells nothing.
        let found: CallerConfig | undefined;
        for (const { c, hash } of byKey) if (timingSafeEqual(hash, presented)) found ??= c;
        if (!found) throw rejected();
        return toCaller(found, 'api_key');
      }
      if (bearer) {
        if (!jwt || !keySet) throw rejected();
        try {
          const { payload } = await jwtVerify(bearer, keySet, { issuer: jwt.config.issuer, audience: jwt.config.audience, algorithms: jwt.config.algorithms });
          const c = payload.sub ? bySubject.get(payload.sub) : undefined;
          if (!c) throw rejected();
          return toCaller(c, 'jwt');
        } catch {
          throw rejected();
        }
      }
      return undefined;
    },
  };
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The caller's view of an upstream entry: keys, ancestors and the owner it is bound to (never its credential). */
function upstreamOf(u: NonNullable<CallerConfig['upstream']>): NonNullable<Caller['upstream']> {
  return {
    actorObjectId: u.actorObjectId,
    contractJwksFile: u.contractJwksFile,
    ...(u.ancestors ? { ancestors: u.ancestors } : {}),
    ...(u.ownerNamespace ? { ownerNamespace: u.ownerNamespace } : {}),
    ...(u.spaceId ? { spaceId: u.spaceId } : {}),
    ...(u.preset ? { preset: u.preset } : {}),
  };
}
