import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ulid } from '../lib/ids.ts';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Fastify `genReqId`: keeps a well-formed incoming `X-Request-Id`, mints a ULID otherwise. */
export function requestId(req: { headers: Record<string, string | string[] | undefined> }): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SAFE_ID.test(given) ? given : ulid();
}

/**
 * One log line per request (route pattern, status, duration, site id — never a token or a
 * query string) and the request id echoed in `X-Request-Id`.
 */
export function registerRequestLog(app: FastifyInstance): void {
  // Callback-style hooks: no promise per request on the hot path.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onResponse', (request: FastifyRequest, reply, done) => {
    const line: Record<string, unknown> = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
    };
    if (request.site) line.siteId = request.site.siteId;
    if (request.admin) line.adminTokenId = request.admin.tokenId;
    const level = reply.statusCode >= 500 ? 'error' : 'info';
    request.log[level](line, 'request');
    done();
  });
}
