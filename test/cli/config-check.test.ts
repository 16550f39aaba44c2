/**
 * `baton config check` and the same static checks at `serve`: every problem
 * with its path and hint, exit 1 on errors, warnings alone exit 0. Real
 * agents on loopback serve signed cards; the pinned JWKS is right or wrong.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../../e2e/agents/agent.ts';
import { loadConfig } from '../../src/config.ts';
import { baton } from './run.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-config-check-'));
const CARDS = join(process.cwd(), 'cards');
let a: RunningAgent;
let b: RunningAgent;

beforeAll(async () => {
  [a, b] = await Promise.all([startAgent({ behaviour: 'honest', name: 'agent-a' }), startAgent({ behaviour: 'honest', name: 'agent-b' })]);
  writeFileSync(join(dir, 'a.jwks.json'), JSON.stringify(a.jwks));
  writeFileSync(join(dir, 'b.jwks.json'), JSON.stringify(b.jwks));
});
afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
  rmSync(dir, { recursive: true, force: true });
});

/** Writes `lines` as a YAML config in the scratch dir and runs `baton config check` on it. */
function check(name: string, lines: string[], ...extra: string[]) {
  const file = join(dir, name);
  writeFileSync(file, [`cardsDir: ${CARDS}`, ...lines, ''].join('\n'));
  return baton(['config', 'check', '--config', file, ...extra], { BATON_CONFIG: '', BATON_LOG_LEVEL: 'silent' });
}

const delegatee = (id: string, agent: RunningAgent) => [`  - id: ${id}`, `    cardUrl: ${agent.url}/.well-known/agent-card.json`, '    allowHttp: true'];

describe('baton config check', () => {
  it('passes a config whose pinned JWKS verifies the live card; relative paths resolve against the file', async () => {
    const r = await check('good.yaml', ['port: 0', 'delegatees:', ...delegatee('a', a), 'trust:', '  pinnedJwks:', `    "${a.url}": ./a.jwks.json`]);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe(`${join(dir, 'good.yaml')}: ok`);
    expect(r.code).toBe(0);
  });

  it('says so when the pinned JWKS does not verify the delegatee card (rotated keys)', async () => {
    const r = await check('rotated.yaml', ['port: 0', 'delegatees:', ...delegatee('a', a), 'trust:', '  pinnedJwks:', `    "${a.url}": ./b.jwks.json`]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`error   trust.pinnedJwks["${a.url}"]: does not verify the current card of delegatee "a" (${a.url}/.well-known/agent-card.json)`);
    expect(r.stdout).toContain('hint: the agent may have rotated its keys: pin its current JWKS');
    expect(r.stdout).toContain('1 error, 0 warnings');
  });

  it('reports an unreachable card as a warning only (exit 0)', async () => {
    const r = await check('down.yaml', ['port: 0', 'delegatees:', '  - id: gone', '    cardUrl: http://127.0.0.1:1/.well-known/agent-card.json', '    allowHttp: true']);
    expect(r.stdout).toContain('warning delegatees[0].cardUrl: card not reachable: could not reach the card host');
    expect(r.stdout).toContain('0 errors, 1 warning');
    expect(r.code).toBe(0);
  });

  it('reports every static problem with its path and hint, without a stack trace', async () => {
    const r = await check('static.yaml', [
      'port: 0',
      'delegatees:', ...delegatee('a', a), '  - id: a', '    cardUrl: ftp://files.example/card.json',
      'callers:', '  - id: planner', '    preset: missing', '  - id: planner',
      'jwt:', '  issuer: https://idp.example', '  audience: baton', '  jwksFile: ./nowhere/jwks.json',
    ], '--offline');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n')).toEqual([
      'error   delegatees[1].id: duplicate id "a" (also delegatees[0])',
      '        hint: ids must be unique; rename or remove one entry',
      'error   callers[1].id: duplicate id "planner" (also callers[0])',
      '        hint: ids must be unique; rename or remove one entry',
      'error   callers[0].preset: preset "missing" is not defined',
      '        hint: define it under presets, or use one of: standard',
      'error   delegatees[1].cardUrl: card URL scheme ftp: is not http(s)',
      '        hint: Agent Cards are fetched over https (http with allowHttp)',
      `error   jwt.jwksFile: ${join(dir, 'nowhere/jwks.json')} does not exist`,
      "        hint: fix the path; relative paths in a config file are resolved against the file's directory",
      `${join(dir, 'static.yaml')}: 5 errors, 0 warnings`,
      '',
    ]);
  });

  it('names an upstream\'s local preset that is not defined (issue 25: the bounds its chains are clamped to)', async () => {
    const r = await check('upstream.yaml', [
      'port: 0',
      'callers:', '  - id: org-a', `    apiKeySha256: ${'a'.repeat(64)}`, '    upstream:', '      actorObjectId: actor_baton_a', '      contractJwksFile: ./a.jwks.json', '      preset: nope',
    ], '--offline');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('error   callers[0].upstream.preset: preset "nope" is not defined\n        hint: define it under presets, or use one of: standard');
  });

  it('names unknown keys and schema errors by path', async () => {
    const r = await check('schema.yaml', ['port: 0', 'colour: blue', 'push:', '  maxAttempts: 0']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('error   colour: unknown key\n        hint: remove it or fix its spelling');
    expect(r.stdout).toMatch(/error {3}push\.maxAttempts: Too small/);
    expect(r.stdout).not.toMatch(/\n\s+at /);
  });

  it('reports a port in use', async () => {
    const busy: Server = createServer();
    await new Promise<void>((res) => busy.listen(0, '127.0.0.1', res));
    try {
      const port = (busy.address() as AddressInfo).port;
      const r = await check('busy.yaml', [`port: ${port}`]);
      expect(r.code).toBe(1);
      expect(r.stdout).toContain(`error   port: cannot listen on 127.0.0.1:${port} (EADDRINUSE)`);
    } finally {
      busy.close();
    }
  });

  it('serve refuses to start with the same messages', async () => {
    const file = join(dir, 'serve.yaml');
    writeFileSync(file, [`cardsDir: ${CARDS}`, `dataDir: ./data-serve`, 'port: 0', 'callers:', '  - id: planner', '    preset: missing', ''].join('\n'));
    const r = await baton(['serve', '--config', file], { BATON_CONFIG: '', BATON_LOG_LEVEL: 'silent' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      [
        'error   callers[0].preset: preset "missing" is not defined',
        '        hint: define it under presets, or use one of: standard',
        `${file}: 1 error, 0 warnings`,
        'baton: not starting: the configuration has errors',
        '',
      ].join('\n'),
    );
  });
});

describe('loadConfig paths', () => {
  it('resolves relative paths from a file against its directory, and from the environment against the cwd', () => {
    const file = join(dir, 'paths.yaml');
    writeFileSync(file, ['dataDir: ./d', 'keysDir: k', 'store: { kind: sqlite, path: db/b.db }', 'trust: { pinnedJwks: { "https://x.example": x.json } }', 'cardsDir: /abs/cards', ''].join('\n'));
    const c = loadConfig({ file, env: { BATON_WELL_KNOWN_DIR: './wk' } });
    expect(c).toMatchObject({ dataDir: join(dir, 'd'), keysDir: join(dir, 'k'), store: { kind: 'sqlite', path: join(dir, 'db/b.db') }, cardsDir: '/abs/cards', wellKnownDir: './wk' });
    expect(c.trust.pinnedJwks).toEqual({ 'https://x.example': join(dir, 'x.json') });
  });
});
