import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { type Authenticator, requireAdmin } from '../../plugins/auth.ts';
import type { Scope } from '../access/scopes.ts';
import {
  GoQuery,
  IdParams,
  ProgramInput,
  ProgramListQuery,
  ProgramPatch,
  SiteTimezoneInput,
  SlugParams,
  StatsQuery,
} from './schemas.ts';
import type { HitContext, TrackingService } from './service.ts';

/** A transparent 1×1 GIF. */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const POSTBACK_BODY_LIMIT = 64 * 1024;

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
};

function hitContext(req: FastifyRequest, config: Config, subId?: string): HitContext {
  const country = header(req, config.countryHeader)?.trim().toUpperCase();
  const purpose = `${header(req, 'sec-purpose') ?? ''} ${header(req, 'purpose') ?? ''} ${header(req, 'x-moz') ?? ''}`;
  return {
    method: req.method,
    userAgent: header(req, 'user-agent'),
    referrer: header(req, 'referer'),
    // Only a well-formed code from the trusted edge header; XX means "unknown" to Cloudflare.
    country: country && /^[A-Z]{2}$/.test(country) && country !== 'XX' ? country : undefined,
    prefetch: /prefetch|prerender/i.test(purpose),
    subId,
  };
}

/** True when the client asks for CSV in `Accept` (and not for JSON first). */
function wantsCsv(req: FastifyRequest): boolean {
  const accept = header(req, 'accept') ?? '';
  const csv = accept.indexOf('text/csv');
  const json = accept.indexOf('application/json');
  return csv >= 0 && (json < 0 || csv < json);
}

/** `/go/{slug}` click redirect and `/imp/{code}` impression pixel. */
export async function registerTrackingPublic(
  scope: FastifyInstance,
  deps: { tracking: TrackingService; config: Config },
): Promise<void> {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const { tracking, config } = deps;

  app.get('/go/:slug', { schema: { params: SlugParams, querystring: GoQuery } }, async (req, reply) => {
    const location = await tracking.click(
      req.params.slug,
      hitContext(req, config, req.query.sub_id || undefined),
    );
    return reply
      .status(302)
      .header('location', location)
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer-when-downgrade')
      .send();
  });

  app.get('/imp/:slug', { schema: { params: SlugParams } }, async (req, reply) => {
    await tracking.impression(req.params.slug, hitContext(req, config));
    return reply.header('content-type', 'image/gif').header('cache-control', 'no-store').send(PIXEL);
  });
}

/** `GET|POST /api/postback/{program}/{token}`: bodies are taken raw so even unparseable ones get logged. */
export async function registerPostback(scope: FastifyInstance, tracking: TrackingService): Promise<void> {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: POSTBACK_BODY_LIMIT }, (_req, body, done) =>
    done(null, body),
  );
  const params = { type: 'object', properties: { program: { type: 'string' }, token: { type: 'string' } } };
  scope.route<{ Params: { program: string; token: string } }>({
    method: ['GET', 'POST'],
    url: '/api/postback/:program/:token',
    schema: { params },
    handler: async (req) =>
      tracking.postback({
        program: req.params.program,
        token: req.params.token,
        method: req.method,
        contentType: header(req, 'content-type'),
        query: req.query as Record<string, unknown>,
        body: typeof req.body === 'string' ? req.body : '',
        remoteIp: req.ip,
      }),
  });
}

/** Programmes and stats, mounted under /api/admin/v1. */
export async function registerTrackingAdmin(
  scope: FastifyInstance,
  deps: { tracking: TrackingService; tokens: Authenticator<Scope> },
): Promise<void> {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const { tracking, tokens } = deps;
  const read = { preHandler: requireAdmin(tokens, 'tracking:read') };
  const write = { preHandler: requireAdmin(tokens, 'tracking:write') };

  app.get('/tracking/programs', { ...read, schema: { querystring: ProgramListQuery } }, (req) =>
    tracking.listPrograms(req.query.page, req.query.per_page),
  );
  app.post('/tracking/programs', { ...write, schema: { body: ProgramInput } }, async (req, reply) =>
    reply
      .status(201)
      .header('cache-control', 'no-store')
      .send({ data: await tracking.createProgram(req.body) }),
  );
  app.get('/tracking/programs/:id', { ...read, schema: { params: IdParams } }, async (req) => ({
    data: await tracking.getProgram(req.params.id),
  }));
  app.patch(
    '/tracking/programs/:id',
    { ...write, schema: { params: IdParams, body: ProgramPatch } },
    async (req) => ({ data: await tracking.updateProgram(req.params.id, req.body) }),
  );
  app.post('/tracking/programs/:id/token', { ...write, schema: { params: IdParams } }, async (req, reply) =>
    reply
      .header('cache-control', 'no-store')
      .send({ data: await tracking.rotateProgramToken(req.params.id) }),
  );

  app.get('/tracking/stats', { ...read, schema: { querystring: StatsQuery } }, async (req, reply) => {
    const q = req.query;
    const query = {
      from: q.from,
      to: q.to,
      tz: q.tz,
      programId: q.program_id,
      siteId: q.site_id,
      toplistId: q.toplist_id,
      brandId: q.brand_id,
      page: q.page,
      perPage: q.per_page,
    };
    if (q.format === 'json' || (q.format !== 'csv' && !wantsCsv(req))) return tracking.stats.page(query);
    const csv = await tracking.stats.csv(query);
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="podium-stats-${q.from}-${q.to}.csv"`)
      .send(csv);
  });

  app.get('/tracking/sites/:id', { ...read, schema: { params: IdParams } }, async (req) => ({
    data: await tracking.stats.siteTimezone(req.params.id),
  }));
  app.put(
    '/tracking/sites/:id',
    { ...write, schema: { params: IdParams, body: SiteTimezoneInput } },
    async (req) => ({ data: await tracking.stats.setSiteTimezone(req.params.id, req.body.timezone) }),
  );
}
