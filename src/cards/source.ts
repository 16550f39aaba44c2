/**
 * Card sources in cards/ (YAML or JSON): one file per agent the gateway
 * publishes. A source holds the public A2A card and, optionally, what only
 * authenticated callers may see (A2A §3.1.11 GetExtendedAgentCard). Because
 * the public card is built from `card` alone, restricted additions cannot
 * reach it (RW-003 §10.3 "MUST NOT leak restricted card fields").
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { invalidRequest } from '../errors.ts';
import { summariseIssues } from '../records/envelope.ts';
import { ActorRef } from '../records/revision-ref.ts';
import { parseStrictJson } from '../records/strict-json.ts';
import { assertNoSecrets } from './secrets.ts';

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

export const CardSourceFile = z.strictObject({
  /** Path segment for per-agent URLs; defaults to the file name. */
  slug: z.string().regex(SLUG).optional(),
  /** The card served at /.well-known/agent-card.json when several exist. */
  primary: z.boolean().optional(),
  card: z.record(z.string(), z.unknown()),
  extended: z
    .strictObject({
      description: z.string().min(1).max(8192).optional(),
      /** Skills only authenticated callers learn about, appended to the public ones. */
      skills: z.array(z.record(z.string(), z.unknown())).min(1).max(256).optional(),
      /** RW-003 params members replaced (shallow) in the extended card. */
      extension_params: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
  /** Declares an agent_actor_ref change; the publisher signs the attestation (RW-003 §4.3). */
  continuity: z.strictObject({ prior_agent_actor_ref: ActorRef }).optional(),
});
export type CardSourceFile = z.infer<typeof CardSourceFile>;

export interface CardSource extends CardSourceFile {
  slug: string;
  file: string;
  modifiedAt: Date;
}

/** Loads every *.yaml, *.yml and *.json file in `dir`, sorted by name. */
export async function loadCardSources(dir: string): Promise<CardSource[]> {
  const names = (await readdir(dir)).filter((n) => ['.yaml', '.yml', '.json'].includes(extname(n))).sort();
  const out: CardSource[] = [];
  for (const name of names) out.push(await loadCardSource(join(dir, name)));
  return out;
}

/** Loads one source: strict parse (duplicate keys refused), secret scan, then shape. */
export async function loadCardSource(file: string): Promise<CardSource> {
  const [bytes, info] = await Promise.all([readFile(file), stat(file)]);
  const value = parseSourceBytes(bytes, file);
  // Scan before validation: a zod issue must not be the place a secret gets echoed.
  assertNoSecrets(value, `card source ${basename(file)}`);
  const parsed = CardSourceFile.safeParse(value);
  if (!parsed.success) throw invalidRequest('card source is malformed', { file: basename(file), issues: summariseIssues(parsed.error) });
  const slug = parsed.data.slug ?? basename(file, extname(file)).toLowerCase();
  if (!SLUG.test(slug)) throw invalidRequest('card source file name is not a valid slug', { file: basename(file) });
  return { ...{}, ...parsed.data, slug, file, modifiedAt: info.mtime };
}

function parseSourceBytes(bytes: Uint8Array, file: string): unknown {
  if (extname(file) === '.json') return parseStrictJson(bytes);
  try {
    // yaml refuses duplicate keys by default (uniqueKeys); the core schema yields plain JSON values.
    return parseYaml(Buffer.from(bytes).toString('utf8'), { schema: 'core', uniqueKeys: true, maxAliasCount: 0 });
  } catch {
    // No cause: yaml's messages quote the offending source line, which may be a secret.
    throw invalidRequest('card source is not valid YAML', { file: basename(file) });
  }
}
