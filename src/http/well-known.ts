/**
 * Serving Baton's signed cards and JWKS (A2A §8.2 well-known URI, §8.6.1
 * caching): exact pre-serialised bytes, strong ETag, Cache-Control max-age,
 * Last-Modified, and conditional GET (RFC 9110 §13.1: If-None-Match wins
 * over If-Modified-Since). The extended card (A2A §3.1.11, §13.3) is only
 * ever sent to an authenticated caller and never cached by shared caches.
 */
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { BatonError } from '../errors.ts';
import { agentCardPath, WELL_KNOWN_CARD_PATH, WELL_KNOWN_JWKS_PATH, type CardPublisher, type PublishedCard, type PublishedCardForm, type PublishedDocument } from '../cards/publisher.ts';

export interface WellKnownOptions<P> {
  /** The publisher, or a getter (lets the composition root load it after listen, once publicUrl is known). */
  publisher: CardPublisher | (() => CardPublisher);
  /** Resolves the caller; `undefined` means unauthenticated. Must not throw for "no credentials". */
  authenticate: (req: Request) => Promise<P | undefined>;
  /** Public documents' max-age in seconds (default 300). */
  maxAgeSeconds?: number;
}

/** Router with the public card(s), per-agent cards, the JWKS and the extended card endpoints. */
export function wellKnownRouter<P>(opts: WellKnownOptions<P>): Router {
  const router = Router();
  const publisher = typeof opts.publisher === 'function' ? opts.publisher : ((p) => () => p)(opts.publisher);
  const maxAge = opts.maxAgeSeconds ?? 300;
  const pub = `public, max-age=${maxAge}`;
  router.get(WELL_KNOWN_CARD_PATH, (req, res) => serve(req, res, publisher().primary.publicCard, pub));
  router.get(WELL_KNOWN_JWKS_PATH, (req, res) => serve(req, res, publisher().jwks, pub, 'application/jwk-set+json'));
  router.get(agentCardPath(':slug'), (req, res, next) => {
    const card = publisher().card(String(req.params.slug));
    if (!card) return next();
    serve(req, res, card.publicCard, pub);
  });
  // A2A HTTP+JSON binding path; the JSON-RPC GetExtendedAgentCard uses extendedCardFor().
  router.get('/extendedAgentCard', extendedCardHandler(opts, () => publisher().primary));
  router.get('/agents/:slug/extendedAgentCard', extendedCardHandler(opts, (req) => publisher().card(String(req.params.slug))));
  return router;
}

/** An express handler serving the extended card of the card chosen by `pick`, for authenticated callers only. */
export function extendedCardHandler<P>(
  opts: Pick<WellKnownOptions<P>, 'authenticate'>,
  pick: (req: Request) => PublishedCard | undefined,
): RequestHandler {
  return async (req, res, next) => {
    try {
      const card = pick(req);
      if (!card) return next();
      const principal = await opts.authenticate(req);
      const doc = extendedCardFor(card, principal);
      res.setHeader('Vary', 'Authorization');
      serve(req, res, doc, 'private, no-cache');
    } catch (err) {
      next(err);
    }
  };
}

/**
 * The extended card for an (already authenticated) principal, for the A2A
 * GetExtendedAgentCard operation on any binding. Throws
 * authentication_required without a principal, unsupported when the card
 * declares no extended form (A2A §3.3.4 UnsupportedOperationError).
 */
export function extendedCardFor(card: PublishedCard, principal: unknown): PublishedCardForm {
  if (principal === undefined || principal === null) {
    throw new BatonError('authentication_required', 'the extended Agent Card requires an authenticated caller');
  }
  if (!card.extendedCard) throw new BatonError('unsupported', 'this agent declares no extended Agent Card');
  return card.extendedCard;
}

/** Sends one immutable document with its validators, answering conditional requests with 304. */
export function serveDocument(req: Request, res: Response, doc: PublishedDocument, cacheControl: string, type = 'application/json'): void {
  serve(req, res, doc, cacheControl, type);
}

function serve(req: Request, res: Response, doc: PublishedDocument, cacheControl: string, type = 'application/json'): void {
  res.setHeader('ETag', doc.etag);
  res.setHeader('Last-Modified', doc.lastModified.toUTCString());
  res.setHeader('Cache-Control', cacheControl);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  if (notModified(req, doc)) {
    res.status(304).end();
    return;
  }
  res.status(200).type(type).setHeader('Content-Length', String(doc.bytes.byteLength));
  res.end(req.method === 'HEAD' ? undefined : doc.bytes);
}

// RFC 9110 §13.1.2 (weak comparison for If-None-Match) and §13.1.3; §13.2.2 order.
function notModified(req: Request, doc: PublishedDocument): boolean {
  const inm = req.headers['if-none-match'];
  if (inm !== undefined) {
    const strip = (t: string) => t.trim().replace(/^W\//, '');
    return inm.trim() === '*' || inm.split(',').some((t) => strip(t) === strip(doc.etag));
  }
  const ims = req.headers['if-modified-since'];
  if (ims === undefined) return false;
  const since = Date.parse(ims);
  return !Number.isNaN(since) && doc.lastModified.getTime() <= since;
}
