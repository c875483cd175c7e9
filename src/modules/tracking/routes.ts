import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { wantsHtml } from '../../lib/accept.ts';
import type { AuthThrottle } from '../../lib/auth-throttle.ts';
import { AppError } from '../../lib/errors.ts';
import { escapeHtml } from '../../lib/html.ts';
import { IdParams } from '../../lib/schema-parts.ts';
import { type Authenticator, adminArea } from '../../plugins/auth.ts';
import { createdWithSecret } from '../../plugins/replies.ts';
import type { Scope } from '../access/scopes.ts';
import { hitContext } from './hit-context.ts';
import { GoQuery, ProgramInput, ProgramListQuery, ProgramPatch, SlugParams } from './schemas.ts';
import type { ClickAnswer, TrackingService } from './service.ts';

/** Headers of the `/imp` pixel besides its length. */
const PIXEL_HEADERS = { 'content-type': 'image/gif', 'cache-control': 'no-store' } as const;
/** A transparent 1×1 GIF. */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
/** The headers of a /go redirect besides its location. */
const REDIRECT_HEADERS = {
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer-when-downgrade',
};
/** Largest postback body (form or JSON) accepted. */
export const POSTBACK_BODY_LIMIT = 64 * 1024;

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
};

/** What a visitor's browser shows for a link that leads nowhere: a page, not a JSON body. */
const LINK_NOT_FOUND_HTML = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Link not found</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#1d2430}</style></head><body><h1>Link not found</h1><p>This link does not lead anywhere (it may have been removed). Go back to the page you came from and pick another offer.</p></body></html>`;

/** The page a blocked visitor sees when the site has no compliant fallback page of its own. */
const NOT_AVAILABLE_HTML = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not available in your country</title></head><body><h1>Not available in your country</h1><p>This offer cannot be shown where you are.</p></body></html>`;

function notAvailablePage(reply: FastifyReply): FastifyReply {
  return htmlPage(reply.status(451), NOT_AVAILABLE_HTML);
}

function linkNotFoundPage(reply: FastifyReply): FastifyReply {
  return htmlPage(reply.status(404), LINK_NOT_FOUND_HTML);
}

/** A small page of Podium's own: no script, no framing, never cached. */
function htmlPage(reply: FastifyReply, html: string): FastifyReply {
  return reply
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header(
      'content-security-policy',
      "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    )
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .send(html);
}

/**
 * The frame a banner's third-party tag loads: the current approved image linked to `/go/{code}`,
 * and the `/imp/{code}` pixel. Framed by any publisher page; it runs no script and loads nothing
 * but images.
 */
function bannerFrameHtml(b: { code: string; imageUrl: string; width: number; height: number }): string {
  const code = encodeURIComponent(b.code);
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer-when-downgrade"><style>html,body{margin:0;padding:0;overflow:hidden}a,img{display:block;border:0}</style></head><body><a href="../go/${code}" target="_blank" rel="noopener"><img src="${escapeHtml(b.imageUrl)}" width="${b.width}" height="${b.height}" alt=""></a><img src="../imp/${code}" width="1" height="1" alt="" style="position:absolute;left:-10px;top:-10px"></body></html>`;
}

/** `/go/{slug}` click redirect, `/imp/{code}` impression pixel and `/ad/{code}` banner frame. */
export async function registerTrackingPublic(
  scope: FastifyInstance,
  deps: { tracking: TrackingService; config: Config },
): Promise<void> {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const { tracking, config } = deps;

  app.get('/go/:slug', { schema: { params: SlugParams, querystring: GoQuery } }, async (req, reply) => {
    let answer: ClickAnswer;
    try {
      answer = await tracking.click(
        req.params.slug,
        hitContext(req, config.countryHeader, req.query.sub_id || undefined),
      );
    } catch (err) {
      // A visitor's browser gets a page; scripts and link checkers keep the JSON error body.
      if (err instanceof AppError && err.code === 'not_found' && wantsHtml(req))
        return linkNotFoundPage(reply);
      throw err;
    }
    if (answer.location === null) return notAvailablePage(reply);
    return reply.status(302).header('location', answer.location).headers(REDIRECT_HEADERS).send();
  });

  app.get('/ad/:slug', { schema: { params: SlugParams } }, async (req, reply) => {
    const banner = await tracking.bannerFrame(req.params.slug);
    // Never cached: it names the line's current approved creative, which an approval replaces;
    // the image it loads is the immutable, cacheable part.
    return reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .header(
        'content-security-policy',
        "default-src 'none'; img-src https: 'self'; style-src 'unsafe-inline'; frame-ancestors *; base-uri 'none'",
      )
      .send(bannerFrameHtml(banner));
  });

  app.get('/imp/:slug', { schema: { params: SlugParams } }, async (req, reply) => {
    await tracking.impression(req.params.slug, hitContext(req, config.countryHeader));
    return reply.headers(PIXEL_HEADERS).send(PIXEL);
  });
}

/** `GET|POST /api/postback/{program}/{token}`: bodies are taken raw so even unparseable ones get logged. */
export async function registerPostback(
  scope: FastifyInstance,
  tracking: TrackingService,
  throttle: AuthThrottle,
): Promise<void> {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: POSTBACK_BODY_LIMIT }, (_req, body, done) =>
    done(null, body),
  );
  const params = { type: 'object', properties: { program: { type: 'string' }, token: { type: 'string' } } };
  const url = '/api/postback/:program/:token';
  // HEAD would run the GET handler and record a conversion; other methods would 404 echoing the
  // URL, token included. Both are refused here without reading or repeating anything.
  scope.route({
    method: ['HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    url,
    handler: async (_req, reply) => {
      reply.header('allow', 'GET, POST');
      throw new AppError('method_not_allowed', 'A postback is sent with GET or POST');
    },
  });
  scope.route<{ Params: { program: string; token: string } }>({
    method: ['GET', 'POST'],
    url,
    exposeHeadRoute: false,
    schema: { params },
    handler: async (req) => {
      try {
        return await tracking.postback({
          program: req.params.program,
          token: req.params.token,
          method: req.method,
          contentType: header(req, 'content-type'),
          query: req.query as Record<string, unknown>,
          body: typeof req.body === 'string' ? req.body : '',
          remoteIp: req.ip,
        });
      } catch (err) {
        if (err instanceof AppError && err.code === 'unauthorized')
          throw await throttle.refusal('postback_token', req.ip, err);
        throw err;
      }
    },
  });
}

/** Programmes, mounted under /api/admin/v1. */
export async function registerTrackingAdmin(
  scope: FastifyInstance,
  { tracking, tokens }: { tracking: TrackingService; tokens: Authenticator<Scope> },
): Promise<void> {
  const { app, read, write } = adminArea(scope, tokens, { read: 'tracking:read', write: 'tracking:write' });

  app.get('/tracking/programs', { ...read, schema: { querystring: ProgramListQuery } }, (req) =>
    tracking.listPrograms(req.query.page, req.query.per_page, req.query.q),
  );
  app.post('/tracking/programs', { ...write, schema: { body: ProgramInput } }, async (req, reply) =>
    createdWithSecret(reply, { data: await tracking.createProgram(req.body) }),
  );
  app.get('/tracking/programs/:id', { ...read, schema: { params: IdParams } }, async (req) => ({
    data: await tracking.getProgram(req.params.id),
  }));
  app.patch(
    '/tracking/programs/:id',
    { ...write, schema: { params: IdParams, body: ProgramPatch } },
    async (req) => ({ data: await tracking.updateProgram(req.params.id, req.body) }),
  );
  const rotate = { summary: "Rotate the programme's postback token (shown once)", params: IdParams };
  app.post('/tracking/programs/:id/token', { ...write, schema: rotate }, async (req, reply) =>
    reply
      .header('cache-control', 'no-store')
      .send({ data: await tracking.rotateProgramToken(req.params.id) }),
  );
}
