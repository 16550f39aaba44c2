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
      for (const alg of ['ES256', 'EdDSA'] as const) if (!ring.entries.some((e) => e.alg === alg && e.notAfter === undefined)) await ring.rotate(alg);
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
    await writeAtomic(file, stored);
    const entry: KeyEntry = { kid, alg, createdAt, privateKey, publicKey, publicJwk: { ...{}, ...publicJwk, kid, alg, use: 'sig' } };
    this.entries.push(entry);
    return entry;
  }

  /** The newest key for `alg` (default ES256) that is not retired. */
  current(alg: SigningAlg = 'ES256', now = new Date()): KeyEntry {
    const candidates = this.entries.filter((e) => e.alg === alg && isLive(e, now) && e.notAfter === undefined);
    const entry = candidates[candidates.length - 1];
    if (!entry) throw new TypeError(`no ${alg} key in keyring`);
    return entry;
  }

  all(): readonly KeyEntry[] {
    return this.entries;
  }

  /**
   * Keys that sign cards now: every key not past its `notAfter`. During a
   * rotation old and new keys both sign (A2A §8.4.3 "Multiple signatures MAY
   * be present to support key rotation"), so a verifier that pinned either
   * set still verifies; `retire` ends the old key's grace period.
   */
  signingKeys(now = new Date()): readonly KeyEntry[] {
    return this.entries.filter((e) => isLive(e, now));
  }

  /**
   * Public JWKS of every key still valid for verification. A retiring key
   * carries `exp` (RFC 7519 NumericDate; RFC 7517 §4 lets verifiers ignore
   * members they do not understand) so remote verifiers know when to stop.
   */
  jwks(now = new Date()): { keys: JWK[] } {
    return {
      keys: this.signingKeys(now).map((e) =>
        e.notAfter ? { ...{}, ...e.publicJwk, exp: Math.floor(Date.parse(e.notAfter) / 1000) } : e.publicJwk,
      ),
    };
  }

  /**
   * Ends a key's life at `notAfter` (default: now, i.e. revoke). Recorded in
   * the key file so every process sees it; the key is neither published nor
   * used for signing afterwards. An earlier existing `notAfter` is kept.
   */
  async retire(kid: string, notAfter = new Date()): Promise<KeyEntry> {
    const entry = this.entries.find((e) => e.kid === kid);
    if (!entry) throw new TypeError(`no key ${kid} in keyring`);
    const at = entry.notAfter && Date.parse(entry.notAfter) < notAfter.getTime() ? entry.notAfter : notAfter.toISOString();
    const file = join(this.dir, (await readdir(this.dir)).find((n) => n.endsWith(`-${kid}.jwk.json`)) ?? '');
    const stored = await readStored(file);
    await writeAtomic(file, { ...{}, ...stored, notAfter: at });
    entry.notAfter = at;
    return entry;
  }
}

function isLive(e: KeyEntry, now: Date): boolean {
  return e.notAfter === undefined || Date.parse(e.notAfter) > now.getTime();
}

async function readStored(path: string): Promise<z.infer<typeof StoredKey>> {
  try {
    return StoredKey.parse(JSON.parse(await readFile(path, 'utf8')));
  } catch (cause) {
    // Never echo file content: it is a private key.
    throw storageError('signing key file is unreadable', { file: path }, cause);
  }
}

// Write-then-rename so a crash never leaves half a key behind; 0600 because it is private.
async function writeAtomic(file: string, stored: z.infer<typeof StoredKey>): Promise<void> {
  await writeFile(`${file}.tmp`, JSON.stringify(stored), { mode: 0o600 });
  await rename(`${file}.tmp`, file);
}

async function loadKey(path: string): Promise<KeyEntry> {
  const stored = await readStored(path);
  const privateJwk = stored.privateJwk as JWK;
  const { d: _d, ...pub } = privateJwk;
  const privateKey = (await importJWK(privateJwk, stored.alg)) as SigningKey;
  const publicKey = (await importJWK(pub, stored.alg)) as VerifyKey;
  const publicJwk: JWK = { ...{}, ...pub, kid: stored.kid, alg: stored.alg, use: 'sig' };
  return { kid: stored.kid, alg: stored.alg, createdAt: stored.createdAt, notAfter: stored.notAfter, privateKey, publicKey, publicJwk };
}
