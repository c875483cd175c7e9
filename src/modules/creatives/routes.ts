import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type as T } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CreativeFormat } from '../../config.ts';
import { type Authenticator, adminArea, requireAdmin } from '../../plugins/auth.ts';
import type { Scope } from '../access/scopes.ts';
import { refused } from './inspect.ts';
import { CreativeListQuery, CreativeParams, IMAGE_BODY, RejectInput, UploadQuery } from './schemas.ts';
import type { CreativeService } from './service.ts';
import { IMMUTABLE } from './storage.ts';

/** Who the moderation records name: the person, or the service token, behind the request. */
const actorOf = (req: FastifyRequest) =>
  req.admin?.userId != null ? `user:${req.admin.userId}` : `admin-token:${req.admin?.tokenId ?? 'unknown'}`;

/** The largest upload body read: four times the largest weight limit (bigger is refused unread, 413). */
export function uploadBodyLimit(maxBytes: Readonly<Record<CreativeFormat, number>>): number {
  return Math.max(...Object.values(maxBytes)) * 4;
}

/**
 * Registers upload routes in a scope of their own that takes the raw image as the body, whatever
 * its Content-Type (the type is read from the bytes), so no other route parses bodies this way;
 * bodies past four times the largest weight limit are refused unread (413).
 */
export async function imageUploads(
  app: FastifyInstance,
  maxBytes: Readonly<Record<CreativeFormat, number>>,
  routes: (upload: FastifyInstance) => void,
): Promise<void> {
  await app.register(async (upload) => {
    upload.removeAllContentTypeParsers();
    upload.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: uploadBodyLimit(maxBytes) },
      (_req, body, done) => done(null, body),
    );
    routes(upload);
  });
}

/** An upload's body as the image bytes; empty or anything else is refused (rule `type`). */
export function imageOf(body: unknown): Buffer {
  if (!Buffer.isBuffer(body) || body.length === 0)
    throw refused('type', 'must be the image file itself (PNG, JPEG, GIF or WebP), not empty');
  return body;
}

/** The creatives admin API under /api/admin/v1: upload, library, moderation. Writes are audited. */
export async function registerCreativesAdmin(
  scope: FastifyInstance,
  deps: {
    creatives: CreativeService;
    tokens: Authenticator<Scope>;
    maxBytes: Readonly<Record<CreativeFormat, number>>;
  },
): Promise<void> {
  const { creatives, tokens } = deps;
  const { app, read, write } = adminArea(scope, tokens, { read: 'market:read', write: 'market:write' });
  const moderate = { onRequest: requireAdmin(tokens, 'creatives:moderate') };

  app.get('/creatives', { ...read, schema: { querystring: CreativeListQuery } }, async (req) => ({
    data: await creatives.list(req.query),
  }));
  app.get(
    '/creatives/followups',
    { ...read, schema: { summary: 'Follow-up pushes of approved creatives not sent yet' } },
    async () => ({ data: await creatives.followups() }),
  );
  app.get('/creatives/:id', { ...read, schema: { params: CreativeParams } }, async (req) => ({
    data: await creatives.get(req.params.id),
  }));
  app.post(
    '/creatives/:id/approve',
    { ...moderate, schema: { params: CreativeParams, summary: 'Approve a pending creative for its line' } },
    async (req) => {
      const before = await creatives.get(req.params.id);
      const data = await creatives.approve(req.params.id, actorOf(req));
      req.audit = { before, after: data };
      return { data };
    },
  );
  app.post(
    '/creatives/:id/reject',
    {
      ...moderate,
      schema: {
        params: CreativeParams,
        body: RejectInput,
        summary: 'Reject a pending creative with a reason',
      },
    },
    async (req) => {
      const before = await creatives.get(req.params.id);
      const data = await creatives.reject(req.params.id, req.body.reason, actorOf(req));
      req.audit = { before, after: data };
      return { data };
    },
  );

  await imageUploads(app, deps.maxBytes, (upload) => {
    upload.withTypeProvider<TypeBoxTypeProvider>().post(
      '/creatives',
      {
        ...write,
        schema: {
          querystring: UploadQuery,
          bodyContent: IMAGE_BODY,
          summary: 'Upload a creative (the image bytes as the body) for a booking line or a reservation line',
        },
      },
      async (req, reply) => {
        const { creative, created } = await creatives.upload(req.query, imageOf(req.body), actorOf(req));
        req.audit = { targetId: creative.id, after: creative };
        return reply.status(created ? 201 : 200).send({ data: creative });
      },
    );
  });
}

/**
 * `GET /creatives/<sha256>.<ext>`: public and immutable (the name is the content's hash), so a CDN
 * may keep it for a year; `nosniff` keeps browsers on the stated image type.
 */
export async function registerCreativeFiles(
  scope: FastifyInstance,
  creatives: CreativeService,
): Promise<void> {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/creatives/:file',
    { schema: { params: T.Object({ file: T.String({ maxLength: 80 }) }) } },
    async (req, reply) => {
      const f = await creatives.file(req.params.file);
      const etag = `"${f.sha256}"`;
      reply
        .header('cache-control', IMMUTABLE)
        .header('etag', etag)
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('cross-origin-resource-policy', 'cross-origin');
      const match = req.headers['if-none-match'];
      if (typeof match === 'string' && match.split(',').some((m) => m.trim().replace(/^W\//, '') === etag))
        return reply.status(304).send();
      return reply.header('content-type', f.contentType).send(f.bytes);
    },
  );
}
