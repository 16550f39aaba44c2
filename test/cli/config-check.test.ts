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
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { startAgent, type RunningAgent } from '../../e2e/agents/agent.ts';
import { buildCard, cardJson } from '../../e2e/agents/card.ts';
import { signAgentCard } from '../../e2e/agents/signed-card.ts';
import type { JsonValue } from '../../src/records/strict-json.ts';
import { loadConfig } from '../../src/config.ts';
import { baton } from './run.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-config-check-'));
const CARDS = join(process.cwd(), 'cards');
let a: RunningAgent;
let b: RunningAgent;
let plain: RunningAgent;
/** Serves a correctly signed card whose endpoint is on another origin (127.0.0.2). */
let mover: HttpServer;
let moverUrl: string;

beforeAll(async () => {
  [a, b, plain] = await Promise.all([startAgent({ behaviour: 'honest', name: 'agent-a' }), startAgent({ behaviour: 'honest', name: 'agent-b' }), startAgent({ behaviour: 'honest', name: 'agent-plain', cardKind: 'plain' })]);
  writeFileSync(join(dir, 'a.jwks.json'), JSON.stringify(a.jwks));
  writeFileSync(join(dir, 'b.jwks.json'), JSON.stringify(b.jwks));
  writeFileSync(join(dir, 'plain.jwks.json'), JSON.stringify(plain.jwks));
  writeFileSync(join(dir, 'not-json.jwks.json'), 'keys: [] # YAML, not a JWKS');
  writeFileSync(join(dir, 'not-jwks.json'), JSON.stringify({ kty: 'EC' }));
  let body = '';
  mover = createHttpServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
  await new Promise<void>((r) => mover.listen(0, '127.0.0.1', r));
  moverUrl = `http://127.0.0.1:${(mover.address() as AddressInfo).port}`;
  const signed = await signAgentCard(cardJson(buildCard({ name: 'agent-mover', baseUrl: 'http://127.0.0.2:9' })) as { [key: string]: JsonValue }, 'agent-mover', moverUrl);
  body = JSON.stringify(signed.card);
  writeFileSync(join(dir, 'mover.jwks.json'), JSON.stringify(signed.jwks));
});
afterAll(async () => {
  await Promise.all([a.close(), b.close(), plain.close(), new Promise((r) => mover.close(r))]);
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

  it('reads pinned JWKS files even offline: not JSON, or not a JWKS, is an error naming the file (issue 25 item 8)', async () => {
    const r = await check('bad-jwks.yaml', ['port: 0', 'trust:', '  pinnedJwks:', `    "${a.url}": ./not-json.jwks.json`, `    "${b.url}": ./not-jwks.json`], '--offline');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`error   trust.pinnedJwks["${a.url}"]: ${join(dir, 'not-json.jwks.json')}: malformed JSON`);
    expect(r.stdout).toContain(`error   trust.pinnedJwks["${b.url}"]: ${join(dir, 'not-jwks.json')}: `);
    expect(r.stdout).toContain('hint: a JWKS file (RFC 7517');
    expect(r.stdout).toContain('2 errors, 0 warnings');
    // The JWT issuer's JWKS as the gateway reads it: named, and nothing of its contents echoed.
    writeFileSync(join(dir, 'secret.pem'), '-----BEGIN PRIVATE KEY-----\nnot for logs\n');
    const jwt = await check('bad-jwt.yaml', ['port: 0', 'jwt:', '  issuer: https://idp.example', '  audience: baton', '  jwksFile: ./secret.pem'], '--offline');
    expect(jwt.stdout).toContain(`error   jwt.jwksFile: ${join(dir, 'secret.pem')}: not valid JSON`);
    expect(jwt.stdout).not.toContain('BEGIN');
  });

  it('serve refuses a pinned JWKS that is not JSON, naming the setting and the file', async () => {
    const file = join(dir, 'serve-bad-jwks.yaml');
    writeFileSync(file, [`cardsDir: ${CARDS}`, 'dataDir: ./data-bad-jwks', 'port: 0', 'trust:', '  pinnedJwks:', `    "${a.url}": ./not-json.jwks.json`, ''].join('\n'));
    const r = await baton(['serve', '--config', file], { BATON_CONFIG: '', BATON_LOG_LEVEL: 'silent' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error   trust.pinnedJwks["${a.url}"]: ${join(dir, 'not-json.jwks.json')}: malformed JSON`);
    expect(r.stderr).toContain('baton: not starting: the configuration has errors');
  });

  it('a missing pinned JWKS file is one error, not two (also online)', async () => {
    const r = await check('missing-jwks.yaml', ['port: 0', 'delegatees:', ...delegatee('a', a), 'trust:', '  pinnedJwks:', `    "${a.url}": ./gone.json`]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`error   trust.pinnedJwks["${a.url}"]: ${join(dir, 'gone.json')} does not exist`);
    expect(r.stdout.match(/^error/gm)).toHaveLength(1);
  });

  it('an origin or URL that is not absolute gets a hint, and is found offline', async () => {
    const r = await check('urls.yaml', ['port: 0', 'delegatees:', '  - id: a', '    cardUrl: agent.example/card.json', 'trust:', '  pinnedJwks:', '    "agent.example": ./a.jwks.json'], '--offline');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('error   delegatees[0].cardUrl: not an absolute URL\n        hint: write scheme, host and path, e.g. https://agent.example/.well-known/agent-card.json');
    const o = await check('origins.yaml', ['port: 0', 'trust:', '  pinnedJwks:', '    "agent.example": ./a.jwks.json'], '--offline');
    expect(o.stdout).toContain('error   trust.pinnedJwks["agent.example"]: "agent.example" is not an absolute URL\n        hint: write an origin');
  });

  it('applies the gateway\'s own rules to each live card: every call would be refused, so it is an error', async () => {
    const r = await check('rules.yaml', [
      'port: 0',
      'delegatees:',
      ...delegatee('plain', plain),
      `  - id: mover`, `    cardUrl: ${moverUrl}/card.json`, '    allowHttp: true',
      `  - id: nohttp`, `    cardUrl: ${a.url}/.well-known/agent-card.json`,
      ...delegatee('unpinned', b),
      'trust:', '  pinnedJwks:', `    "${plain.url}": ./plain.jwks.json`, `    "${moverUrl}": ./mover.jwks.json`, `    "${a.url}": ./a.jwks.json`,
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('error   delegatees[0].rw003: every call to delegatee "plain" would be refused: delegatee card carries no RW-003 identity');
    expect(r.stdout).toContain('error   delegatees[1].endpointOrigins: every call to delegatee "mover" would be refused: delegatee card moves its endpoint off the pinned origin (http://127.0.0.2:9)');
    expect(r.stdout).toContain('error   delegatees[2].allowHttp: every call to delegatee "nohttp" would be refused: delegatee endpoint is not https');
    expect(r.stdout).toContain(`error   delegatees[3].cardUrl: the card of delegatee "unpinned" does not verify`);
    expect(r.stdout).toContain('4 errors, 0 warnings');
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
