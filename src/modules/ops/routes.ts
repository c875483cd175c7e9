import type { FastifyInstance } from 'fastify';
import { AppError } from '../../lib/errors.ts';
import { hashToken, parseBearer, sameBytes } from '../../lib/tokens.ts';
import type { Metrics } from './metrics.ts';
import type { Readiness } from './readiness.ts';

/** `/healthz`, `/readyz` (unauthenticated, no data) and `/metrics` (optionally bearer-protected). */
export async function registerOps(
  app: FastifyInstance,
  deps: { readiness: Readiness; metrics: Metrics; metricsToken: string | undefined },
): Promise<void> {
  app.get('/healthz', async (_req, reply) =>
    reply.header('cache-control', 'no-store').send({ status: 'ok' }),
  );

  app.get('/readyz', async (_req, reply) => {
    const { ready, checks } = await deps.readiness.run();
    reply.header('cache-control', 'no-store');
    if (ready) return reply.send({ status: 'ready', checks });
    return reply.status(503).send({
      code: 'service_unavailable',
      message: `Not ready: ${Object.entries(checks)
        .filter(([, v]) => v !== 'ok')
        .map(([k, v]) => `${k} (${v})`)
        .join(', ')}`,
      details: { checks },
    });
  });

  const expected = deps.metricsToken ? hashToken(deps.metricsToken) : undefined;
  app.get('/metrics', async (request, reply) => {
    if (expected) {
      const given = parseBearer(request.headers.authorization);
      if (!given || !sameBytes(hashToken(given), expected)) {
        reply.header('www-authenticate', 'Bearer realm="metrics"');
        throw new AppError('unauthorized', 'Metrics need the configured bearer token');
      }
    }
    reply.header('cache-control', 'no-store').type(deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
}
