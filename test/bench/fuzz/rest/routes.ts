/**
 * The routes to fuzz, read from the OpenAPI document the hub serves (`/api/v1/openapi.json`, made
 * by @fastify/swagger from the routes' TypeBox schemas), so a route added to the hub is fuzzed
 * without a change here. The probes, metrics and dashboard are hidden from the document and are
 * added by hand.
 */
import type { JsonSchema } from '../lib/schema-arbitrary.js';

export interface ParamSpec {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: JsonSchema;
}

export interface RouteSpec {
  method: string;
  /** OpenAPI template, e.g. `/api/v1/workloads/{id}`. */
  path: string;
  params: ParamSpec[];
  body: JsonSchema | undefined;
  /** The operation's own security schemes (absent: the document's default, the bearer token). */
  security?: string[];
}

interface OpenApiOperation {
  security?: Record<string, unknown>[];
  parameters?: { name: string; in: string; required?: boolean; schema?: JsonSchema }[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
}

export interface OpenApiDocument {
  paths?: Record<string, Record<string, OpenApiOperation>>;
}

const METHODS = ['get', 'post', 'put', 'delete', 'patch'];

/** Every operation of the document with its parameters and JSON body schema. */
export function routesFromOpenApi(doc: OpenApiDocument): RouteSpec[] {
  const routes: RouteSpec[] = [];
  for (const [path, ops] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(ops)) {
      if (!METHODS.includes(method)) continue;
      routes.push({
        method: method.toUpperCase(),
        path,
        params: (op.parameters ?? [])
          .filter((p) => p.in === 'path' || p.in === 'query')
          .map((p) => ({
            name: p.name,
            in: p.in as 'path' | 'query',
            required: p.required ?? p.in === 'path',
            schema: p.schema ?? {},
          })),
        body: op.requestBody?.content?.['application/json']?.schema,
        ...(op.security ? { security: op.security.flatMap((s) => Object.keys(s)) } : {}),
      });
    }
  }
  return routes.sort((a, b) => `${a.path} ${a.method}`.localeCompare(`${b.path} ${b.method}`));
}

/** Routes the document hides. */
export const HIDDEN_ROUTES: RouteSpec[] = [
  { method: 'GET', path: '/healthz', params: [], body: undefined },
  { method: 'GET', path: '/readyz', params: [], body: undefined },
  { method: 'GET', path: '/metrics', params: [], body: undefined },
  { method: 'GET', path: '/api/v1/openapi.json', params: [], body: undefined },
  {
    method: 'GET',
    path: '/ui/{file}',
    params: [{ name: 'file', in: 'path', required: true, schema: { type: 'string' } }],
    body: undefined,
  },
];

/** The collection a path parameter names: the segment before it (`/workloads/{id}` → workloads). */
export function collectionOf(path: string, param: string): string {
  const segments = path.split('/');
  const i = segments.indexOf(`{${param}}`);
  return i > 0 ? segments[i - 1]! : param;
}
