/**
 * MCP callers with bearer tokens (issue #26; MCP authorization, RFC 9728):
 * each MCP endpoint serves its protected-resource metadata naming the
 * configured issuer, a refusal points at it, and a JWT from that issuer is
 * a caller like any other — the token proves who calls, never authority
 * (RW-003 §10): its tools are still its preset's.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Config } from '../src/config.ts';
import { digestOf } from '../src/records/digest.ts';
import { startGateway, type Gateway } from '../src/main.ts';
import { startNotesServer, type NotesServer } from './mcp/notes-server.ts';

const ISSUER = 'https://issuer.example';

describe('MCP behind Baton with OAuth bearer tokens', () => {
  let notes: NotesServer;
  let gw: Gateway;
  let dir: string;
  let key: CryptoKey;

  beforeAll(async () => {
    notes = await startNotesServer();
    dir = mkdtempSync(join(tmpdir(), 'baton-mcp-oauth-'));
    const pair = await generateKeyPair('ES256');
    key = pair.privateKey;
    writeFileSync(join(dir, 'issuer.jwks.json'), JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256' }] }));
    gw = await startGateway(
      Config.parse({
        port: 0,
        dataDir: dir,
        logLevel: 'silent',
        jwt: { issuer: ISSUER, audience: 'baton-mcp', jwksFile: join(dir, 'issuer.jwks.json') },
        callers: [{ id: 'planner', jwtSubject: 'planner-sub', preset: 'standard' }],
        presets: [{ id: 'standard', tools: ['notes/echo'] }],
        mcpServers: [
          {
            id: 'notes',
            url: notes.url,
            allowHttp: true,
            rw003: {
              attested_by: 'principal_baton_operator',
              agent_actor_ref: { object_id: 'actor_notes', revision_id: 'rev_1', content_digest: digestOf({ actor: 'notes' }) },
              accountable_operator: { operator_principal_ref: 'principal_notes_vendor', resolution: 'declared', evidence_ref: 'contract_2026_077', effective_from: '2026-01-01T00:00:00Z' },
            },
            tools: [{ name: 'echo', requireApproval: false }],
          },
        ],
      }),
    );
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    await notes?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const token = (sub: string, aud = 'baton-mcp') => new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(ISSUER).setAudience(aud).setSubject(sub).setIssuedAt().setExpirationTime('5m').sign(key);

  it('serves protected-resource metadata naming the resource and its issuer (RFC 9728)', async () => {
    const res = await fetch(`${gw.url}/.well-known/oauth-protected-resource/mcp/notes`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ resource: `${gw.url}/mcp/notes`, authorization_servers: [ISSUER], bearer_methods_supported: ['header'], resource_name: 'Baton MCP gateway: notes' });
    expect((await fetch(`${gw.url}/.well-known/oauth-protected-resource/mcp/elsewhere`)).status).toBe(404);
  });

  it('refuses a request without a token with a challenge that points at the metadata', async () => {
    const res = await fetch(`${gw.url}/mcp/notes`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }) });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${gw.url}/.well-known/oauth-protected-resource/mcp/notes"`);
    expect(((await res.json()) as { error: { data: { code: string } } }).error.data.code).toBe('authentication_required');
  });

  it('a token from the issuer for the audience is a caller: its preset decides the tools; a token for another audience is not', async () => {
    const c = new Client({ name: 'oauth-client', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp/notes`), { requestInit: { headers: { authorization: `Bearer ${await token('planner-sub')}` } } }));
    try {
      expect((await c.listTools()).tools.map((t) => t.name)).toEqual(['echo']);
      const r = (await c.callTool({ name: 'echo', arguments: { text: 'hi' } })) as { _meta: Record<string, { outcome: string }> };
      expect(r._meta['urn:baton:outcome:v2']!.outcome).toBe('succeeded');
    } finally {
      await c.close();
    }
    const other = new Client({ name: 'oauth-client', version: '1.0.0' });
    await expect(other.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp/notes`), { requestInit: { headers: { authorization: `Bearer ${await token('planner-sub', 'someone-else')}` } } }))).rejects.toMatchObject({ code: 401 });
  });
});
