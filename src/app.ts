import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from './config.ts';
import type { ChangeBus } from './db/changes.ts';
import type { Db } from './db/index.ts';
import { registerCatalog } from './modules/catalog/routes.ts';
import { CatalogService } from './modules/catalog/service.ts';
import { registerDelivery } from './modules/delivery/routes.ts';
import { DeliveryService } from './modules/delivery/service.ts';
import { loadPages } from './modules/docs/pages.ts';
import { registerDocs } from './modules/docs/routes.ts';
import { DocsService } from './modules/docs/service.ts';
import { frameworkErrors, registerErrorHandling } from './plugins/errors.ts';
import { registerStrictQuery } from './plugins/strict-query.ts';

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
  docs: DocsService;
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
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, allErrors: false } },
  });
  registerErrorHandling(app);
  registerStrictQuery(app);

  // An empty POST/PUT/PATCH is validated as `{}` so it gets a field-level 422, not a type error.
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && ['POST', 'PUT', 'PATCH'].includes(request.method)) request.body = {};
  });

  const now = deps.now ?? (() => new Date());
  const catalog = new CatalogService(deps.db, deps.bus, config, now);
  const delivery = new DeliveryService(deps.db, deps.bus, now, `${config.publicUrl}/api/v1/toplists`);
  const docs = new DocsService(loadPages(), config.docsBase, config.publicUrl);
  app.decorate('services', { catalog, delivery, docs });

  app.get('/healthz', async () => ({ status: 'ok' }));
  await app.register(async (scope) => registerCatalog(scope, catalog), { prefix: '/api/admin/v1' });
  await app.register(async (scope) => registerDelivery(scope, { catalog, delivery, config }), {
    prefix: '/api/v1',
  });
  if (!config.docsPort) await app.register(async (scope) => registerDocs(scope, docsOptions(deps, docs)));
  return app;
}

function docsOptions(deps: Pick<AppDeps, 'config' | 'now'>, docs: DocsService) {
  const now = deps.now ?? (() => new Date());
  return { docs, rateMax: deps.config.docsRateLimit, nowMs: () => now().getTime() };
}

/** The documentation server on its own (config `docsPort`): no database, no account data. */
export async function buildDocsApp(
  deps: Pick<AppDeps, 'config' | 'now' | 'logger'>,
): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    logger: deps.logger ?? { level: config.logLevel },
    trustProxy: config.trustProxy,
    frameworkErrors,
  });
  registerErrorHandling(app);
  const docs = new DocsService(loadPages(), config.docsBase, config.publicUrl);
  await app.register(async (scope) => registerDocs(scope, docsOptions(deps, docs)));
  return app;
}
