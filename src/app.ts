import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from './config.ts';
import type { ChangeBus } from './db/changes.ts';
import type { Db } from './db/index.ts';
import { registerCatalog } from './modules/catalog/routes.ts';
import { CatalogService } from './modules/catalog/service.ts';
import { registerDelivery } from './modules/delivery/routes.ts';
import { DeliveryService } from './modules/delivery/service.ts';
import { frameworkErrors, registerErrorHandling } from './plugins/errors.ts';
import { registerStrictQuery } from './plugins/strict-query.ts';
import { registerValidation } from './plugins/validation.ts';

/** Everything a running app needs from outside; tests build their own. */
export interface AppDeps {
  config: Config;
  db: Db;
  bus: ChangeBus;
  /** Wall clock; injectable so publish windows can be tested. */
  now?: () => Date;
  /** Pino logger options or `false`; defaults from config. */
  logger?: boolean | object;
}

export interface Services {
  catalog: CatalogService;
  delivery: DeliveryService;
}

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
  }
}

/** Builds the HTTP application with every module registered. Does not listen. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    logger: deps.logger ?? {
      level: config.logLevel,
      redact: ['req.headers.authorization', 'req.headers.cookie'],
    },
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    routerOptions: { maxParamLength: 200 },
    frameworkErrors,
  });
  registerErrorHandling(app);
  registerStrictQuery(app);
  registerValidation(app);

  // An empty POST/PUT/PATCH is validated as `{}` so it gets a field-level 422, not a type error.
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && ['POST', 'PUT', 'PATCH'].includes(request.method)) request.body = {};
  });

  const now = deps.now ?? (() => new Date());
  const catalog = new CatalogService(deps.db, deps.bus, config, now);
  const delivery = new DeliveryService(deps.db, deps.bus, now, `${config.publicUrl}/api/v1`);
  app.decorate('services', { catalog, delivery });

  app.get('/healthz', async () => ({ status: 'ok' }));
  await app.register(async (scope) => registerCatalog(scope, catalog), { prefix: '/api/admin/v1' });
  await app.register(async (scope) => registerDelivery(scope, { catalog, delivery, config }), {
    prefix: '/api/v1',
  });
  return app;
}
