import fastifyCookie from '@fastify/cookie';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { Config } from './config.ts';
import type { ChangeBus } from './db/changes.ts';
import type { Db, Queryable } from './db/index.ts';
import { pendingMigrations } from './db/migrate.ts';
import { openReadDb } from './db/read-replica.ts';
import { Scheduler } from './lib/jobs.ts';
import { loggerOptions } from './lib/logger.ts';
import { OutboundClient, type OutboundOptions, outboundOptionsFrom } from './lib/outbound.ts';
import type { Redis } from './lib/redis.ts';
import { sealerFromConfig } from './lib/seal.ts';
import { registerAccess } from './modules/access/routes.ts';
import { AccessService } from './modules/access/service.ts';
import { registerSessionRoutes } from './modules/access/session-routes.ts';
import { registerAdserverAdmin } from './modules/adserver/routes.ts';
import { AdserverService } from './modules/adserver/service.ts';
import { auditAdminWrites, registerAuditRoutes } from './modules/audit/routes.ts';
import { AuditLog } from './modules/audit/service.ts';
import { registerCatalog } from './modules/catalog/routes.ts';
import { CatalogService } from './modules/catalog/service.ts';
import { registerConsole } from './modules/console/static.ts';
import { registerDelivery } from './modules/delivery/routes.ts';
import { DeliveryService } from './modules/delivery/service.ts';
import { loadPages } from './modules/docs/pages.ts';
import { registerDocs } from './modules/docs/routes.ts';
import { DocsService } from './modules/docs/service.ts';
import { Metrics } from './modules/ops/metrics.ts';
import { Readiness } from './modules/ops/readiness.ts';
import { registerOps } from './modules/ops/routes.ts';
import { registerAggregateJob } from './modules/tracking/aggregate-job.ts';
import { AggregateRepository } from './modules/tracking/aggregate-repository.ts';
import { registerAggregateAdmin } from './modules/tracking/aggregate-routes.ts';
import { OperatorAggregates } from './modules/tracking/aggregates.ts';
import { registerPartitionJob } from './modules/tracking/partitions.ts';
import {
  registerPostback,
  registerTrackingAdmin,
  registerTrackingPublic,
} from './modules/tracking/routes.ts';
import { TrackingService } from './modules/tracking/service.ts';
import { registerWebhookAdmin } from './modules/webhooks/routes.ts';
import { WebhookService } from './modules/webhooks/service.ts';
import { requireAuthFirst } from './plugins/auth.ts';
import { clientErrorHandler, frameworkErrors, registerErrorHandling } from './plugins/errors.ts';
import { registerOpenApi } from './plugins/openapi.ts';
import { registerRequestLog, requestId } from './plugins/request-log.ts';
import { registerRouteTable } from './plugins/route-table.ts';
import { registerStrictQuery } from './plugins/strict-query.ts';
import { registerValidation } from './plugins/validation.ts';

/** Everything a running app needs from outside; tests build their own. */
export interface AppDeps {
  config: Config;
  db: Db;
  /** Where report queries go; default: a replica pool on DATABASE_READ_URL, or `db` itself. */
  readDb?: Queryable;
  bus: ChangeBus;
  /** Wall clock; injectable so publish windows can be tested. */
  now?: () => Date;
  /** The fleet's shared Redis, when `REDIS_URL` is configured. */
  redis?: Redis;
  /** Pino logger options or `false`; defaults from config. */
  logger?: boolean | object;
  /** Test-only outbound switches (loopback fixtures); never set by the server. */
  outboundTestOnly?: OutboundOptions['testOnly'];
}

export interface Services {
  access: AccessService;
  catalog: CatalogService;
  delivery: DeliveryService;
  readiness: Readiness;
  metrics: Metrics;
  audit: AuditLog;
  scheduler: Scheduler;
  docs: DocsService;
  tracking: TrackingService;
  adserver: AdserverService;
  aggregates: OperatorAggregates;
  webhooks: WebhookService;
}

const ADMIN_PREFIX = '/api/admin/v1';
/** How often each process looks for due webhook deliveries (other processes' events, retries). */
const WEBHOOK_POLL_MS = 1000;
/** How often publish-window boundaries are looked for, and how far back (a longer outage sends nothing late). */
const WINDOW_CHECK_MS = 60_000;
const WINDOW_LOOKBACK_MS = 86_400_000;

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
  }
}

/** Builds the HTTP application with every module registered. Does not listen. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    logger: deps.logger ?? loggerOptions(config),
    // registerRequestLog writes the one line per request; Fastify's own pair is off.
    logController: new LogController({ disableRequestLogging: true }),
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
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && ['POST', 'PUT', 'PATCH'].includes(request.method)) request.body = {};
  });

  const now = deps.now ?? (() => new Date());
  const metrics = new Metrics();
  const outbound = new OutboundClient(
    outboundOptionsFrom(config, deps.outboundTestOnly, (r) =>
      metrics.outbound.labels(r.target, r.kind).observe(r.seconds),
    ),
  );
  app.addHook('onClose', () => outbound.close());
  const sealer = sealerFromConfig(config, (msg) => app.log.warn(msg));
  const webhooks = new WebhookService(deps.db, sealer, outbound, now, {
    pollMs: WEBHOOK_POLL_MS,
    sendTimeoutMs: config.outboundTimeoutMs,
    log: (msg, err) => app.log.warn({ err }, msg),
  });
  // Before the outbound client closes: sends in flight finish (or leave their lease to another process).
  app.addHook('onClose', () => webhooks.worker.stop());
  const catalog = new CatalogService(deps.db, deps.bus, config, now, webhooks);
  const access = new AccessService(deps.db, deps.bus, catalog, now);
  const delivery = new DeliveryService(deps.db, deps.bus, now, `${config.publicUrl}/api/v1`);
  const docs = new DocsService(loadPages(), config.docsBase, config.publicUrl);
  const audit = new AuditLog(deps.db, (err) => app.log.error({ err }, 'audit write failed'));
  const readiness = new Readiness();
  // Modules register their periodic work here; `startServer` starts it, app.close() drains it.
  const scheduler = new Scheduler(deps.db, now, (msg, err) => app.log.warn({ err }, msg));
  app.addHook('onClose', () => scheduler.stop());
  let reads = deps.readDb;
  if (!reads) {
    const replica = await openReadDb(deps.db, config.databaseReadUrl);
    app.addHook('onClose', () => replica.close());
    reads = replica;
  }
  const tracking: TrackingService = new TrackingService(
    deps.db,
    catalog,
    config,
    now,
    metrics.tracking((): number => tracking.pendingHits),
    reads,
  );
  registerPartitionJob(scheduler, tracking.partitions);
  const adserver = new AdserverService(deps.db, sealer, outbound, now, {
    trailingDays: config.adserverTrailingDays,
    counts: (codes, from, to, timezone) => tracking.countsByCode(codes, from, to, timezone),
  });
  // Delivery pulls run once per slot across every process; a run may use most of its slot.
  const reportEveryMs = config.adserverReportMinutes * 60_000;
  scheduler.register({
    name: 'adserver-reports',
    everyMs: reportEveryMs,
    run: async (signal) => {
      await adserver.reports.pullAll(signal, Math.min(reportEveryMs * 0.8, 600_000));
    },
  });
  const aggregates = new OperatorAggregates(
    new AggregateRepository(deps.db, reads),
    sealer,
    outbound,
    config,
    now,
  );
  registerAggregateJob(scheduler, aggregates, config);
  // Publish windows are evaluated at read time; this job tells webhooks when a boundary passed.
  scheduler.register({
    name: 'webhook-windows',
    everyMs: WINDOW_CHECK_MS,
    run: async () => {
      const at = now();
      await webhooks.recordAll(await catalog.windowChanges(new Date(at.getTime() - WINDOW_LOOKBACK_MS), at));
    },
  });
  scheduler.register({
    name: 'webhook-retention',
    everyMs: 3_600_000,
    run: async () => void (await webhooks.prune()),
  });
  app.decorate('services', {
    access,
    catalog,
    delivery,
    readiness,
    metrics,
    audit,
    scheduler,
    docs,
    tracking,
    adserver,
    aggregates,
    webhooks,
  });
  // Clicks waiting for their group commit are written before the database closes.
  app.addHook('onClose', () => tracking.drain());

  readiness.register('database', async () => {
    await deps.db.query('SELECT 1');
    return null;
  });
  readiness.register('click_buffer', async () => tracking.clickBufferProblem());
  readiness.register('migrations', async () => {
    const pending = await pendingMigrations(deps.db);
    return pending.length ? `${pending.length} pending` : null;
  });
  app.addHook('onResponse', async (request, reply) => {
    metrics.httpDuration
      .labels(request.method, request.routeOptions.url ?? 'unmatched', String(reply.statusCode))
      .observe(reply.elapsedTime / 1000);
  });
  metrics.counterFrom(
    'podium_edition_cache_hits_total',
    'Edition cache hits',
    () => delivery.cacheStats().hits,
  );
  metrics.counterFrom(
    'podium_edition_cache_misses_total',
    'Edition cache misses (site sets loaded from the database)',
    () => delivery.cacheStats().misses,
  );

  metrics.jobGauges(() => scheduler.jobStats());
  // Not a readiness part: without Redis a process still serves (docs limits fall back to open).
  const { redis } = deps;
  if (redis)
    metrics.gaugeFrom('podium_redis_up', 'Whether the link to Redis is ready (1) or not (0)', () =>
      redis.status === 'ready' ? 1 : 0,
    );
  // Console sign-in: the admin hook also accepts the session cookie (with CSRF header on writes).
  await app.register(fastifyCookie);
  await registerConsole(app);

  await registerOps(app, { readiness, metrics, metricsToken: config.metricsToken });
  // Every admin module registers inside this scope, so each of its writes is audited.
  await app.register(
    async (admin) => {
      requireAuthFirst(admin);
      auditAdminWrites(admin, audit, ADMIN_PREFIX);
      await registerAccess(admin, access);
      await registerCatalog(admin, catalog, access);
      await registerAuditRoutes(admin, audit, access);
      await registerTrackingAdmin(admin, { tracking, tokens: access });
      await registerAggregateAdmin(admin, { aggregates, tokens: access });
      await registerSessionRoutes(admin, access.sessions, ADMIN_PREFIX);
      await registerAdserverAdmin(admin, { adserver, tokens: access });
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
  await app.register(async (scope) => registerPostback(scope, tracking));
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
