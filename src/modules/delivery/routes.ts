import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type as T } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { acceptsGzip } from '../../lib/accept-encoding.ts';
import { AppError, invalidField, notFound } from '../../lib/errors.ts';
import { GZIP_MIN_BYTES } from '../../lib/gzip-once.ts';
import { DEFAULT_PER_PAGE } from '../../lib/paging.ts';
import { type Authenticator, requireSite } from '../../plugins/auth.ts';
import { registerOpenApi } from '../../plugins/openapi.ts';
import {
  BrandListSchema,
  ErrorSchema,
  ListQuerySchema,
  PageQuerySchema,
  ResolveQuerySchema,
  ToplistListSchema,
  ToplistSingleSchema,
} from './schemas.ts';
import type { DeliveryService, Rendered } from './service.ts';

/** Whether an If-None-Match header value matches a strong ETag (RFC 9110 §13.1.2). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

/** The ids the by-id route looks up (digits that fit the database's integer); anything else is its 404. */
const TOPLIST_ID = /^[1-9][0-9]{0,9}$/;
/**
 * Headers of every toplist API answer besides its ETag: private to the token that read it, and
 * gzipped or not by the request's Accept-Encoding.
 */
const CACHE_HEADERS = { 'cache-control': 'private', vary: 'Authorization, Accept-Encoding' } as const;
const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Answers the stored bytes of `r`: 304 when If-None-Match holds its ETag, else the bytes, gzipped
 * when the request accepts gzip and the body is worth it (compressed once, on the first such ask,
 * which waits for it). A gzip answer carries the ETag weak (`W/"…"`), as nginx does: the same
 * document in another coding, and If-None-Match compares weakly either way.
 */
async function send(request: FastifyRequest, reply: FastifyReply, r: Rendered): Promise<FastifyReply> {
  const wantsGzip = r.body.length >= GZIP_MIN_BYTES && acceptsGzip(request.headers['accept-encoding']);
  reply.headers(CACHE_HEADERS);
  if (etagMatches(request.headers['if-none-match'], r.etag))
    return reply
      .header('etag', wantsGzip ? `W/${r.etag}` : r.etag)
      .status(304)
      .send();
  const pending = wantsGzip ? r.gzip() : undefined;
  const gzip = pending instanceof Promise ? await pending : pending;
  reply.header('etag', gzip ? `W/${r.etag}` : r.etag).type(JSON_TYPE);
  if (gzip) reply.header('content-encoding', 'gzip');
  return reply.send(gzip ?? r.body);
}

const CONDITIONAL = T.Object({
  'if-none-match': T.Optional(T.String({ description: 'ETag of a copy you hold: 304 when unchanged' })),
});
const NOT_MODIFIED = T.Null({ description: 'Not modified: the copy you hold is current' });

/** The public read API, mounted under /api/v1. */
export async function registerDelivery(
  scope: FastifyInstance,
  deps: { tokens: Authenticator; delivery: DeliveryService; config: Config },
): Promise<void> {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const { delivery } = deps;
  const auth = { onRequest: requireSite(deps.tokens) };
  registerOpenApi(scope, {
    title: 'Podium toplist API',
    description:
      'Read-only delivery of published toplists to an authenticated site. Errors carry {code, message, details?} at the root.',
    publicUrl: deps.config.publicUrl,
    components: {
      ToplistList: ToplistListSchema,
      ToplistSingle: ToplistSingleSchema,
      BrandList: BrandListSchema,
      Error: ErrorSchema,
    },
  });

  const listSchema = {
    summary: 'Toplists visible to the site, newest-updated first (updated_at DESC, id DESC)',
    querystring: ListQuerySchema,
    headers: CONDITIONAL,
    response: { 200: ToplistListSchema, 304: NOT_MODIFIED },
  };
  app.get('/toplists', { ...auth, schema: listSchema }, async (req, reply) => {
    const q = req.query;
    if ((q.geo_type === undefined) !== (q.geo_code === undefined)) {
      throw invalidField(
        q.geo_type === undefined ? 'geo_type' : 'geo_code',
        'geo_type and geo_code must be given together',
      );
    }
    const page = await delivery.list(req.site!.siteId, {
      templateId: q.template_id,
      geoType: q.geo_type,
      geoCode: q.geo_code,
      page: q.page ?? 1,
      perPage: q.per_page ?? DEFAULT_PER_PAGE,
    });
    return send(req, reply, page);
  });

  app.get(
    '/brands',
    {
      ...auth,
      schema: {
        summary: "Brands of the site's visible toplists, A–Z (for syncing brand pages)",
        querystring: PageQuerySchema,
        headers: CONDITIONAL,
        response: { 200: BrandListSchema, 304: NOT_MODIFIED },
      },
    },
    async (req, reply) =>
      send(
        req,
        reply,
        await delivery.brands(req.site!.siteId, {
          page: req.query.page ?? 1,
          perPage: req.query.per_page ?? DEFAULT_PER_PAGE,
        }),
      ),
  );

  app.get(
    '/toplists/resolve',
    {
      ...auth,
      schema: {
        summary:
          "The one variant of a geo family a visitor's country gets (exact country, else the covering market, else global)",
        querystring: ResolveQuerySchema,
        headers: CONDITIONAL,
        response: { 200: ToplistSingleSchema, 304: NOT_MODIFIED },
      },
    },
    async (req, reply) => {
      const { template_id: templateId, country } = req.query;
      const found = await delivery.resolve(req.site!.siteId, templateId, country);
      if ('reason' in found) {
        const why = {
          ambiguous: `several variants cover ${country.toUpperCase()}`,
          no_variant: `no variant for ${country.toUpperCase()} and no global variant`,
          unknown_country: `${country.toUpperCase()} names no country and the family has no global variant`,
        }[found.reason];
        throw new AppError('not_found', `Toplist not found: ${why}`, {
          reason: found.reason,
          templateId,
          country: country.toUpperCase(),
          ...(found.candidates.length ? { candidates: found.candidates } : {}),
        });
      }
      return send(req, reply, found);
    },
  );

  app.get(
    '/toplists/by-slug/:slug',
    {
      ...auth,
      schema: {
        summary: 'One toplist of the site by slug',
        params: T.Object({ slug: T.String() }),
        headers: CONDITIONAL,
        response: { 200: ToplistSingleSchema, 304: NOT_MODIFIED },
      },
    },
    async (req, reply) => {
      const found = await delivery.bySlug(req.site!.siteId, req.params.slug);
      if (!found) throw notFound('Toplist');
      return send(req, reply, found);
    },
  );

  app.get(
    '/toplists/:id',
    {
      ...auth,
      schema: {
        summary: 'One toplist of the site by id',
        params: T.Object({ id: T.String({ description: 'toplist id (digits)' }) }),
        headers: CONDITIONAL,
        response: { 200: ToplistSingleSchema, 304: NOT_MODIFIED },
      },
    },
    async (req, reply) => {
      // A non-numeric or out-of-range id names no toplist: 404, like any other unknown id.
      const id = TOPLIST_ID.test(req.params.id) ? Number(req.params.id) : Number.NaN;
      const found = Number.isNaN(id) ? undefined : await delivery.byId(req.site!.siteId, id);
      if (!found) throw notFound('Toplist');
      return send(req, reply, found);
    },
  );
}
