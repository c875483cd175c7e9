import type { Config } from './config.ts';
import type { ChangeBus } from './db/changes.ts';
import { PGLITE_FREEZING, PgliteFreezer, registerFreezeJob } from './db/freeze.ts';
import type { Db, Queryable } from './db/index.ts';
import { pendingMigrations } from './db/migrate.ts';
import { openReadDb } from './db/read-replica.ts';
import type { SlowStatement } from './db/slow-statements.ts';
import { registerCheckpointJob } from './db/wal-checkpoint.ts';
import { AuthThrottle } from './lib/auth-throttle.ts';
import { Scheduler } from './lib/jobs.ts';
import { mailerFromConfig } from './lib/mailer.ts';
import { OutboundClient, type OutboundOptions, outboundOptionsFrom } from './lib/outbound.ts';
import type { Redis } from './lib/redis.ts';
import { type ResealReport, sealerFromConfig } from './lib/seal.ts';
import { AccessService } from './modules/access/service.ts';
import { AdserverService } from './modules/adserver/service.ts';
import { AuditLog } from './modules/audit/service.ts';
import { CatalogService } from './modules/catalog/service.ts';
import { ComplianceService, RECHECK_EVERY_MS, withholdingAudit } from './modules/compliance/service.ts';
import { CreativeService } from './modules/creatives/service.ts';
import { creativeStoreFrom } from './modules/creatives/storage.ts';
import { DeliveryService } from './modules/delivery/service.ts';
import { MarketNotices } from './modules/market/notices.ts';
import { MarketService } from './modules/market/service.ts';
import { Metrics } from './modules/ops/metrics.ts';
import { Readiness } from './modules/ops/readiness.ts';
import { PeopleService } from './modules/people/service.ts';
import { ResetThrottle, SignInThrottle } from './modules/people/sign-in-throttle.ts';
import { SingleSignOn, ssoSettingsFrom } from './modules/people/sso.ts';
import { PlayerData } from './modules/player-data/service.ts';
import { PortalService } from './modules/portal/service.ts';
import { registerAggregateJob } from './modules/reporting/aggregate-job.ts';
import { AggregateRepository } from './modules/reporting/aggregate-repository.ts';
import { OperatorAggregates } from './modules/reporting/aggregates.ts';
import { BackfillRepository } from './modules/reporting/backfill-repository.ts';
import { AggregateBackfills, registerBackfillJob } from './modules/reporting/backfills.ts';
import { registerRollupZoneJob } from './modules/reporting/rollup-zones.ts';
import { ReportingService } from './modules/reporting/service.ts';
import { SalesAgentService } from './modules/sales-agent/service.ts';
import { registerPartitionJob } from './modules/tracking/partitions.ts';
import { TrackingService } from './modules/tracking/service.ts';
import { WebhookService } from './modules/webhooks/service.ts';

/** How often each process looks for due webhook deliveries (other processes' events, retries). */
const WEBHOOK_POLL_MS = 1000;
/** How often publish-window boundaries are looked for, and how far back (a longer outage sends nothing late). */
const WINDOW_CHECK_MS = 60_000;
const WINDOW_LOOKBACK_MS = 86_400_000;

/** Where services report trouble that has no caller to throw to (background writes, jobs). */
export interface ServiceLog {
  info?(msg: string): void;
  warn(msg: string, err?: unknown): void;
  error(msg: string, err?: unknown): void;
}

/** Everything the services need from outside: the HTTP app and the CLI both build them from this. */
export interface ServiceDeps {
  config: Config;
  db: Db;
  /** Where report queries go; default: a replica pool on DATABASE_READ_URL, or `db` itself. */
  readDb?: Queryable;
  bus: ChangeBus;
  log: ServiceLog;
  /** Wall clock; injectable so publish windows can be tested. */
  now?: () => Date;
  /** The fleet's shared Redis, when `REDIS_URL` is configured. */
  redis?: Redis;
  /** Test-only outbound switches (loopback fixtures); never set by the server. */
  outboundTestOnly?: OutboundOptions['testOnly'];
  /** Where statements over `slowStatementMs` on the database or its replica are reported (slow-statements.ts). */
  slowStatement?: (s: SlowStatement, database: 'primary' | 'replica') => void;
}

/** The service graph: one instance of each module's service, wired once. */
export interface Services {
  access: AccessService;
  /** Users, roles, invitations, password sign-in. */
  people: PeopleService;
  /** OpenID Connect single sign-on; undefined when PODIUM_SSO_ISSUER is unset. */
  sso: SingleSignOn | undefined;
  catalog: CatalogService;
  compliance: ComplianceService;
  delivery: DeliveryService;
  readiness: Readiness;
  metrics: Metrics;
  audit: AuditLog;
  scheduler: Scheduler;
  /** Tracking ingestion: programmes, links, clicks, impressions and postbacks written as rows. */
  tracking: TrackingService;
  /** Reports over those rows: stats, suggested orders, conversions and the postback log, rollups. */
  reporting: ReportingService;
  adserver: AdserverService;
  /** The marketplace: advertisers, products, availability, reservations and their approval. */
  market: MarketService;
  /** The notices owed to advertisers when their reservations are booked, rejected or expire (a job sends them). */
  marketNotices: MarketNotices;
  /** The AdCP sales agent: advertisers' buying agents discover products, book and read delivery. */
  salesAgent: SalesAgentService;
  /** The advertiser portal: an advertiser's own products, reservations, delivery and statements. */
  portal: PortalService;
  /** Creatives hosted by the marketplace: uploads, storage, moderation, follow-up pushes. */
  creatives: CreativeService;
  aggregates: OperatorAggregates;
  /** Operator report backfills requested over the admin API, run by this process's job runner. */
  backfills: AggregateBackfills;
  webhooks: WebhookService;
  /** Data-protection requests about one player: export and erase. */
  playerData: PlayerData;
  /** Re-seals every secret at rest not sealed with the current key: ad-server API keys, operator report keys, webhook signing secrets, TOTP secrets of two-factor sign-in. */
  rotateSecretKeys(): Promise<KeyRotation>;
  /** Stops the scheduler, writes buffered clicks, closes outbound connections and the replica pool. The database stays open. */
  close(): Promise<void>;
}

/** What `rotateSecretKeys` did: totals over every kind of secret, and each kind on its own. */
export interface KeyRotation extends ResealReport {
  kinds: {
    adserver_api_keys: ResealReport;
    report_keys: ResealReport;
    webhook_secrets: ResealReport;
    totp_secrets: ResealReport;
  };
}

/**
 * Builds every database-backed service with the configured options, registers the periodic
 * jobs (the scheduler is not started), the readiness checks and the service metrics.
 */
export async function createServices(deps: ServiceDeps): Promise<Services> {
  const { config, db, bus, log } = deps;
  const replica = deps.readDb ? undefined : await openReadDb(db, config.databaseReadUrl);
  const { slowStatement } = deps;
  if (slowStatement) {
    db.watchSlow(config.slowStatementMs, (s) => slowStatement(s, 'primary'));
    replica?.watchSlow(config.slowStatementMs, (s) => slowStatement(s, 'replica'));
  }
  const reads = deps.readDb ?? replica!;
  const now = deps.now ?? (() => new Date());
  const metrics = new Metrics();
  const outbound = new OutboundClient(
    outboundOptionsFrom(config, deps.outboundTestOnly, (r) =>
      metrics.outbound.labels(r.target, r.kind).observe(r.seconds),
    ),
  );
  const sealer = sealerFromConfig(config, (msg) => log.warn(msg));
  const webhooks = new WebhookService(db, sealer, outbound, now, {
    pollMs: WEBHOOK_POLL_MS,
    sendTimeoutMs: config.outboundTimeoutMs,
    log: (msg, err) => log.warn(msg, err),
  });
  const compliance = new ComplianceService(db, bus, now);
  const catalog = new CatalogService(db, bus, config, now, webhooks, compliance);
  const throttle = AuthThrottle.create({
    max: config.authFailureLimit,
    blockMs: config.authBlockSeconds * 1000,
    nowMs: () => now().getTime(),
    redis: deps.redis && { client: deps.redis, prefix: config.redisPrefix },
    onError: (err) => log.warn('auth throttle: Redis failed, failures are not counted meanwhile', err),
  });
  const access = new AccessService(db, bus, catalog, now, throttle);
  const signInThrottle = SignInThrottle.create({
    addressMax: config.authFailureLimit,
    addressBlockMs: config.authBlockSeconds * 1000,
    nowMs: () => now().getTime(),
    redis: deps.redis && { client: deps.redis, prefix: config.redisPrefix },
    onError: (err) => log.warn('sign-in throttle: Redis failed, failures are not counted meanwhile', err),
  });
  const mailer = mailerFromConfig(config);
  const resets = ResetThrottle.create({
    enabled: config.authFailureLimit > 0,
    nowMs: () => now().getTime(),
    redis: deps.redis && { client: deps.redis, prefix: config.redisPrefix },
    onError: (err) => log.warn('reset throttle: Redis failed, requests are not counted meanwhile', err),
  });
  const people = new PeopleService(
    db,
    bus,
    access.sessions,
    signInThrottle,
    now,
    config.publicUrl,
    { info: (msg) => log.info?.(msg), warn: (msg) => log.warn(msg) },
    { mailer, resets, sealer },
  );
  const ssoSettings = ssoSettingsFrom(config);
  const sso = ssoSettings && new SingleSignOn(ssoSettings, outbound, sealer, now);
  const delivery = new DeliveryService(db, bus, now, `${config.publicUrl}/api/v1`, (err) =>
    log.error('delivery: gzipping an answer failed', err),
  );
  const audit = new AuditLog(db, (err) => log.error('audit write failed', err));
  const readiness = new Readiness();
  // Modules register their periodic work here; the server starts it, close() drains it.
  const scheduler = new Scheduler(db, now, (msg, err) => log.warn(msg, err));
  // Ingestion writes rows; reporting moves each click batch's rollup deltas and answers reports.
  const tracking: TrackingService = new TrackingService(
    db,
    catalog,
    config,
    now,
    metrics.tracking((): number => tracking.pendingHits),
    reads,
    (deltas) => reporting.clicksWritten(deltas),
    compliance,
  );
  const reporting = new ReportingService(
    db,
    reads,
    catalog,
    now,
    (entry) => tracking.replay(entry),
    (msg, err) => log.error(msg, err),
  );
  const playerData = new PlayerData(db, {
    playerRef: (id) => tracking.playerRef(id),
    programSlug: (id) => tracking.programSlug(id),
  });
  registerCheckpointJob(scheduler, db);
  if (db.kind === 'pglite') {
    const freezer = new PgliteFreezer(db, PGLITE_FREEZING, (msg) => log.warn(msg));
    registerFreezeJob(scheduler, freezer);
    metrics.gaugeFrom(
      'podium_db_xid_age',
      'Transactions since the oldest unfrozen one of the embedded database (PostgreSQL stops taking writes near 2^31)',
      () => freezer.oldestAge,
    );
  }
  registerPartitionJob(scheduler, tracking.partitions);
  registerRollupZoneJob(scheduler, reporting.rollupZones);
  const adserver = new AdserverService(db, sealer, outbound, now, {
    trailingDays: config.adserverTrailingDays,
    counts: (codes, from, to, timezone) => tracking.countsByCode(codes, from, to, timezone),
    bannerCode: (input) => tracking.bannerCode(input),
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
  const creatives = new CreativeService(
    db,
    creativeStoreFrom(config, db),
    adserver.bookings,
    config,
    (msg, err) => log.warn(msg, err),
  );
  // A reservation's approval carries the creatives of its lines to the booking it becomes.
  const market = new MarketService(
    db,
    adserver,
    audit,
    now,
    { holdMinutes: config.marketHoldMinutes, forecastMaxAgeMinutes: config.marketForecastMaxAgeMinutes },
    webhooks,
    creatives,
  );
  // Format ids name this server's own creative formats (AdCP's agent_url of a format).
  // A buyer's creative is fetched from its asset URL through the SSRF-guarded client, at most the
  // heaviest format's weight (anything heavier is refused by the upload rules anyway).
  const salesAgent = new SalesAgentService(db, market, `${config.publicUrl}/adcp`, now, {
    creatives,
    outbound,
    maxAssetBytes: Math.max(...Object.values(config.creativeMaxBytes)),
    bookingDelivery: (id) => adserver.delivery(id),
  });
  scheduler.register({
    name: 'market-hold-expiry',
    everyMs: 60_000,
    run: async () => void (await market.expireDue()),
  });
  const marketNotices = new MarketNotices(db, market, mailer, log, now);
  scheduler.register({
    name: 'market-notices',
    everyMs: 30_000,
    run: async (signal) => void (await marketNotices.sendDue(signal)),
  });
  scheduler.register({
    name: 'market-availability',
    everyMs: 60_000,
    run: async (signal) => void (await market.refreshStale(signal)),
  });
  // Follow-up pushes of approved creatives: started at approval, retried here until sent.
  scheduler.register({
    name: 'creative-followups',
    everyMs: 60_000,
    run: async (signal) => void (await creatives.drainFollowups(signal)),
  });
  // Statements issued are compared with the latest pulled figures; a change becomes an adjustment.
  scheduler.register({
    name: 'market-statements',
    everyMs: 3_600_000,
    run: async (signal) => void (await market.statements.reconcileRecent(signal)),
  });
  const aggregates = new OperatorAggregates(
    new AggregateRepository(db, reads),
    sealer,
    outbound,
    config,
    now,
  );
  registerAggregateJob(scheduler, aggregates, config);
  const backfills = new AggregateBackfills(new BackfillRepository(db), aggregates, now, (msg, err) =>
    log.warn(msg, err),
  );
  registerBackfillJob(scheduler, backfills);
  // A rule change re-checks the live editions at once; this job catches licences whose validity
  // began or ended since (and brands changed by an import), each withholding change audited.
  compliance.enforceWith(async () => {
    const changes = await catalog.publishing.enforceCompliance();
    for (const c of changes) await audit.record(withholdingAudit(c));
    return changes;
  });
  scheduler.register({
    name: 'compliance-recheck',
    everyMs: RECHECK_EVERY_MS,
    run: async () => void (await compliance.rulesChanged()),
  });
  // Publish windows are evaluated at read time; this job tells webhooks when a boundary passed.
  scheduler.register({
    name: 'webhook-windows',
    everyMs: WINDOW_CHECK_MS,
    run: async () => {
      const at = now();
      await webhooks.recordAll(
        await catalog.publishing.windowChanges(new Date(at.getTime() - WINDOW_LOOKBACK_MS), at),
      );
    },
  });
  scheduler.register({
    name: 'webhook-retention',
    everyMs: 3_600_000,
    run: async () => void (await webhooks.prune()),
  });
  // The scheduler's own rows: one per job and slot, kept eight days.
  scheduler.register({
    name: 'job-runs-retention',
    everyMs: 3_600_000,
    run: async (signal) => void (await scheduler.pruneRuns(signal)),
  });

  readiness.register('database', async () => {
    // Checked first: such a database refuses every statement, SELECT 1 too.
    const refused = db.diskProblem();
    if (refused) return refused;
    await db.query('SELECT 1');
    return null;
  });
  readiness.register('click_buffer', async () => tracking.clickBufferProblem());
  readiness.register('migrations', async () => {
    const pending = await pendingMigrations(db);
    return pending.length ? `${pending.length} pending` : null;
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
  metrics.gaugeFrom(
    'podium_delivery_gzip_documents',
    'Single toplists held gzipped for gzip answers (pages of the lists count in the page memo)',
    () => delivery.gzipStats().documents,
  );
  metrics.gaugeFrom(
    'podium_delivery_gzip_bytes',
    'Gzip bytes held for single toplists, beside their stored bytes while their site set is loaded',
    () => delivery.gzipStats().bytes,
  );
  metrics.jobGauges(() => scheduler.jobStats());
  // Not a readiness part: without Redis a process still serves (docs limits fall back to open).
  const { redis } = deps;
  if (redis)
    metrics.gaugeFrom('podium_redis_up', 'Whether the link to Redis is ready (1) or not (0)', () =>
      redis.status === 'ready' ? 1 : 0,
    );

  let closing: Promise<void> | undefined;
  return {
    access,
    people,
    sso,
    catalog,
    compliance,
    delivery,
    readiness,
    metrics,
    audit,
    scheduler,
    tracking,
    reporting,
    adserver,
    market,
    marketNotices,
    salesAgent,
    portal: new PortalService(market, creatives, (id) => adserver.delivery(id)),
    creatives,
    aggregates,
    backfills,
    webhooks,
    playerData,
    async rotateSecretKeys() {
      const kinds = {
        adserver_api_keys: await adserver.connections.rotateKeys(),
        report_keys: await aggregates.rotateKeys(),
        webhook_secrets: await webhooks.rotateKeys(),
        totp_secrets: await people.rotateTotpKeys(),
      };
      const all = Object.values(kinds);
      return {
        resealed: all.reduce((n, k) => n + k.resealed, 0),
        unreadable: all.flatMap((k) => k.unreadable),
        total: all.reduce((n, k) => n + k.total, 0),
        kinds,
      };
    },
    close() {
      closing ??= (async () => {
        // A running backfill gives its remaining days back to the queue before the scheduler stops.
        await backfills.stop();
        await scheduler.stop();
        // Before the outbound client closes: sends in flight finish (or leave their lease to another process).
        await webhooks.worker.stop();
        // Clicks waiting for their group commit are written before the database closes.
        await tracking.drain();
        await reporting.stop();
        await outbound.close();
        await replica?.close();
        mailer.close();
      })();
      return closing;
    },
  };
}
