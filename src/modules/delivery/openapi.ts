import {
  BrandListSchema,
  BrandSchema,
  ErrorSchema,
  ListQuerySchema,
  PageQuerySchema,
  ResolveQuerySchema,
  ToplistListSchema,
  ToplistSchema,
  ToplistSingleSchema,
} from './schemas.ts';

const json = (schema: unknown) => ({ 'application/json': { schema } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const errors = {
  '401': { description: 'Missing, invalid or revoked token', content: json(ref('Error')) },
  '404': { description: 'Not found or not available to this site', content: json(ref('Error')) },
  '422': { description: 'A query parameter is malformed or out of range', content: json(ref('Error')) },
};

const cacheHeaders = {
  ETag: { description: 'Strong validator of this exact body', schema: { type: 'string' } },
  'Cache-Control': { schema: { type: 'string', const: 'private' } },
  Vary: { schema: { type: 'string', const: 'Authorization' } },
};

const conditional = [
  {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    schema: { type: 'string' },
    description: 'ETag of a copy you hold: 304 when unchanged',
  },
];

const queryParams = (props: Record<string, unknown>) =>
  Object.entries(props).map(([name, schema]) => ({ name, in: 'query', required: false, schema }));

/** The OpenAPI 3.1 document of the public toplist API, built from the same schemas the tests validate against. */
export function toplistOpenApi(serverUrl: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Podium toplist API',
      version: '1',
      description:
        'Read-only delivery of published toplists to an authenticated site. Errors carry {code, message, details?} at the root.',
    },
    servers: [{ url: `${serverUrl}/api/v1` }],
    security: [{ siteToken: [] }],
    paths: {
      '/toplists': {
        get: {
          operationId: 'listToplists',
          summary: 'Toplists visible to the site, newest-updated first (updated_at DESC, id DESC)',
          parameters: [...queryParams(ListQuerySchema.properties), ...conditional],
          responses: {
            '200': { description: 'One page', headers: cacheHeaders, content: json(ref('ToplistList')) },
            '304': { description: 'Not modified' },
            ...errors,
          },
        },
      },
      '/brands': {
        get: {
          operationId: 'listBrands',
          summary: "Brands of the site's visible toplists, A–Z (for syncing brand pages)",
          parameters: [...queryParams(PageQuerySchema.properties), ...conditional],
          responses: {
            '200': { description: 'One page', headers: cacheHeaders, content: json(ref('BrandList')) },
            '304': { description: 'Not modified' },
            ...errors,
          },
        },
      },
      '/toplists/resolve': {
        get: {
          operationId: 'resolveToplist',
          summary:
            "The one variant of a geo family a visitor's country gets: the exact country row, else the single market covering it, else the global row (same bytes and ETag as by id)",
          parameters: [
            ...Object.entries(ResolveQuerySchema.properties).map(([name, schema]) => ({
              name,
              in: 'query',
              required: true,
              schema,
            })),
            ...conditional,
          ],
          responses: {
            '200': { description: 'The toplist', headers: cacheHeaders, content: json(ref('ToplistSingle')) },
            '304': { description: 'Not modified' },
            '401': errors['401'],
            '404': {
              description:
                'No variant: details.reason is ambiguous (two or more markets cover the country; details.candidates lists them), no_variant or unknown_country',
              content: json(ref('Error')),
            },
            '422': errors['422'],
          },
        },
      },
      '/toplists/by-slug/{slug}': {
        get: {
          operationId: 'getToplistBySlug',
          parameters: [
            { name: 'slug', in: 'path', required: true, schema: { type: 'string' } },
            ...conditional,
          ],
          responses: {
            '200': { description: 'The toplist', headers: cacheHeaders, content: json(ref('ToplistSingle')) },
            '304': { description: 'Not modified' },
            '401': errors['401'],
            '404': errors['404'],
          },
        },
      },
      '/toplists/{id}': {
        get: {
          operationId: 'getToplistById',
          parameters: [
            { name: 'id', in: 'path', required: true, schema: { type: 'integer' } },
            ...conditional,
          ],
          responses: {
            '200': { description: 'The toplist', headers: cacheHeaders, content: json(ref('ToplistSingle')) },
            '304': { description: 'Not modified' },
            '401': errors['401'],
            '404': errors['404'],
          },
        },
      },
    },
    components: {
      securitySchemes: {
        siteToken: { type: 'http', scheme: 'bearer', description: 'Site read token (pds_…)' },
      },
      schemas: {
        Toplist: ToplistSchema,
        ToplistList: ToplistListSchema,
        ToplistSingle: ToplistSingleSchema,
        Brand: BrandSchema,
        BrandList: BrandListSchema,
        Error: ErrorSchema,
      },
    },
  };
}
