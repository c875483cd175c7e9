import type { FastifyInstance, RouteOptions } from 'fastify';
import { authOf } from './auth.ts';
import type { RouteEntry } from './route-table.ts';

/** What one OpenAPI document says about itself; its paths come from the route table. */
export interface OpenApiInfo {
  title: string;
  description: string;
  /** Routes under this prefix are documented, relative to `{publicUrl}{prefix}`. */
  prefix: string;
  publicUrl: string;
  /** Named schemas: a route schema that is one of these objects is written as a `$ref`. */
  components?: Record<string, unknown>;
}

type Json = Record<string, unknown>;

declare module 'fastify' {
  interface FastifySchema {
    /** One line for the OpenAPI operation; derived from method and path when absent. */
    summary?: string;
    description?: string;
    tags?: string[];
    /** A request body that is not JSON (an image upload): its OpenAPI `content` map, written as given. */
    bodyContent?: Record<string, { schema: Record<string, unknown> }>;
  }
}

const ERROR_REF = { $ref: '#/components/schemas/Error' };
const ERROR_SCHEMA = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: 'string', description: 'Stable snake_case code from the error catalog' },
    message: { type: 'string', description: 'Human message naming the field or the problem' },
    details: { type: 'object', description: 'More about the error, e.g. `field`' },
  },
  additionalProperties: false,
};
const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: ERROR_REF } },
});

const SECURITY = {
  siteToken: { type: 'http', scheme: 'bearer', description: 'Site read token (pds_…)' },
  adminToken: { type: 'http', scheme: 'bearer', description: 'Admin token (pda_…) with scopes' },
  consoleSession: {
    type: 'apiKey',
    in: 'cookie',
    name: 'podium_session',
    description: 'Console session cookie; writes also send X-CSRF-Token',
  },
};

const words = (s: string) => s.replace(/[-_]/g, ' ');
const singular = (s: string) => words(s).replace(/ies$/, 'y').replace(/s$/, '');

/**
 * A summary derived from the method and path (`GET /owners/{id}` → "Get owner"), used when a
 * route's schema has none; actions (`POST /toplists/{id}/publish`) name themselves in `schema.summary`.
 */
export function summaryOf(method: string, path: string): string {
  const segs = path.split('/').filter(Boolean);
  const statics = segs.filter((s) => !s.startsWith('{'));
  const last = segs.at(-1) ?? '';
  const item = last.startsWith('{');
  const resource = statics.at(-1) ?? 'root';
  const owner = statics.length > 1 ? `${singular(statics.at(-2)!)} ` : '';
  const name = item ? `${owner}${singular(resource)}` : `${owner}${words(resource)}`;
  switch (method) {
    case 'GET':
      return item || !resource.endsWith('s') ? `Get ${name}` : `List ${name}`;
    case 'POST':
      // A singular last word is an action on what precedes it (`/toplists/{id}/publish`).
      if (!item && !resource.endsWith('s') && statics.length > 1)
        return `${resource[0]!.toUpperCase()}${words(resource.slice(1))} ${singular(statics.at(-2)!)}`;
      return item ? `Act on ${name}` : `Create ${owner}${singular(resource)}`;
    case 'PUT':
      return `Set ${name}`;
    case 'PATCH':
      return `Update ${name}`;
    case 'DELETE':
      return `Delete ${name}`;
    default:
      return `${method} ${name}`;
  }
}

function operationId(method: string, path: string): string {
  const parts = path
    .replace(/[{}]/g, '')
    .split(/[/._-]/)
    .filter(Boolean)
    .map((p) => p[0]!.toUpperCase() + p.slice(1));
  return `${method.toLowerCase()}${parts.join('') || 'Root'}`;
}

/** A route schema as JSON Schema for the document: TypeBox symbols dropped, known schemas referenced. */
function schemaOut(schema: unknown, refs: Map<unknown, string>): Json {
  const name = refs.get(schema);
  if (name) return { $ref: `#/components/schemas/${name}` };
  return JSON.parse(JSON.stringify(schema)) as Json;
}

function operation(entry: RouteEntry, path: string, refs: Map<unknown, string>): Json {
  const route = entry.route as RouteOptions & { schema?: Json };
  const schema = (route.schema ?? {}) as Json & {
    params?: { properties?: Json };
    querystring?: { properties?: Json; required?: string[] };
    headers?: { properties?: Json };
    body?: unknown;
    bodyContent?: Json;
    response?: Record<string, unknown>;
    summary?: string;
    description?: string;
    tags?: string[];
  };
  const parameters: Json[] = [];
  for (const [name, s] of Object.entries(schema.params?.properties ?? {}))
    parameters.push({ name, in: 'path', required: true, schema: schemaOut(s, refs) });
  for (const name of [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!))
    if (!parameters.some((p) => p.name === name))
      parameters.push({ name, in: 'path', required: true, schema: { type: 'string' } });
  const required = new Set(schema.querystring?.required ?? []);
  for (const [name, s] of Object.entries(schema.querystring?.properties ?? {}))
    parameters.push({ name, in: 'query', required: required.has(name), schema: schemaOut(s, refs) });

  for (const [name, s] of Object.entries(schema.headers?.properties ?? {}))
    parameters.push({ name, in: 'header', required: false, schema: schemaOut(s, refs) });

  const auth = authOf(route);
  const responses: Json = {};
  for (const [status, s] of Object.entries(schema.response ?? {}))
    responses[status] = {
      description: status === '304' ? 'Not modified' : 'Success',
      ...(s && status !== '204' && status !== '304'
        ? { content: { 'application/json': { schema: schemaOut(s, refs) } } }
        : {}),
    };
  if (!Object.keys(responses).some((s) => s.startsWith('2')))
    responses['2XX'] = {
      description: 'Success: the answer, usually `{data}` (see the docs page of this API)',
    };
  if (auth) responses['401'] = errorResponse('Missing, invalid or revoked token');
  if (auth?.kind === 'admin') responses['403'] = errorResponse(`The token lacks the ${auth.scope} scope`);
  if (auth?.kind === 'user') responses['403'] = errorResponse('A service token, not a person');
  if (parameters.some((p) => p.in === 'path')) responses['404'] = errorResponse('Not found');
  if (parameters.some((p) => p.in !== 'header') || schema.body || schema.bodyContent)
    responses['422'] = errorResponse('A field is missing, malformed or out of range');
  responses['4XX'] = errorResponse('Any other refusal, in the same error shape');

  const tag = path.split('/').filter(Boolean)[0]?.replace(/[{}]/g, '') ?? 'root';
  const out: Json = {
    operationId: operationId(entry.method, path),
    summary: schema.summary ?? summaryOf(entry.method, path),
    tags: schema.tags ?? [tag],
    parameters: parameters.length ? parameters : undefined,
    requestBody: schema.bodyContent
      ? { required: true, content: schema.bodyContent }
      : schema.body
        ? { required: true, content: { 'application/json': { schema: schemaOut(schema.body, refs) } } }
        : undefined,
    responses,
    security: auth
      ? auth.kind === 'site'
        ? [{ siteToken: [] }]
        : [{ adminToken: [] }, { consoleSession: [] }]
      : [],
  };
  if (schema.description) out.description = schema.description;
  return JSON.parse(JSON.stringify(out)) as Json;
}

/** The OpenAPI 3.1 document of every route under `info.prefix`, built from the route table. */
export function openApiDocument(routes: readonly RouteEntry[], info: OpenApiInfo): Json {
  const refs = new Map<unknown, string>(Object.entries(info.components ?? {}).map(([k, v]) => [v, k]));
  const paths: Record<string, Json> = {};
  const tags = new Set<string>();
  for (const entry of routes) {
    if (!entry.url.startsWith(`${info.prefix}/`) || entry.url.includes('*')) continue;
    const path = entry.url.slice(info.prefix.length).replace(/:([A-Za-z_]+)/g, '{$1}');
    const op = operation(entry, path, refs);
    for (const t of op.tags as string[]) tags.add(t);
    paths[path] = { ...paths[path], [entry.method.toLowerCase()]: op };
  }
  const components: Json = { Error: ERROR_SCHEMA };
  for (const [name, s] of Object.entries(info.components ?? {}))
    components[name] = JSON.parse(JSON.stringify(s));
  const used = new Set(
    Object.values(paths).flatMap((item) =>
      Object.values(item).flatMap((op) => ((op as Json).security as Json[]).flatMap((s) => Object.keys(s))),
    ),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: info.title,
      version: '1',
      description: info.description,
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: `${info.publicUrl}${info.prefix}` }],
    tags: [...tags].sort().map((name) => ({ name, description: `Operations on ${words(name)}` })),
    paths,
    components: {
      securitySchemes: Object.fromEntries(Object.entries(SECURITY).filter(([name]) => used.has(name))),
      schemas: components,
    },
  };
}

/**
 * `GET {prefix}/openapi.json` in `scope`: the document of every route under the prefix, built
 * once from the route table on first request (every route is registered by then).
 */
export function registerOpenApi(scope: FastifyInstance, info: Omit<OpenApiInfo, 'prefix'>): void {
  let body: string | undefined;
  const prefix = scope.prefix;
  scope.get(
    '/openapi.json',
    { config: { auth: 'none' }, schema: { summary: 'This OpenAPI 3.1 document', tags: ['openapi'] } },
    async (_req, reply) => {
      body ??= JSON.stringify(openApiDocument(scope.routeTable, { ...info, prefix }));
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );
}
