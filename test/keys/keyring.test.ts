import { mkdtemp, readdir, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseJwks } from '../../src/cards/jwks.ts';
import { Keyring } from '../../src/keys/keyring.ts';

const fresh = async () => Keyring.open(await mkdtemp(join(tmpdir(), 'baton-keys-')));

describe('keyring rotation and retirement', () => {
  it('generates ES256 and EdDSA keys in 0600 files; the JWKS holds only public halves', async () => {
    const ring = await fresh();
    expect(ring.all().map((k) => k.alg).sort()).toEqual(['ES256', 'EdDSA']);
    for (const name of await readdir(ring.dir)) expect((await stat(join(ring.dir, name))).mode & 0o777).toBe(0o600);
    const jwks = ring.jwks();
    expect(JSON.stringify(jwks)).not.toMatch(/"d":/);
    expect((await parseJwks(JSON.stringify(jwks))).keys.size).toBe(2);
  });

  it('rotation keeps the old key signing until it is retired; retirement publishes exp then removes the key', async () => {
    const ring = await fresh();
    const old = ring.current('ES256');
    const next = await ring.rotate('ES256');
    expect(ring.current('ES256').kid).toBe(next.kid);
    expect(ring.signingKeys().map((k) => k.kid)).toContain(old.kid);
    const graceEnd = new Date(Date.now() + 3_600_000);
    await ring.retire(old.kid, graceEnd);
    const during = ring.jwks();
    expect((during.keys.find((k) => k.kid === old.kid) as { exp?: number } | undefined)?.exp).toBe(Math.floor(graceEnd.getTime() / 1000));
    expect(ring.signingKeys().map((k) => k.kid)).toContain(old.kid);
    const after = new Date(graceEnd.getTime() + 1);
    expect(ring.jwks(after).keys.map((k) => k.kid)).not.toContain(old.kid);
    expect(ring.signingKeys(after).map((k) => k.kid)).not.toContain(old.kid);
    // Persisted: a second process sees the retirement too.
    const reopened = await Keyring.open(ring.dir);
    expect(reopened.all().find((k) => k.kid === old.kid)?.notAfter).toBe(graceEnd.toISOString());
    const file = (await readdir(ring.dir)).find((n) => n.includes(old.kid))!;
    expect(JSON.parse(await readFile(join(ring.dir, file), 'utf8')).notAfter).toBe(graceEnd.toISOString());
  });

  it('retiring the only key of an algorithm makes the next open generate a replacement', async () => {
    const ring = await fresh();
    const only = ring.current('EdDSA');
    await ring.retire(only.kid);
    expect(() => ring.current('EdDSA')).toThrow(TypeError);
    const reopened = await Keyring.open(ring.dir);
    expect(reopened.current('EdDSA').kid).not.toBe(only.kid);
  });
});
