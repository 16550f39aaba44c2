/**
 * Which pinned upstream key may vouch for a presented contract
 * (src/gateway/authority.ts pinnedSignerKeys): only the issuer's own
 * organisation's set, never a revoked kid (A2A §8.4.3); an expired key still
 * verifies what it signed while valid (contracts are re-verified every turn).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJwks, type KeySet } from '../../src/cards/jwks.ts';
import { pinnedSignerKeys } from '../../src/gateway/authority.ts';
import { Keyring } from '../../src/keys/keyring.ts';

let dir: string;
let keyring: Keyring;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'baton-pinned-signers-'));
  keyring = await Keyring.open(dir, { generate: true });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const issuer = (object_id: string) => ({ object_id, revision_id: 'rev_1', content_digest: `sha256:${'a'.repeat(64)}` });
const setOf = (extra: Record<string, unknown> = {}, keyExtra: Record<string, unknown> = {}): Promise<KeySet> =>
  parseJwks(JSON.stringify({ keys: keyring.jwks().keys.map((k) => ({ ...k, ...keyExtra })), ...extra }));

describe('pinnedSignerKeys', () => {
  it("resolves a kid only under the issuer's own organisation's set", async () => {
    const kid = keyring.current('ES256').kid;
    const resolve = pinnedSignerKeys(new Map([['actor_baton_a', await setOf()]]));
    expect(await resolve(kid, issuer('actor_baton_a'))).toBeDefined();
    expect(await resolve(kid, issuer('actor_baton_c'))).toBeUndefined();
    expect(await resolve('no-such-kid', issuer('actor_baton_a'))).toBeUndefined();
  });

  it('never resolves a kid the pinned set revokes', async () => {
    const kid = keyring.current('ES256').kid;
    const resolve = pinnedSignerKeys(new Map([['actor_baton_a', await setOf({ revoked_kids: [kid] })]]));
    expect(await resolve(kid, issuer('actor_baton_a'))).toBeUndefined();
  });

  it('still resolves a key past its exp: a contract it signed while valid stays verifiable', async () => {
    const kid = keyring.current('ES256').kid;
    const resolve = pinnedSignerKeys(new Map([['actor_baton_a', await setOf({}, { exp: 1 })]]));
    expect(await resolve(kid, issuer('actor_baton_a'))).toBeDefined();
  });
});
