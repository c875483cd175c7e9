import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { ulid } from '../lib/ids.ts';
import { TRUSTED_LINE } from '../lib/logger.ts';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,64}$/;
/** The route label of a request no route matched. */
const UNMATCHED = 'unmatched';

declare module 'fastify' {
  interface FastifyRequest {
    /** The matched route's pattern (`/go/:slug`), for logs and metrics; `unmatched` for none. */
    routePattern: string;
  }
}

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
  app.decorateRequest('routePattern', UNMATCHED);
  // Callback-style hooks: no promise per request on the hot path.
  app.addHook('onRequest', (request, reply, done) => {
    // Read once: `routeOptions` builds a new object on every read.
    request.routePattern = request.routeOptions.url ?? UNMATCHED;
    reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onResponse', (request: FastifyRequest, reply, done) => {
    logRequest(app.log, {
      reqId: request.id,
      method: request.method,
      route: request.routePattern,
      status: reply.statusCode,
      ms: reply.elapsedTime,
      siteId: request.site?.siteId,
      adminTokenId: request.admin?.tokenId ?? undefined,
      userId: request.admin?.userId ?? undefined,
    });
    done();
  });
}

/** What one request line says (ids only when the request had them). */
export interface RequestLine {
  reqId: string;
  method: string;
  route: string;
  status: number;
  ms: number;
  siteId?: number | undefined;
  adminTokenId?: number | undefined;
  userId?: number | undefined;
}

/**
 * Writes the per-request line: on the root logger, since `request.log` would make the
 * per-request child this line does not need, and trusted (`TRUSTED_LINE`: it holds no value a
 * secret could hide in, so the scrubber skips it).
 */
export function logRequest(log: FastifyBaseLogger, r: RequestLine): void {
  const ms = Math.round(r.ms * 10) / 10;
  const line: Record<string | symbol, unknown> = {
    [TRUSTED_LINE]: true,
    reqId: r.reqId,
    method: r.method,
    route: r.route,
    status: r.status,
    ms,
  };
  if (r.siteId !== undefined) line.siteId = r.siteId;
  if (r.adminTokenId !== undefined) line.adminTokenId = r.adminTokenId;
  if (r.userId !== undefined) line.userId = r.userId;
  log[r.status >= 500 ? 'error' : 'info'](line, 'request');
}
