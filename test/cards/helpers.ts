/** Test-time keys, cards and servers for the card tests. Keys are generated per run. */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { parseJwks } from '../../src/cards/jwks.ts';
import { signCard, type CardSigningKey } from '../../src/cards/signer.ts';
import { TrustStore, type TrustStoreOptions } from '../../src/cards/trust-store.ts';
import type { JsonValue } from '../../src/records/strict-json.ts';
import type { SigningAlg } from '../../src/records/signature.ts';

export type JsonObject = { [key: string]: JsonValue };

export const ORIGIN = 'https://extractor.example';
export const FIXTURES = new URL('../fixtures/cards/', import.meta.url);

export interface TestKey extends CardSigningKey {
  jwk: JWK;
}

let counter = 0;
/** A fresh key pair; the kid is unique within the run. */
export async function testKey(alg: SigningAlg = 'ES256', kid = `${alg.toLowerCase()}-test-${++counter}`): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true, crv: alg === 'EdDSA' ? 'Ed25519' : undefined });
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** JWKS bytes for `keys`, with optional extra members per key or on the set. */
export function jwksBytes(keys: readonly TestKey[], extra: { perKey?: Record<string, JsonObject>; set?: JsonObject } = {}): Uint8Array {
  const doc = { keys: keys.map((k) => ({ ...k.jwk, ...(extra.perKey?.[k.kid] ?? {}) })), ...(extra.set ?? {}) };
  return Buffer.from(JSON.stringify(doc));
}

/** Trust store with `keys` pinned for `origin`. */
export async function trustFor(keys: readonly TestKey[], opts: TrustStoreOptions & { origin?: string; jwks?: Uint8Array } = {}): Promise<TrustStore> {
  const store = new TrustStore(opts);
  store.pin(opts.origin ?? ORIGIN, await parseJwks(opts.jwks ?? jwksBytes(keys)));
  return store;
}

/** The fixture remote card, with RW-003 signer.keys declaring `declared`. */
export function remoteCard(declared: readonly TestKey[]): JsonObject {
  const card = JSON.parse(readFileSync(new URL('remote-card.json', FIXTURES), 'utf8')) as JsonObject;
  const params = rw003Params(card);
  (params.signer as JsonObject).keys = declared.map((k) => ({ algorithm: k.alg, key_id: k.kid, valid_from: '2025-01-01T00:00:00Z' }));
  return card;
}

/** The RW-003 params object inside a card (mutable). */
export function rw003Params(card: JsonObject): JsonObject {
  const exts = (card.capabilities as JsonObject).extensions as JsonObject[];
  return exts[0]!.params as JsonObject;
}

/** Signs and serialises a card the way a remote publisher would. */
export async function signedBytes(card: JsonObject, keys: readonly TestKey[], opts: { jku?: string } = {}): Promise<Uint8Array> {
  return Buffer.from(JSON.stringify(await signCard(card, keys, opts)));
}

/** Parses bytes back to an object (tests only; production never uses JSON.parse on cards). */
export function parse(bytes: Uint8Array): JsonObject {
  return JSON.parse(Buffer.from(bytes).toString('utf8')) as JsonObject;
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A real HTTP server on 127.0.0.1, port 0. */
export async function loopbackServer(handler: Handler): Promise<{ url: string; server: Server; hits: () => number; close(): Promise<void> }> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits++;
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    hits: () => hits,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
