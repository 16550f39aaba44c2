/** What `baton cards sign|verify` do (./cards.ts declares them): loaded when one of them runs, not when the CLI starts. */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { resolvedPaths } from '../../config.ts';
import { createDocumentFetcher, jwksFetcherOf } from '../../cards/fetch.ts';
import { parseJwks } from '../../cards/jwks.ts';
import { loadCardPublisher } from '../../cards/publisher.ts';
import { CardResolver } from '../../cards/resolver.ts';
import { originOf, TrustStore } from '../../cards/trust-store.ts';
import { parseCardJson, verifyCardBytes, type CardVerification } from '../../cards/verify.ts';
import { Keyring } from '../../keys/keyring.ts';
import { systemClock } from '../../records/time.ts';
import type { CliContext } from '../context.ts';

export interface VerifyOptions {
  jwks?: string;
  allowJku: string[];
  origin?: string;
  json?: boolean;
}

export async function signCards(ctx: CliContext, o: { out?: string }): Promise<void> {
  const config = ctx.config();
  const keyring = await Keyring.open(resolvedPaths(config).keys);
  const publisher = await loadCardPublisher({ cardsDir: config.cardsDir, keyring, publicUrl: config.publicUrl });
  const files = await publisher.writeWellKnown(resolve(o.out ?? config.wellKnownDir));
  for (const c of publisher.cards) {
    const kids = c.params.signer.keys.map((k) => k.key_id).join(', ');
    console.log(`${c.slug}${c.primary ? ' (primary)' : ''}: ${c.publicCard.digest} signed by ${kids}${c.extendedCard ? ' [+extended, not written]' : ''}`);
  }
  for (const f of files) console.log(`wrote ${f}`);
}

export async function verifyTarget(target: string, o: VerifyOptions, ctx: CliContext): Promise<CardVerification> {
  const config = ctx.config();
  const fetcher = createDocumentFetcher();
  const trust = await TrustStore.fromConfig(
    { pinnedJwks: config.trust.pinnedJwks, jkuAllowedOrigins: [...config.trust.jkuAllowedOrigins, ...o.allowJku] },
    { readFile: (p) => readFile(p), fetchJwks: jwksFetcherOf(fetcher) },
  );
  const isUrl = /^https?:\/\//i.test(target);
  const bytes = isUrl ? undefined : await readFile(target);
  const origin = o.origin ?? (isUrl ? originOf(target) : firstInterfaceOrigin(bytes!));
  if (o.jwks) trust.pin(origin, await parseJwks(await readFile(o.jwks)));
  if (isUrl) return new CardResolver({ fetch: fetcher, trust }).resolve(target);
  return verifyCardBytes({ bytes: bytes!, origin, source: resolve(target) }, { trust, clock: systemClock });
}

// Which origin a card file claims; its pinned keys must then have signed it.
function firstInterfaceOrigin(bytes: Uint8Array): string {
  const card = parseCardJson(bytes) as { supportedInterfaces?: Array<{ url?: unknown }> };
  const url = card.supportedInterfaces?.[0]?.url;
  if (typeof url !== 'string') throw new TypeError('card file names no interface URL; pass --origin');
  return originOf(url);
}
