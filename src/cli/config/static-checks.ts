/**
 * The checks `serve` runs before it starts and `baton config check` runs
 * first: everything knowable from the configuration and the file system
 * alone. Each returns problems; none throws.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { readConfig, resolvedPaths, type Config, type ConfigIssue } from '../../config.ts';
import { error, warning, type Problem } from './problems.ts';
import { approvalProblems } from '../../gates/check.ts';

/** Reads and validates the configuration; `config` is set only when it parsed. */
export function checkStatic(opts: { file?: string; env?: NodeJS.ProcessEnv } = {}): { config?: Config; source: string; problems: Problem[] } {
  const r = readConfig(opts);
  const source = r.file ?? '(defaults and environment)';
  if (!r.ok) return { source, problems: r.issues.map(schemaProblem) };
  return { config: r.config, source, problems: [...duplicateIds(r.config), ...missingPresets(r.config), ...cardUrls(r.config), ...files(r.config), ...approvalProblems(r.config).map((p) => error(p.path, p.message, p.hint))] };
}

function schemaProblem(i: ConfigIssue): Problem {
  if (i.path === '(file)') return error('(file)', i.message, 'pass an existing YAML or JSON file with --config, or set BATON_CONFIG');
  if (i.message.startsWith('Unrecognized key')) return error(i.path, 'unknown key', 'remove it or fix its spelling (see the Configuration section of the README)');
  if (i.message === 'Invalid URL') return error(i.path, 'not an absolute URL', 'write scheme, host and path, e.g. https://agent.example/.well-known/agent-card.json');
  return error(i.path, i.message);
}

function duplicateIds(c: Config): Problem[] {
  const lists: Array<[string, ReadonlyArray<{ id: string }>]> = [['delegatees', c.delegatees], ['callers', c.callers], ['presets', c.presets], ['operators', c.operators]];
  const out: Problem[] = [];
  for (const [name, items] of lists) {
    const first = new Map<string, number>();
    items.forEach((item, i) => {
      const seen = first.get(item.id);
      if (seen === undefined) first.set(item.id, i);
      else out.push(error(`${name}[${i}].id`, `duplicate id "${item.id}" (also ${name}[${seen}])`, 'ids must be unique; rename or remove one entry'));
    });
  }
  return out;
}

function missingPresets(c: Config): Problem[] {
  const ids = new Set(c.presets.map((p) => p.id));
  const named = c.callers.flatMap((caller, i) => [
    [`callers[${i}].preset`, caller.preset],
    [`callers[${i}].upstream.preset`, caller.upstream?.preset],
  ]);
  return named.flatMap(([at, id]) => (id !== undefined && !ids.has(id) ? [error(at!, `preset "${id}" is not defined`, `define it under presets, or use one of: ${[...ids].join(', ')}`)] : []));
}

function cardUrls(c: Config): Problem[] {
  return c.delegatees.flatMap((d, i) => {
    const scheme = new URL(d.cardUrl).protocol;
    return scheme === 'https:' || scheme === 'http:' ? [] : [error(`delegatees[${i}].cardUrl`, `card URL scheme ${scheme} is not http(s)`, 'Agent Cards are fetched over https (http with allowHttp)')];
  });
}

/** Files the gateway reads at boot: pinned JWKS, the JWT issuer's JWKS, upstream contract keys, the cards and keys directories. */
function files(c: Config): Problem[] {
  const out: Problem[] = [];
  for (const [origin, file] of Object.entries(c.trust.pinnedJwks)) out.push(...readable(`trust.pinnedJwks["${origin}"]`, file, 'file'));
  if (c.jwt) out.push(...readable('jwt.jwksFile', c.jwt.jwksFile, 'file'));
  c.callers.forEach((caller, i) => caller.upstream && out.push(...readable(`callers[${i}].upstream.contractJwksFile`, caller.upstream.contractJwksFile, 'file')));
  out.push(...readable('cardsDir', c.cardsDir, 'directory'));
  const keys = resolvedPaths(c).keys;
  if (c.keysDir !== undefined && !exists(keys)) out.push(warning('keysDir', `${keys} does not exist`, 'serve generates new development keys there; point keysDir at your keys if you have them'));
  else if (exists(keys)) out.push(...readable(c.keysDir !== undefined ? 'keysDir' : 'dataDir', keys, 'directory'));
  return out;
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

function readable(path: string, file: string, kind: 'file' | 'directory'): Problem[] {
  let isDir: boolean;
  try {
    isDir = statSync(file).isDirectory();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return [error(path, code === 'ENOENT' ? `${file} does not exist` : `${file} cannot be read (${code})`, 'fix the path; relative paths in a config file are resolved against the file\'s directory')];
  }
  if (isDir !== (kind === 'directory')) return [error(path, `${file} is not a ${kind}`, `it must name a ${kind}`)];
  try {
    accessSync(file, kind === 'directory' ? constants.R_OK | constants.X_OK : constants.R_OK);
  } catch {
    return [error(path, `${file} is not readable by this user`, 'fix its permissions or ownership')];
  }
  return [];
}
