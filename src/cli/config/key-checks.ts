/**
 * The key files and trust origins `serve` reads at boot, read the way the
 * gateway reads them (issue 25 item 8): a pinned JWKS that is not JSON, or
 * not a JWKS, is an error naming its file here, not a crash at start. Runs
 * in `config check` (also `--offline`) and before `serve`. A file the static
 * checks already found missing is not reported twice.
 */
import { readFile } from 'node:fs/promises';
import { parseJwks } from '../../cards/jwks.ts';
import { createDocumentFetcher, jwksFetcherOf } from '../../cards/fetch.ts';
import { originOf, TrustStore } from '../../cards/trust-store.ts';
import type { Config } from '../../config.ts';
import { authenticatorFor } from '../../operator/reload.ts';
import { error, type Problem } from './problems.ts';

const JWKS_HINT = 'a JWKS file (RFC 7517: {"keys":[…]}) with the public keys that sign the delegatee card at that origin';
const ORIGIN_HINT = 'write an origin: scheme, host and port, e.g. https://agent.example';

/** The problems, and the trust store the gateway would build from this configuration (pins that parsed). */
export async function checkKeys(c: Config, known: readonly Problem[]): Promise<{ problems: Problem[]; trust: TrustStore }> {
  const skip = new Set(known.map((p) => p.path));
  const problems: Problem[] = [];
  c.trust.jkuAllowedOrigins.forEach((o, i) => isOrigin(o) || problems.push(error(`trust.jkuAllowedOrigins[${i}]`, `"${o}" is not an absolute URL`, ORIGIN_HINT)));
  const trust = new TrustStore({ jkuAllowedOrigins: c.trust.jkuAllowedOrigins.filter(isOrigin), fetchJwks: jwksFetcherOf(createDocumentFetcher()) });
  for (const [origin, file] of Object.entries(c.trust.pinnedJwks)) {
    const path = `trust.pinnedJwks["${origin}"]`;
    if (!isOrigin(origin)) problems.push(error(path, `"${origin}" is not an absolute URL`, ORIGIN_HINT));
    else if (!skip.has(path)) await parseJwksFile(file).then((set) => trust.pin(origin, set), (err: unknown) => problems.push(error(path, `${file}: ${messageOf(err)}`, JWKS_HINT)));
  }
  for (const [i, caller] of c.callers.entries()) {
    const path = `callers[${i}].upstream.contractJwksFile`;
    if (caller.upstream && !skip.has(path)) await parseJwksFile(caller.upstream.contractJwksFile).catch((err: unknown) => problems.push(error(path, `${caller.upstream!.contractJwksFile}: ${messageOf(err)}`, "the upstream gateway's contract-signing JWKS")));
  }
  if (c.jwt && !skip.has('jwt.jwksFile')) await authenticatorFor(c).catch((err: unknown) => problems.push(error('jwt.jwksFile', `${c.jwt!.jwksFile}: ${messageOf(err)}`, "the JWT issuer's JWKS (JSON)")));
  return { problems, trust };
}

const parseJwksFile = async (file: string) => parseJwks(await readFile(file));

function isOrigin(url: string): boolean {
  try {
    originOf(url);
    return true;
  } catch {
    return false;
  }
}

// JSON.parse's own message quotes the start of the file: say what is wrong, never what is in it.
const messageOf = (err: unknown): string => (err instanceof SyntaxError ? 'not valid JSON' : err instanceof Error ? err.message : String(err));
