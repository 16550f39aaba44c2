/**
 * The push secret: one 32-byte key per deployment, from BATON_PUSH_SECRET or
 * a 0600 file beside the signing keys (generated on first start, never in
 * git). Two subkeys are derived from it with HKDF so neither use can be
 * turned into the other: one seals integrators' webhook credentials at rest
 * (AES-256-GCM, bound to the row they belong to), one mints the per-task
 * token Baton gives delegatees for its inbound webhook (HMAC, so every
 * gateway process sharing the secret accepts it and nothing is stored).
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { storageError } from '../errors.ts';

const VERSION = 'v1';

export class SecretBox {
  private readonly sealKey: Buffer;
  private readonly tokenKey: Buffer;

  constructor(secret: Uint8Array) {
    if (secret.length < 32) throw new TypeError('the push secret must be at least 32 bytes');
    this.sealKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'baton push credentials v1', 32));
    this.tokenKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'baton inbound webhook token v1', 32));
  }

  /**
   * Loads the secret: `BATON_PUSH_SECRET` (base64url, ≥ 32 bytes) when set,
   * else `<keysDir>/push-secret`, created with fresh random bytes if absent.
   */
  static async open(keysDir: string, env: NodeJS.ProcessEnv = process.env): Promise<SecretBox> {
    const fromEnv = env.BATON_PUSH_SECRET;
    if (fromEnv) return new SecretBox(Buffer.from(fromEnv, 'base64url'));
    const file = join(keysDir, 'push-secret');
    try {
      return new SecretBox(Buffer.from((await readFile(file, 'utf8')).trim(), 'base64url'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw storageError('push secret file is unreadable', { file }, err);
    }
    await createOnce(file, `${randomBytes(32).toString('base64url')}\n`);
    return new SecretBox(Buffer.from((await readFile(file, 'utf8')).trim(), 'base64url'));
  }

  /** Encrypts `plain`; `context` (e.g. task and config ids) must be given again to open it. */
  seal(plain: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.sealKey, iv);
    cipher.setAAD(Buffer.from(context));
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64url'), ct.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
  }

  /** Decrypts a sealed value; storage_error if it was tampered with or sealed for another context. */
  open(sealed: string, context: string): string {
    const [v, iv, ct, tag] = sealed.split('.');
    if (v !== VERSION || iv === undefined || ct === undefined || tag === undefined) throw storageError('sealed push credential has an unknown format');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.sealKey, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
    } catch (cause) {
      throw storageError('sealed push credential does not open', {}, cause);
    }
  }

  /** The token a delegatee must present when it notifies Baton about `taskId`. */
  inboundToken(taskId: string): string {
    return createHmac('sha256', this.tokenKey).update(taskId).digest('base64url');
  }

  /** Constant-time check of a presented inbound token. */
  inboundTokenMatches(taskId: string, presented: string | undefined): boolean {
    if (presented === undefined) return false;
    const want = Buffer.from(this.inboundToken(taskId));
    const got = Buffer.from(presented);
    return got.length === want.length && timingSafeEqual(got, want);
  }
}

/**
 * Creates `file` with `content` unless it exists, and never lets it be seen
 * half-written: the content goes to a private temporary file that is then
 * hard-linked into place, which fails if another process got there first
 * (its secret wins; ours is dropped). Creating the file itself exclusively
 * ('wx') made it visible empty until the write landed, and a process starting
 * alongside read it then (CI: "push secret file is unreadable").
 */
async function createOnce(file: string, content: string): Promise<void> {
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, content, { mode: 0o600, flag: 'wx' });
    await link(tmp, file).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  } catch (err) {
    throw storageError('cannot create the push secret file', { file }, err);
  } finally {
    await unlink(tmp).catch(() => {});
  }
}
