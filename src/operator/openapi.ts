/**
 * The operator API as an OpenAPI 3.1 document, generated from ROUTE_DOCS and
 * its zod schemas (zod's JSON Schema output is 2020-12, OpenAPI 3.1's dialect).
 */
import { z } from 'zod';
import { VERSION } from '../version.ts';
import { ErrorBody, ROUTE_DOCS, type RouteDoc } from './route-docs.ts';

const schema = (t: z.ZodType): Record<string, unknown> => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(t, { target: 'draft-2020-12', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};

/** `/admin/breakers/:kind/:id/trip` → `/admin/breakers/{kind}/{id}/trip`. */
export const openApiPath = (expressPath: string): string => expressPath.replace(/:([A-Za-z_]+)/g, '{$1}');

export function operatorOpenApi(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [key, doc] of Object.entries(ROUTE_DOCS)) {
    const [method, path] = key.split(' ') as [string, string];
    (paths[openApiPath(path)] ??= {})[method.toLowerCase()] = operation(method, path, doc);
  }
  // The two documentation routes themselves: public, they describe routes and carry no data.
  const page = (summary: string, type: string) => ({ get: { operationId: summary.replace(/\W/g, ''), summary, security: [], responses: { '200': { description: 'OK', content: { [type]: { schema: {} } } } } } });
  paths['/admin/openapi.json'] = page('This document', 'application/json');
  paths['/admin/docs'] = page('Interactive reference page', 'text/html');
  return {
    openapi: '3.1.0',
    info: { title: 'Baton operator API', version: VERSION, description: 'Revocation, breakers, checkpoints, reassignment, escalations, push deliveries and audit. Every operation needs an operator API key.' },
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' }, bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { Error: schema(ErrorBody) },
    },
    security: [{ apiKey: [] }, { bearer: [] }],
    paths,
  };
}

function operation(method: string, path: string, doc: RouteDoc): Record<string, unknown> {
  const pathParams = [...path.matchAll(/:([A-Za-z_]+)/g)].map(([, name]) => ({ name, in: 'path', required: true, schema: schema(doc.params?.[name!] ?? z.string()) }));
  const queryParams = Object.entries(doc.query?.shape ?? {}).map(([name, t]) => ({ name, in: 'query', required: false, schema: schema(t as z.ZodType) }));
  const error = { description: 'ADR-0014 error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  return {
    operationId: `${method.toLowerCase()}${path.replace(/\/:?([a-z])/g, (_m, c: string) => c.toUpperCase()).replace(/[^A-Za-z]/g, '')}`,
    summary: doc.summary,
    ...(pathParams.length + queryParams.length > 0 ? { parameters: [...pathParams, ...queryParams] } : {}),
    ...(doc.body ? { requestBody: { required: true, content: { 'application/json': { schema: schema(doc.body) } } } } : {}),
    responses: { [String(doc.status ?? 200)]: { description: 'OK', content: { 'application/json': { schema: {} } } }, '400': error, '401': error, '403': error, '409': error, '500': error },
  };
}
