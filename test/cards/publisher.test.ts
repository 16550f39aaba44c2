import { mkdtemp, readdir, readFile, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadCardPublisher } from '../../src/cards/publisher.ts';
import { parseJwks } from '../../src/cards/jwks.ts';
import { loadCardSource } from '../../src/cards/source.ts';
import { TrustStore } from '../../src/cards/trust-store.ts';
import { verifyCardBytes } from '../../src/cards/verify.ts';
import { Keyring } from '../../src/keys/keyring.ts';
import { systemClock } from '../../src/records/time.ts';
import { expectCodeAsync } from '../helpers/errors.ts';

const REPO_CARDS = new URL('../../cards/', import.meta.url).pathname;
const PUBLIC_URL = 'https://baton.example';
let keyring: Keyring;

beforeAll(async () => {
  keyring = await Keyring.open(await mkdtemp(join(tmpdir(), 'baton-keys-')));
});

/** The repository's gateway card source as an object, to mutate per test. */
async function gatewaySource(): Promise<Record<string, unknown>> {
  const src = await loadCardSource(join(REPO_CARDS, 'gateway.yaml'));
  const { file: _f, modifiedAt: _m, ...rest } = src;
  return structuredClone(rest) as Record<string, unknown>;
}

async function dirWith(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-cards-'));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

describe('card sources and publisher', () => {
  it('publishes the repository gateway card: valid, signed by every live key, verifiable with only the JWKS', async () => {
    const p = await loadCardPublisher({ cardsDir: REPO_CARDS, keyring, publicUrl: PUBLIC_URL });
    expect(p.primary.slug).toBe('gateway');
    const card = p.primary.publicCard.card;
    expect(card.signatures).toHaveLength(keyring.signingKeys().length);
    expect(card.supportedInterfaces.map((i) => i.protocolBinding)).toEqual(['JSONRPC', 'HTTP+JSON']);
    expect(card.supportedInterfaces[0]!.url).toBe(`${PUBLIC_URL}/a2a/jsonrpc`);
    expect(card.capabilities.extendedAgentCard).toBe(true);
    expect(p.primary.params.signer.verification_method_ref).toBe(`${PUBLIC_URL}/.well-known/jwks.json`);
    const trust = new TrustStore();
    trust.pin(PUBLIC_URL, await parseJwks(p.jwks.bytes));
    for (const doc of [p.primary.publicCard, p.primary.extendedCard!]) {
      const v = await verifyCardBytes({ bytes: doc.bytes, origin: PUBLIC_URL, source: 'self' }, { trust, clock: systemClock });
      expect(v.verified_keys).toHaveLength(keyring.signingKeys().length);
    }
  });

  it('is stable across loads (same payload, revision and ETag despite randomised ES256) and the JWKS carries no private material', async () => {
    const a = await loadCardPublisher({ cardsDir: REPO_CARDS, keyring, publicUrl: PUBLIC_URL });
    const b = await loadCardPublisher({ cardsDir: REPO_CARDS, keyring, publicUrl: PUBLIC_URL });
    expect(a.primary.publicCard.payloadDigest).toBe(b.primary.publicCard.payloadDigest);
    expect(a.primary.publicCard.etag).toBe(b.primary.publicCard.etag);
    expect(a.primary.publicCard.etag).toMatch(/^W\/"[0-9a-f]{32}"$/);
    expect(a.jwks.etag).toBe(b.jwks.etag);
    expect(a.primary.params.revision_id).toBe(b.primary.params.revision_id);
    expect(a.jwks.bytes.toString()).not.toMatch(/"d"\s*:/);
  });

  it('keeps restricted (extended-only) fields off the public card', async () => {
    const p = await loadCardPublisher({ cardsDir: REPO_CARDS, keyring, publicUrl: PUBLIC_URL });
    expect(p.primary.extendedCard!.bytes.toString()).toContain('review_baton_gateway_internal_1');
    expect(p.primary.publicCard.bytes.toString()).not.toContain('review_baton_gateway_internal_1');
  });

  it('writes public cards and the JWKS to well-known, never the extended card', async () => {
    const p = await loadCardPublisher({ cardsDir: REPO_CARDS, keyring, publicUrl: PUBLIC_URL });
    const out = await mkdtemp(join(tmpdir(), 'baton-wk-'));
    await p.writeWellKnown(out);
    expect((await readdir(out)).sort()).toEqual(['agent-card.json', 'agent-cards', 'jwks.json']);
    expect(await readFile(join(out, 'agent-card.json'))).toEqual(p.primary.publicCard.bytes);
    expect(await readdir(join(out, 'agent-cards'))).toEqual(['gateway.json']);
  });

  it('needs publicUrl when a source uses {publicUrl}', async () => {
    await expect(loadCardPublisher({ cardsDir: REPO_CARDS, keyring })).rejects.toThrow(TypeError);
  });

  describe('secrets in a card source are rejected', () => {
    const cases: Array<[string, (s: Record<string, unknown>) => void]> = [
      ['bearer token', (s) => ((s.card as Record<string, unknown>).description = 'use Authorization: Bearer eyJhbGciOiJIUzI1NiJ9abcdefgh')],
      ['PEM private key', (s) => ((s.card as Record<string, unknown>).description = '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49\n-----END PRIVATE KEY-----')],
      ['JWK with d', (s) => ((s.card as Record<string, unknown>).iconKey = { kty: 'EC', crv: 'P-256', x: 'a', y: 'b', d: 'c' })],
      ['client_secret member', (s) => ((s.extended as Record<string, unknown>).extension_params = { client_secret: 'hunter2hunter2' })],
    ];
    for (const [name, mutate] of cases) {
      it(name, async () => {
        const src = await gatewaySource();
        mutate(src);
        const dir = await dirWith({ 'gateway.yaml': stringify(src) });
        const e = await expectCodeAsync(loadCardPublisher({ cardsDir: dir, keyring, publicUrl: PUBLIC_URL }), 'invalid_request');
        expect(e.message).toMatch(/credential material/);
        expect(JSON.stringify(e.toJSON())).not.toMatch(/hunter2|MIGHAgEA|eyJhbGci/);
      });
    }
  });

  it('rejects duplicate keys in JSON and YAML sources', async () => {
    const yamlDup = await dirWith({ 'a.yaml': 'slug: a\nslug: b\ncard: {}\n' });
    await expectCodeAsync(loadCardPublisher({ cardsDir: yamlDup, keyring, publicUrl: PUBLIC_URL }), 'invalid_request');
    const jsonDup = await dirWith({ 'a.json': '{"card":{},"card":{}}' });
    await expectCodeAsync(loadCardPublisher({ cardsDir: jsonDup, keyring, publicUrl: PUBLIC_URL }), 'invalid_request');
  });

  it('rejects an invalid A2A card, a missing RW-003 extension, and unknown fields in sources', async () => {
    const noSkills = await gatewaySource();
    (noSkills.card as Record<string, unknown>).skills = [];
    const noExt = await gatewaySource();
    ((noExt.card as Record<string, Record<string, unknown>>).capabilities!).extensions = [];
    const typo = await gatewaySource();
    (typo.card as Record<string, unknown>).protocolVersion = '1.0'; // v0.3 top-level field
    for (const src of [noSkills, noExt, typo]) {
      const dir = await dirWith({ 'gateway.json': JSON.stringify(src) });
      await expectCodeAsync(loadCardPublisher({ cardsDir: dir, keyring, publicUrl: PUBLIC_URL }), 'invalid_request');
    }
  });

  it('serves several agents: exactly one primary, unique slugs', async () => {
    const a = await gatewaySource();
    const b = await gatewaySource();
    b.slug = 'second';
    b.primary = false;
    const params = (((b.card as Record<string, Record<string, unknown>>).capabilities!.extensions as Array<Record<string, Record<string, unknown>>>)[0]!).params!;
    params.agent_card_id = 'card_second';
    const dir = await dirWith({ 'a.yaml': stringify(a), 'b.yaml': stringify(b) });
    const p = await loadCardPublisher({ cardsDir: dir, keyring, publicUrl: PUBLIC_URL });
    expect(p.cards.map((c) => [c.slug, c.primary])).toEqual([['gateway', true], ['second', false]]);
    b.primary = true;
    const two = await dirWith({ 'a.yaml': stringify(a), 'b.yaml': stringify(b) });
    await expectCodeAsync(loadCardPublisher({ cardsDir: two, keyring, publicUrl: PUBLIC_URL }), 'invalid_request');
    const same = await dirWith({ 'a.yaml': stringify(a), 'b.yaml': stringify({ ...a, primary: false, slug: 'gateway2' }) });
    await expectCodeAsync(loadCardPublisher({ cardsDir: same, keyring, publicUrl: PUBLIC_URL }), 'invalid_request');
  });

  it('signs a continuity attestation when a source declares an actor change', async () => {
    const src = await gatewaySource();
    src.continuity = { prior_agent_actor_ref: { object_id: 'actor_old', revision_id: 'rev_old', content_digest: `sha256:${'3'.repeat(64)}` } };
    const dir = await dirWith({ 'gateway.yaml': stringify(src) });
    await mkdir(dir, { recursive: true });
    const p = await loadCardPublisher({ cardsDir: dir, keyring, publicUrl: PUBLIC_URL });
    expect(p.primary.params.continuity?.prior_agent_actor_ref.object_id).toBe('actor_old');
  });
});
