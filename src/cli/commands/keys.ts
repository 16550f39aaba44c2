/**
 * `baton keys list|rotate|retire`: manage the card-signing keys. Output names
 * kids, algorithms and validity only; private material never leaves the key
 * directory (RW-003 §4.1 signer: "private keys MUST NOT appear").
 */
import { Option, type Command } from 'commander';
import { resolvedPaths } from '../../config.ts';
import type { KeyEntry, Keyring } from '../../keys/keyring.ts';
import type { SigningAlg } from '../../records/signature.ts';
import type { CliContext } from '../context.ts';

export function register(program: Command, ctx: CliContext): void {
  const keys = program.command('keys').description('card-signing keys (ES256, EdDSA); private keys stay in the key directory');
  const open = async () => (await import('../../keys/keyring.ts')).Keyring.open(resolvedPaths(ctx.config()).keys);

  keys
    .command('list')
    .description('list keys: kid, alg, created, not-after, status')
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean }) => {
      const ring = await open();
      const rows = ring.all().map((k) => describe(k, ring));
      if (o.json) console.log(JSON.stringify(rows, null, 2));
      else for (const r of rows) console.log(`${r.kid}\t${r.alg}\t${r.created_at}\t${r.not_after ?? '-'}\t${r.status}`);
    });

  keys
    .command('rotate')
    .description('generate a new current key; older keys keep signing until retired')
    .addOption(new Option('--alg <alg>', 'algorithm').choices(['ES256', 'EdDSA']).default('ES256'))
    .action(async (o: { alg: SigningAlg }) => {
      const entry = await (await open()).rotate(o.alg);
      console.log(`new key ${entry.kid} (${entry.alg}); run "baton cards sign" to re-sign the cards`);
    });

  keys
    .command('retire <kid>')
    .description('end a key: it stops signing and leaves the JWKS after the grace period')
    .option('--grace <duration>', 'grace period, e.g. 0, 30m, 12h, 7d', '0')
    .action(async (kid: string, o: { grace: string }) => {
      const ring = await open();
      if (!ring.all().some((k) => k.kid === kid)) throw new TypeError(`no key ${kid} in the keyring`);
      const entry = await ring.retire(kid, new Date(Date.now() + parseGrace(o.grace)));
      console.log(`key ${entry.kid} retires at ${entry.notAfter}`);
    });
}

function describe(k: KeyEntry, ring: Keyring): { kid: string; alg: SigningAlg; created_at: string; not_after?: string; status: string } {
  const live = ring.signingKeys().includes(k);
  let current = false;
  try {
    current = ring.current(k.alg) === k;
  } catch {
    current = false;
  }
  const status = current ? 'current' : live ? (k.notAfter ? 'retiring' : 'signing') : 'retired';
  return { kid: k.kid, alg: k.alg, created_at: k.createdAt, ...(k.notAfter ? { not_after: k.notAfter } : {}), status };
}

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "0", "90s", "30m", "12h", "7d" → milliseconds. */
export function parseGrace(text: string): number {
  if (text === '0') return 0;
  const m = /^(\d{1,6})([smhd])$/.exec(text);
  if (!m) throw new TypeError(`bad duration ${JSON.stringify(text)} (use e.g. 30m, 12h, 7d)`);
  return Number(m[1]) * UNITS[m[2]!]!;
}
