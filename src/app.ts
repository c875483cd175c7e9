import fastifyCookie from '@fastify/cookie';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import { lazyChildLogger, logDestination, loggerOptions } from './lib/logger.ts';
import { PACKAGE_VERSION } from './lib/package-root.ts';
import { registerAccess } from './modules/access/routes.ts';
import { registerSessionRoutes } from './modules/access/session-routes.ts';
import { sitePolicyOf } from './modules/access/site-policies.ts';
import { registerAdserverAdmin } from './modules/adserver/routes.ts';
import { auditAdminWrites, auditAdvertiserWrites, registerAuditRoutes } from './modules/audit/routes.ts';
import { registerCatalog } from './modules/catalog/routes.ts';
import { registerComplianceAdmin } from './modules/compliance/routes.ts';
import { registerConsole } from './modules/console/static.ts';
import { registerCreativeFiles, registerCreativesAdmin } from './modules/creatives/routes.ts';
import { registerDelivery } from './modules/delivery/routes.ts';
import { loadPages } from './modules/docs/pages.ts';
import { registerDocs } from './modules/docs/routes.ts';
import { DocsService } from './modules/docs/service.ts';
import { registerMarketAdmin } from './modules/market/routes.ts';
import { registerOps } from './modules/ops/routes.ts';
import { registerPeople } from './modules/people/routes.ts';
import { registerPlayerData } from './modules/player-data/routes.ts';
import { PORTAL_PREFIX, registerPortal } from './modules/portal/routes.ts';
import { registerAggregateAdmin } from './modules/reporting/aggregate-routes.ts';
import { registerTrackingOps } from './modules/reporting/ops-routes.ts';
import { registerReportingAdmin } from './modules/reporting/routes.ts';
import { registerSalesAgent, registerSalesAgentAdmin } from './modules/sales-agent/routes.ts';
import {
  registerPostback,
  registerTrackingAdmin,
  registerTrackingPublic,
} from './modules/tracking/routes.ts';
import { registerWebhookAdmin } from './modules/webhooks/routes.ts';
import { requireAuthFirst } from './plugins/auth.ts';
import { clientErrorHandler, frameworkErrors, registerErrorHandling } from './plugins/errors.ts';
import { registerOpenApi } from './plugins/openapi.ts';
import { registerRequestLog, requestId } from './plugins/request-log.ts';
import { registerRouteTable } from './plugins/route-table.ts';
import { restrictToSites } from './plugins/site-scope.ts';
import { registerStrictQuery } from './plugins/strict-query.ts';
import { registerValidation } from './plugins/validation.ts';
import { createServices, type ServiceDeps, type Services } from './services.ts';

/** Everything a running app needs from outside; tests build their own. */
export interface AppDeps extends Omit<ServiceDeps, 'log'> {
  /** Pino logger options or `false`; defaults from config. */
  logger?: boolean | object;
  /** Where the built console is (default `dist/console`); tests build their own copy. */
  consoleDir?: string;
}

/** The service graph plus the documentation service, as `app.services`. */
export type AppServices = Services & { docs: DocsService };

const ADMIN_PREFIX = '/api/admin/v1';

declare module 'fastify' {
  interface FastifyInstance {
    services: AppServices;
  }
}

/** Builds the HTTP application with every module registered. Does not listen. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const logStream = deps.logger ? undefined : logDestination({ shared: config.workers > 1 });
  const app = Fastify({
    logger: deps.logger ?? { ...loggerOptions(config), stream: logStream?.stream },
    // registerRequestLog writes the one line per request; Fastify's own pair is off.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLogger,
    genReqId: requestId,
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    routerOptions: { maxParamLength: 200 },
    // Registration does real work (static file scan, MCP server); a busy machine must not fail start.
    pluginTimeout: 60_000,
    frameworkErrors,
    clientErrorHandler,
  });
  registerRouteTable(app);
  registerRequestLog(app);
  registerErrorHandling(app);
  registerStrictQuery(app);
  registerValidation(app);

  // An empty POST/PUT/PATCH is validated as `{}` so it gets a field-level 422, not a type error.
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined && ['POST', 'PUT', 'PATCH'].includes(request.method)) request.body = {};
    done();
  });

  const services = await createServices({
    ...deps,
    slowStatement: (s, database) =>
      app.log.warn({ statement: s.statement, ms: s.ms, times: s.times, database }, 'slow database statement'),
    log: {
      info: (msg) => app.log.info(msg),
      warn: (msg, err) => (err === undefined ? app.log.warn(msg) : app.log.warn({ err }, msg)),
      error: (msg, err) => (err === undefined ? app.log.error(msg) : app.log.error({ err }, msg)),
    },
  });
  const docs = new DocsService(loadPages(), config.docsBase, config.publicUrl);
  const { access, catalog, compliance, delivery, readiness, metrics, audit } = services;
  const { tracking, reporting, adserver, market, aggregates, backfills, webhooks, playerData } = services;
  app.decorate('services', { ...services, docs });
  if (logStream)
    metrics.counterFrom(
      'podium_log_dropped_bytes_total',
      'Log bytes given up because standard output stayed full (a log reader that stalled)',
      () => logStream.droppedBytes(),
    );
  // Stops the scheduler and writes clicks waiting for their group commit before the database closes.
  app.addHook('onClose', () => services.close());

  app.addHook('onResponse', (request, reply, done) => {
    metrics.observeHttp(request.method, request.routePattern, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  await registerConsole(app, { dir: deps.consoleDir, publicUrl: config.publicUrl });

  await registerOps(app, { readiness, metrics, metricsToken: config.metricsToken });
  // Every admin module registers inside this scope, so each of its writes is audited.
  await app.register(
    async (admin) => {
      // Console sign-in: the admin hook also accepts the session cookie (with CSRF header on
      // writes). Only the admin API reads or sets cookies, so only its requests parse them.
      await admin.register(fastifyCookie);
      requireAuthFirst(admin);
      restrictToSites(admin, { prefix: ADMIN_PREFIX, resolver: access.siteResolver, policyOf: sitePolicyOf });
      auditAdminWrites(admin, audit, ADMIN_PREFIX);
      await registerAccess(admin, access);
      await registerCatalog(admin, catalog, access);
      await registerComplianceAdmin(admin, { compliance, catalog, tokens: access });
      await registerAuditRoutes(admin, audit, access);
      await registerTrackingAdmin(admin, { tracking, tokens: access });
      await registerReportingAdmin(admin, { reporting, tokens: access });
      await registerAggregateAdmin(admin, { aggregates, tokens: access });
      await registerTrackingOps(admin, { reporting, aggregates, backfills, tokens: access });
      await registerPlayerData(admin, { playerData, tokens: access });
      await registerSessionRoutes(
        admin,
        access.sessions,
        services.people,
        ADMIN_PREFIX,
        config.publicUrl,
        access.throttle,
        services.sso,
      );
      await registerPeople(admin, { people: services.people, access });
      await registerAdserverAdmin(admin, { adserver, tokens: access });
      await registerMarketAdmin(admin, { market, tokens: access });
      await registerSalesAgentAdmin(admin, { agent: services.salesAgent, tokens: access });
      await registerCreativesAdmin(admin, {
        creatives: services.creatives,
        tokens: access,
        maxBytes: config.creativeMaxBytes,
      });
      await registerWebhookAdmin(admin, { webhooks, tokens: access });
      registerOpenApi(admin, {
        title: 'Podium admin API',
        description:
          'Editorial catalog, tokens, tracking programmes and stats, ad-server connections and bookings, the audit log. Errors carry {code, message, details?} at the root.',
        publicUrl: config.publicUrl,
      });
    },
    { prefix: ADMIN_PREFIX },
  );
  await app.register(
    async (scope) => {
      requireAuthFirst(scope);
      await registerDelivery(scope, { tokens: access, delivery, config });
    },
    { prefix: '/api/v1' },
  );
  await app.register(async (scope) => registerTrackingPublic(scope, { tracking, config }));
  await app.register(async (scope) => registerCreativeFiles(scope, services.creatives));
  await app.register(async (scope) => registerPostback(scope, tracking, access.throttle));
  await app.register(
    async (scope) => {
      requireAuthFirst(scope);
      auditAdvertiserWrites(scope, audit, PORTAL_PREFIX);
      await registerPortal(scope, {
        portal: services.portal,
        verify: (token) => services.salesAgent.authenticate(token),
        throttle: access.throttle,
        maxBytes: config.creativeMaxBytes,
      });
      registerOpenApi(scope, {
        title: 'Podium advertiser portal API',
        description:
          "An advertiser's own products, availability, reservations, delivery and statements, with its advertiser token. Errors carry {code, message, details?} at the root.",
        publicUrl: config.publicUrl,
      });
    },
    { prefix: PORTAL_PREFIX },
  );
  await app.register(async (scope) =>
    registerSalesAgent(scope, {
      agent: services.salesAgent,
      throttle: access.throttle,
      version: PACKAGE_VERSION,
    }),
  );
  if (!config.docsPort) await app.register(async (scope) => registerDocs(scope, docsOptions(deps, docs)));
  return app;
}

function docsOptions(deps: Pick<AppDeps, 'config' | 'now' | 'redis'>, docs: DocsService) {
  const now = deps.now ?? (() => new Date());
  const redis = deps.redis && { client: deps.redis, prefix: deps.config.redisPrefix };
  return { docs, rateMax: deps.config.docsRateLimit, nowMs: () => now().getTime(), redis };
}

/** The documentation server on its own (config `docsPort`): no database, no account data. */
export async function buildDocsApp(
  deps: Pick<AppDeps, 'config' | 'now' | 'logger' | 'redis'>,
): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    logger: deps.logger ?? { level: config.logLevel },
    trustProxy: config.trustProxy,
    frameworkErrors,
    clientErrorHandler,
  });
  registerErrorHandling(app);
  const docs = new DocsService(loadPages(), config.docsBase, config.publicUrl);
  await app.register(async (scope) => registerDocs(scope, docsOptions(deps, docs)));
  return app;
}
