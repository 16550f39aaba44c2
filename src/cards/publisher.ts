/**
 * Publishing Baton's own cards: load every source in cards/, build, sign with
 * every live key (rotation ⇒ several signatures), and freeze the exact bytes
 * that will be served or written to well-known/. Before anything is exposed,
 * each signed card is verified with the same verifier remote cards go
 * through, using only the published JWKS — the property an outside verifier
 * relies on.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { JWK } from 'jose';
import { invalidRequest } from '../errors.ts';
import { sha256Digest, type Digest } from '../records/digest.ts';
import type { JsonValue } from '../records/strict-json.ts';
import { systemClock, type Clock } from '../records/time.ts';
import type { Keyring } from '../keys/keyring.ts';
import type { AgentCardJson } from './a2a-card.ts';
import { buildCards } from './card-builder.ts';
import type { Rw003CardParams } from './extension.ts';
import { parseJwks } from './jwks.ts';
import { assertServable, servableForm } from './served-card.ts';
import { signCard } from './signer.ts';
import { loadCardSources, type CardSource } from './source.ts';
import { TrustStore } from './trust-store.ts';
import { verifyCardBytes, type CardForm } from './verify.ts';

/** URL paths (A2A §8.2 well-known URI; per-agent paths are Baton's). */
export const WELL_KNOWN_CARD_PATH = '/.well-known/agent-card.json';
export const WELL_KNOWN_JWKS_PATH = '/.well-known/jwks.json';
export const agentCardPath = (slug: string): string => `/.well-known/agent-cards/${slug}.json`;

/** One immutable served document: the exact bytes and their validators. */
export interface PublishedDocument {
  bytes: Buffer;
  /** Entity tag (A2A §8.6.1): strong over the bytes for the JWKS, weak over the signed payload for cards. */
  etag: string;
  lastModified: Date;
  digest: Digest;
}

export interface PublishedCardForm extends PublishedDocument {
  form: CardForm;
  card: AgentCardJson;
  /** sha256 of the §8.4.1 payload the signatures cover. */
  payloadDigest: Digest;
}

export interface PublishedCard {
  slug: string;
  primary: boolean;
  agentCardId: string;
  params: Rw003CardParams;
  publicCard: PublishedCardForm;
  /** Only for authenticated callers; never written to well-known/. */
  extendedCard?: PublishedCardForm;
}

export interface CardPublisher {
  readonly cards: readonly PublishedCard[];
  readonly primary: PublishedCard;
  readonly jwks: PublishedDocument;
  card(slug: string): PublishedCard | undefined;
  /** Writes the public cards and the JWKS into `dir`; returns the files written. */
  writeWellKnown(dir: string): Promise<string[]>;
}

export interface CardPublisherOptions {
  cardsDir: string;
  keyring: Keyring;
  publicUrl?: string;
  clock?: Clock;
}

/** Loads, validates, signs and self-verifies every card source. */
export async function loadCardPublisher(opts: CardPublisherOptions): Promise<CardPublisher> {
  const clock = opts.clock ?? systemClock;
  const now = clock.now();
  const base = opts.publicUrl?.replace(/\/+$/, '');
  const jwksUrl = base ? `${base}${WELL_KNOWN_JWKS_PATH}` : undefined;
  const keys = opts.keyring.signingKeys(now);
  const jwksJson = opts.keyring.jwks(now);
  // Last-Modified is the load instant for every document: any change (source edit,
  // rotation, retirement) needs a reload, so If-Modified-Since can never 304 a stale
  // key set — content timestamps alone miss a key leaving the set.
  const jwks = document(jwksJson, now);
  const trust = new TrustStore({ clock });
  const selfOrigin = base ?? 'https://baton.invalid';
  trust.pin(selfOrigin, await parseJwks(jwks.bytes));

  const sources = await loadCardSources(opts.cardsDir);
  if (sources.length === 0) throw new TypeError(`no card sources in ${opts.cardsDir}`);
  const primarySlug = choosePrimary(sources);
  const cards: PublishedCard[] = [];
  for (const source of sources) {
    const built = await buildCards(source, { publicUrl: base, jwksUrl, signingKeys: keys });
    const sign = async (built: { [key: string]: JsonValue }, form: CardForm) => {
      // The served form (served-card.ts): one signing payload under every §8.4.1 reading.
      const card = servableForm(built);
      assertServable(card);
      const signed = await signCard(card, keys, { jku: jwksUrl });
      const doc = document(signed, now);
      // Self-check through the remote-card verifier, trusting only the JWKS.
      const v = await verifyCardBytes({ bytes: doc.bytes, origin: selfOrigin, source: source.file, form }, { trust, clock });
      // ES256 signatures are randomised, so the bytes differ per process; the signed
      // content does not. A weak validator over the payload (which names the signer
      // keys) stays stable across restarts and nodes (RFC 9110 §8.8.1, A2A §8.6.1).
      return { ...{}, ...doc, etag: `W/"${v.payload_digest.slice(7, 39)}"`, form, card: v.card, payloadDigest: v.payload_digest };
    };
    cards.push({
      slug: source.slug,
      primary: source.slug === primarySlug,
      agentCardId: built.params.agent_card_id,
      params: built.params,
      publicCard: await sign(built.publicCard, 'public'),
      ...(built.extendedCard ? { extendedCard: await sign(built.extendedCard, 'extended') } : {}),
    });
  }
  assertUnique(cards);
  const primary = cards.find((c) => c.primary)!;
  return {
    cards,
    primary,
    jwks,
    card: (slug) => cards.find((c) => c.slug === slug),
    writeWellKnown: (dir) => writeWellKnown(dir, cards, primary, jwks),
  };
}

function choosePrimary(sources: readonly CardSource[]): string {
  if (sources.length === 1) return sources[0]!.slug;
  const flagged = sources.filter((s) => s.primary === true);
  if (flagged.length !== 1) throw invalidRequest('with several card sources exactly one must set primary: true', { count: flagged.length });
  return flagged[0]!.slug;
}

function assertUnique(cards: readonly PublishedCard[]): void {
  for (const key of ['slug', 'agentCardId'] as const) {
    const seen = new Set<string>();
    for (const c of cards) {
      if (seen.has(c[key])) throw invalidRequest(`two card sources share one ${key}`, { [key]: c[key] });
      seen.add(c[key]);
    }
  }
}

/** Serialises once; the ETag and digest name exactly these bytes. */
export function document(value: unknown, lastModified: Date): PublishedDocument {
  const bytes = Buffer.from(`${JSON.stringify(value, null, 2)}\n`, 'utf8');
  const digest = sha256Digest(bytes);
  // HTTP dates have one-second resolution (RFC 9110 §5.6.7).
  return { bytes, digest, etag: `"${digest.slice(7, 39)}"`, lastModified: new Date(Math.floor(lastModified.getTime() / 1000) * 1000) };
}

async function writeWellKnown(dir: string, cards: readonly PublishedCard[], primary: PublishedCard, jwks: PublishedDocument): Promise<string[]> {
  const files: Array<[string, Buffer]> = [
    [join(dir, 'agent-card.json'), primary.publicCard.bytes],
    [join(dir, 'jwks.json'), jwks.bytes],
    ...cards.map((c): [string, Buffer] => [join(dir, 'agent-cards', `${c.slug}.json`), c.publicCard.bytes]),
  ];
  for (const [file, bytes] of files) {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(`${file}.tmp`, bytes);
    await rename(`${file}.tmp`, file);
  }
  return files.map(([f]) => f);
}

/** The JWKS object a publisher serves, for callers that want it parsed. */
export function jwksOf(publisher: CardPublisher): { keys: JWK[] } {
  return JSON.parse(publisher.jwks.bytes.toString('utf8')) as { keys: JWK[] };
}
