import type { FastifyInstance, RouteOptions } from 'fastify';

/** One registered route as the OpenAPI documents and the fuzz test read it. */
export interface RouteEntry {
  method: string;
  url: string;
  route: RouteOptions;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered after registerRouteTable, in order (HEAD twins of GET not included). */
    routeTable: RouteEntry[];
  }
}

const PARTS = ['params', 'querystring', 'body', 'headers'] as const;

interface SchemaNode {
  type?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  [key: string]: unknown;
}

/**
 * Paths inside `schema` of numbers without both bounds. A number a client may send must be
 * bounded: an unbounded integer in a query (`before_id=99999999999999999999`) reaches PostgreSQL
 * beyond `bigint`, and anything past 2^53 is no longer the number the client wrote.
 */
export function unboundedNumbers(schema: unknown, path = ''): string[] {
  if (!schema || typeof schema !== 'object') return [];
  const node = schema as SchemaNode;
  const out: string[] = [];
  const types = [node.type].flat();
  if (types.includes('integer') || types.includes('number')) {
    const min = node.minimum ?? node.exclusiveMinimum;
    const max = node.maximum ?? node.exclusiveMaximum;
    const safe = (n: number | undefined) => n !== undefined && Math.abs(n) <= Number.MAX_SAFE_INTEGER;
    if (!safe(min) || !safe(max)) out.push(path || '(root)');
  }
  for (const [key, child] of Object.entries(node)) {
    if (key === 'properties' || key === 'patternProperties') {
      for (const [name, sub] of Object.entries(child as Record<string, unknown>))
        out.push(...unboundedNumbers(sub, path ? `${path}.${name}` : name));
    } else if (key === 'items' || key === 'additionalProperties') {
      out.push(...unboundedNumbers(child, `${path}[]`));
    } else if (key === 'anyOf' || key === 'oneOf' || key === 'allOf') {
      for (const sub of child as unknown[]) out.push(...unboundedNumbers(sub, path));
    }
  }
  return out;
}

/**
 * Keeps the table of every route (`app.routeTable`) and refuses, at registration, a route whose
 * schema takes an unbounded number. Register before any route.
 */
export function registerRouteTable(app: FastifyInstance): void {
  const table: RouteEntry[] = [];
  app.decorate('routeTable', table);
  app.addHook('onRoute', (route) => {
    const schema = (route.schema ?? {}) as Record<string, unknown>;
    for (const part of PARTS) {
      const bad = unboundedNumbers(schema[part]);
      if (bad.length)
        throw new Error(`${route.url}: ${part} ${bad.join(', ')} must declare a minimum and a maximum`);
    }
    // Fastify adds a HEAD twin for every GET; the table lists what was written.
    for (const method of [route.method].flat()) {
      if (method === 'HEAD' && route.exposeHeadRoute === undefined && isHeadTwin(table, route.url)) continue;
      table.push({ method, url: route.url, route });
    }
  });
}

const isHeadTwin = (table: RouteEntry[], url: string) =>
  table.some((e) => e.method === 'GET' && e.url === url);
