import rateLimit from '@fastify/rate-limit';
import { Type } from '@sinclair/typebox';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Store } from '../db.ts';
import {
  ForecastRequest,
  type ForecastRequest as ForecastRequestT,
  OrderRequest,
  type OrderRequest as OrderRequestT,
  ReportRequest,
  type ReportRequest as ReportRequestT,
  type Scope,
} from '../schemas.ts';
import { ApiError } from './errors.ts';
import { hashKey, parseBearer } from './keys.ts';
import * as repo from './repository.ts';
import * as service from './service.ts';

export interface ReferenceAppOptions {
  store: Store;
  /** Path prefix of the API (default `/api/v1`). */
  prefix?: string;
  /** Requests allowed per key per window (default 600 per minute). */
  rateLimit?: { max: number; windowMs: number };
  now?: () => Date;
  logger?: boolean;
  https?: { key: string | Buffer; cert: string | Buffer } | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    account?: repo.Account;
  }
}

const BODY_LIMIT = 1024 * 1024;

// Query strings arrive as text; bodies are not coerced (a string where an integer belongs is a
// 400), so `limit` is matched as digits 1..200 here instead of through type coercion.
const InventoryQueryString = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: '^([1-9]|[1-9][0-9]|1[0-9]{2}|200)$' })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  },
  { additionalProperties: false },
);

/** The reference ad server's HTTP app (not listening). */
export async function buildReferenceApp(opts: ReferenceAppOptions): Promise<FastifyInstance> {
  const { store } = opts;
  const now = opts.now ?? (() => new Date());
  const prefix = opts.prefix ?? '/api/v1';
  const app = Fastify({
    logger: opts.logger ? { redact: ['req.headers.authorization'] } : false,
    bodyLimit: BODY_LIMIT,
    ...(opts.https ? { https: opts.https } : {}),
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } },
  }) as unknown as FastifyInstance;

  app.setErrorHandler((err, _req, reply) => {
    if (err instanceof ApiError) return reply.code(err.statusCode).headers(err.headers).send(err.body());
    const e = err as {
      validation?: unknown;
      statusCode?: number;
      code?: string;
      message: string;
    };
    if (e.validation) {
      const v = (
        e.validation as {
          instancePath?: string;
          params?: { missingProperty?: string; additionalProperty?: string };
        }[]
      )[0];
      const field = [
        v?.instancePath?.replace(/^\//, '').replaceAll('/', '.'),
        v?.params?.missingProperty ?? v?.params?.additionalProperty,
      ]
        .filter(Boolean)
        .join('.');
      return reply.code(400).send({
        code: 'bad_request',
        message: `invalid request: ${field} ${e.message.replace(/^[^ ]+ /, '')}`,
        details: { field },
      });
    }
    if (e.statusCode === 413)
      return reply.code(413).send({ code: 'payload_too_large', message: `body exceeds ${BODY_LIMIT} bytes` });
    if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500)
      return reply.code(400).send({
        code: 'bad_request',
        message:
          e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || /JSON/.test(e.message)
            ? 'body is not valid JSON'
            : 'malformed request',
      });
    app.log.error({ err }, 'request failed');
    return reply.code(500).send({ code: 'server_error', message: 'internal error' });
  });
  app.setNotFoundHandler((_req, reply) =>
    reply.code(404).send({ code: 'not_found', message: 'no such endpoint' }),
  );

  const rateKey = (req: FastifyRequest): string => {
    const token = parseBearer(req.headers.authorization);
    return token ? hashKey(token).toString('hex') : `ip:${req.ip}`;
  };

  await app.register(
    async (api) => {
      await api.register(rateLimit, {
        max: opts.rateLimit?.max ?? 600,
        timeWindow: opts.rateLimit?.windowMs ?? 60_000,
        keyGenerator: rateKey,
        errorResponseBuilder: (_req, ctx) =>
          new ApiError(429, 'rate_limited', `request budget of ${ctx.max} per ${ctx.after} exceeded`, {
            retry_after_seconds: Math.ceil(ctx.ttl / 1000),
          }),
      });

      const auth = (scope: Scope | null) => async (req: FastifyRequest) => {
        const token = parseBearer(req.headers.authorization);
        const unauthorized = (message: string) =>
          new ApiError(401, 'unauthorized', message, undefined, { 'www-authenticate': 'Bearer' });
        if (!token) throw unauthorized('missing or malformed Authorization: Bearer header');
        // Lookup by SHA-256 of a 256-bit random key: the hash is the index, so no timing oracle on the key.
        const key = await repo.findLiveKey(store, hashKey(token), now());
        if (!key) throw unauthorized('invalid, revoked or expired API key');
        if (scope && !key.scopes.includes(scope))
          throw new ApiError(403, 'forbidden', `this API key lacks the ${scope} scope`, { scope });
        req.account = await repo.getAccount(store, key.account_id);
        if (!req.account) throw unauthorized('invalid API key');
      };

      api.get('/health', { preHandler: auth(null) }, async (req) => service.health(req.account!));

      api.get(
        '/inventory',
        { preHandler: auth('inventory:read'), schema: { querystring: InventoryQueryString } },
        async (req) => {
          const q = req.query as { limit?: string; cursor?: string };
          return service.inventory(store, req.account!, q.limit ? Number(q.limit) : 50, q.cursor);
        },
      );

      api.post(
        '/forecast',
        { preHandler: auth('forecast'), schema: { body: ForecastRequest } },
        async (req) => service.forecast(store, req.account!, req.body as ForecastRequestT),
      );

      api.post(
        '/orders',
        { preHandler: auth('orders:draft'), schema: { body: OrderRequest } },
        async (req, reply) => {
          const body = req.body as OrderRequestT;
          const header = req.headers['idempotency-key'];
          if (typeof header !== 'string' || header === '')
            throw new ApiError(400, 'idempotency_key_missing', 'the Idempotency-Key header is required', {
              field: 'Idempotency-Key',
            });
          if (header !== body.idempotency_key)
            throw new ApiError(
              400,
              'idempotency_key_mismatch',
              'the Idempotency-Key header differs from the body idempotency_key',
              { field: 'idempotency_key' },
            );
          const result = await service.placeOrder(store, req.account!, body);
          if (result.replayed) reply.header('idempotent-replayed', 'true');
          return reply.code(result.status).send(result.body);
        },
      );

      api.post('/reports', { preHandler: auth('reports'), schema: { body: ReportRequest } }, async (req) =>
        service.report(store, req.account!, req.body as ReportRequestT, now()),
      );
    },
    { prefix },
  );
  return app;
}
