/**
 * Baton's own signing keys. Private keys live in a directory outside git
 * (default ./data/keys, mode 0600) and never enter logs, errors or cards;
 * only the public halves are published as a JWKS. Several keys may be active
 * during a rotation; exactly one is the current signer per algorithm.
 */
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { z } from 'zod';
import { storageError } from '../errors.ts';
import type { SigningAlg, SigningKey, VerifyKey } from '../records/signature.ts';
import { sha256Digest } from '../records/digest.ts';

export interface KeyEntry {
  kid: string;
  alg: SigningAlg;
  createdAt: string;
  /** After this instant the key verifies nothing (rotation grace is over). */
  notAfter?: string;
  privateKey: SigningKey;
  publicKey: VerifyKey;
  publicJwk: JWK;
}

const StoredKey = z.strictObject({
  kid: z.string().min(1),
  alg: z.enum(['ES256', 'EdDSA']),
  createdAt: z.string(),
  notAfter: z.string().optional(),
  privateJwk: z.record(z.string(), z.unknown()),
});

export class Keyring {
  private constructor(
    readonly dir: string,
    private readonly entries: KeyEntry[],
  ) {}

  /** Loads every key in `dir`; generates one per algorithm when none exist yet. */
  static async open(dir: string, opts: { generate?: boolean } = {}): Promise<Keyring> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const ring = new Keyring(dir, []);
    for (const name of (await readdir(dir)).filter((n) => n.endsWith('.jwk.json')).sort()) {
      ring.entries.push(await loadKey(join(dir, name)));
    }
    if (opts.generate !== false) {
      for (const alg of ['ES256', 'EdDSA'] as const) if (!ring.entries.some((e) => e.alg === alg)) await ring.rotate(alg);
    }
    return ring;
  }

  /** Generates a new current key for `alg`; older keys stay published for verification. */
  async rotate(alg: SigningAlg): Promise<KeyEntry> {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true, crv: alg === 'EdDSA' ? 'Ed25519' : undefined });
    const publicJwk = await exportJWK(publicKey);
    const kid = `${alg.toLowerCase()}-${sha256Digest(JSON.stringify(publicJwk)).slice(7, 23)}`;
    const createdAt = new Date().toISOString();
    const stored = { kid, alg, createdAt, privateJwk: await exportJWK(privateKey) };
    const file = join(this.dir, `${createdAt.replace(/[:.]/g, '-')}-${kid}.jwk.json`);
    // Write-then-rename so a crash never leaves half a key behind.
    await writeFile(`${file}.tmp`, JSON.stringify(stored), { mode: 0o600 });
    await rename(`${file}.tmp`, file);
    const entry: KeyEntry = { kid, alg, createdAt, privateKey, publicKey, publicJwk: { ...publicJwk, kid, alg, use: 'sig' } };
    this.entries.push(entry);
    return entry;
  }

  /** The newest key for `alg` (default ES256). */
  current(alg: SigningAlg = 'ES256'): KeyEntry {
    const candidates = this.entries.filter((e) => e.alg === alg);
    const entry = candidates[candidates.length - 1];
    if (!entry) throw new TypeError(`no ${alg} key in keyring`);
    return entry;
  }

  all(): readonly KeyEntry[] {
    return this.entries;
  }

  /** Public JWKS of every key still valid for verification. */
  jwks(now = new Date()): { keys: JWK[] } {
    return { keys: this.entries.filter((e) => !e.notAfter || Date.parse(e.notAfter) > now.getTime()).map((e) => e.publicJwk) };
  }
}

async function loadKey(path: string): Promise<KeyEntry> {
  let stored: z.infer<typeof StoredKey>;
  try {
    stored = StoredKey.parse(JSON.parse(await readFile(path, 'utf8')));
  } catch (cause) {
    // Never echo file content: it is a private key.
    throw storageError('signing key file is unreadable', { file: path }, cause);
  }
  const privateJwk = stored.privateJwk as JWK;
  const { d: _d, ...pub } = privateJwk;
  const privateKey = (await importJWK(privateJwk, stored.alg)) as SigningKey;
  const publicKey = (await importJWK(pub, stored.alg)) as VerifyKey;
  const publicJwk: JWK = { ...pub, kid: stored.kid, alg: stored.alg, use: 'sig' };
  return { kid: stored.kid, alg: stored.alg, createdAt: stored.createdAt, notAfter: stored.notAfter, privateKey, publicKey, publicJwk };
}
