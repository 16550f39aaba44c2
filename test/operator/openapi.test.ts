/**
 * The operator API's OpenAPI 3.1 document is generated from the router's own
 * schemas: every route the router registers is documented and every
 * documented route exists; the document and the reference page are served
 * on a real operator listener without a key, and the page loads nothing from
 * elsewhere.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Router } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Config } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { startGateway, type Gateway } from '../../src/main.ts';
import { openApiPath, operatorOpenApi } from '../../src/operator/openapi.ts';
import { operatorRouter } from '../../src/operator/router.ts';
import type { OperatorService } from '../../src/operator/service.ts';

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/** `METHOD /openapi/{path}` for every route in an express router, nested routers included. */
function registered(router: Router): string[] {
  const walk = (stack: Layer[]): string[] =>
    stack.flatMap((l) => (l.route ? Object.keys(l.route.methods).filter((m) => m !== '_all').map((m) => `${m.toUpperCase()} ${openApiPath(l.route!.path)}`) : l.handle?.stack ? walk(l.handle.stack) : []));
  return walk((router as unknown as { stack: Layer[] }).stack);
}

const documented = (doc: Record<string, unknown>) =>
  Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`));

describe('operator OpenAPI document', () => {
  it('documents exactly the routes the operator router registers', () => {
    const router = operatorRouter({ service: {} as OperatorService, operators: [], logger: createLogger({ level: 'silent' }) });
    const routes = registered(router);
    expect(routes.length).toBeGreaterThan(15);
    expect(routes).toContain('POST /admin/breakers/{kind}/{id}/trip');
    expect(documented(operatorOpenApi()).sort()).toEqual([...new Set(routes)].sort());
  });

  it('carries the zod schemas the router validates with', () => {
    const doc = operatorOpenApi() as { openapi: string; paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Record<string, unknown> }> }; parameters?: Array<{ name: string; schema: { enum?: string[] } }> }>> };
    expect(doc.openapi).toBe('3.1.0');
    const reassign = doc.paths['/admin/delegations/{id}/reassign']!.post!.requestBody!.content['application/json']!.schema;
    expect(reassign).toMatchObject({ type: 'object', required: ['to', 'reason'], additionalProperties: false });
    expect(Object.keys(reassign.properties as object)).toEqual(['to', 'reason', 'checkpoint', 'resolvePrevious']);
    const trip = doc.paths['/admin/breakers/{kind}/{id}/trip']!.post!;
    expect(trip.parameters!.find((p) => p.name === 'kind')!.schema.enum!.length).toBeGreaterThan(1);
    const deliveries = doc.paths['/admin/push/deliveries']!.get!;
    expect(deliveries.parameters!.find((p) => p.name === 'status')!.schema.enum).toEqual(['pending', 'delivering', 'delivered', 'dead']);
  });
});

describe('served on the operator listener', () => {
  let dir: string;
  let gw: Gateway;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'baton-openapi-'));
    const sha = createHash('sha256').update('openapi-operator-key-not-a-secret').digest('hex');
    gw = await startGateway(Config.parse({ port: 0, dataDir: dir, logLevel: 'silent', operators: [{ id: 'ops', apiKeySha256: sha }], admin: { port: 0 } }));
  });
  afterAll(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the document and the page without a key; operations still need one', async () => {
    const doc = await fetch(`${gw.adminUrl}/admin/openapi.json`);
    expect(doc.status).toBe(200);
    expect(await doc.json()).toEqual(JSON.parse(JSON.stringify(operatorOpenApi())));
    const page = await fetch(`${gw.adminUrl}/admin/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain("fetch('openapi.json')");
    expect(html).not.toMatch(/(src|href)=["']?(https?:)?\/\//);
    expect((await fetch(`${gw.adminUrl}/admin/trees`)).status).toBe(401);
  });
});
