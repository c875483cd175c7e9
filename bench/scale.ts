/**
 * Tracking at scale on PostgreSQL: fills a dedicated database with synthetic clicks over 13 months
 * (generated in SQL, month by month, rollups built the way migration 0021 builds them) and a
 * conversion per ~100 clicks, then measures:
 *   - p50/p99 of a 30-day stats query (site × toplist × position × brand × programme by day, one
 *     page of 1000 rows, days cut in a fixed zone) at random 30-day windows;
 *   - p50/p99 of a reconciliation month of one programme;
 *   - click write throughput as /go's group commit does it (batches of 500, 4 writers): the
 *     partitioned table with its rollups, beside the plain table of before (migration 0002's DDL);
 *   - bytes on disk per million clicks (table and indexes), and the rollups' size;
 *   - how long building the daily rollups of the zones in use takes (what a zone change costs),
 *     and a few 30-day stats queries in a zone that is not maintained (the 15-minute fallback);
 *   - a few 30-day `by=sub_id` reports (raw clicks by time), of one programme and of all.
 * Run: npm run bench scale   (needs DATABASE_URL or BENCH_SCALE_URL; BENCH_SCALE_CLICKS sets the
 * row count, default 1 000 000; the figure is 50 000 000. The database BENCH_SCALE_DB
 * (default `podium_bench_scale`) is created and dropped unless BENCH_SCALE_KEEP=1;
 * BENCH_SCALE_REUSE=1 measures a kept one again after applying any pending migration.)
 */
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { type Db, openDb } from '../src/db/index.ts';
import { migrate } from '../src/db/migrate.ts';
import { ulid } from '../src/lib/ids.ts';
import { AggregateRepository } from '../src/modules/reporting/aggregate-repository.ts';
import { ClickDeltaRepository } from '../src/modules/reporting/click-delta-repository.ts';
import { RollupZoneRepository } from '../src/modules/reporting/rollup-zone-repository.ts';
import { RollupZones } from '../src/modules/reporting/rollup-zones.ts';
import { StatsRepository } from '../src/modules/reporting/stats-repository.ts';
import { clickRows, clickRowsParam, TrackingRepository } from '../src/modules/tracking/repository.ts';
import type { ClickRow } from '../src/modules/tracking/types.ts';

const CLICKS = Number(process.env.BENCH_SCALE_CLICKS ?? 1_000_000);
const DB_NAME = process.env.BENCH_SCALE_DB ?? 'podium_bench_scale';
const REUSE = process.env.BENCH_SCALE_REUSE === '1';
const MONTHS = 13;
const SITES = 20;
const TOPLISTS = 3;
const POSITIONS = 10;
const BRANDS = 40;
const PROGRAMS = 8;
const QUERY_RUNS = Number(process.env.BENCH_SCALE_RUNS ?? 30);
const FALLBACK_RUNS = Number(process.env.BENCH_SCALE_FALLBACK_RUNS ?? 3);
/** Not a programme's zone: reports in it cut days from the 15-minute rollups. */
const UNMAINTAINED_ZONE = 'Asia/Tokyo';
const WRITE_ROWS = Number(process.env.BENCH_SCALE_WRITE_ROWS ?? 100_000);
const GOAL_P99_MS = 300;
const ZONES = [
  'Europe/Malta',
  'Asia/Kolkata',
  'America/St_Johns',
  'Asia/Kathmandu',
  'UTC',
  'Australia/Adelaide',
];

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round((s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0) * 10) / 10;
};

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin(url: string, sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/**
 * Fills the database: catalog-free dimensions, clicks month by month, conversions, 15-minute
 * rollups; then the daily rollups of every zone in use, built as the rollup-zones job builds a
 * zone that comes into use.
 */
async function fill(
  db: Db,
  start: Date,
  log: (m: string) => void,
): Promise<{ seconds: number; zoneBuildSeconds: number }> {
  const t0 = performance.now();
  await db.exec('SET synchronous_commit = off');
  for (let p = 1; p <= PROGRAMS; p++)
    await db.query(
      `INSERT INTO affiliate_programs (id, slug, name, postback_token_hash, postback_token_hint, timezone)
       VALUES ($1, $2, $2, '\\x00', 'x', $3)`,
      [p, `op-${p}`, ZONES[p % ZONES.length]],
    );
  // Secondary indexes are built once after the load (as a bulk import would), not row by row:
  // whichever the migrations made, rebuilt from their own definitions.
  const indexes = await db.query<{ name: string; def: string }>(
    `SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS def
     FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE i.indrelid = 'clicks'::regclass AND NOT i.indisprimary`,
  );
  for (const { name } of indexes) await db.exec(`DROP INDEX ${name}`);
  const perMonth = Math.ceil(CLICKS / MONTHS);
  const spanMs = MONTHS * 30.4375 * 86_400_000;
  for (let m = 0; m < MONTHS; m++) {
    const lo = m * perMonth + 1;
    const hi = Math.min(CLICKS, (m + 1) * perMonth);
    if (lo > hi) break;
    // Click g happens at start + g/N of the span (plus jitter); its dimensions come from hashes of g.
    await db.query(
      `INSERT INTO clicks (id, kind, at, link_id, tracker_id, offer_id, brand_id, site_id, toplist_id, position,
                           program_id, sub_id, country, flag)
       SELECT 'B' || lpad(g::text, 25, '0'), 'click',
              $3::timestamptz + (g::float8 / $4 * $5 + (g % 997) * 1000) * interval '1 millisecond',
              combo + 1, combo + 1, brand, brand, s + 1, (s + 1) * 10 + t, pos + 1, brand % ${PROGRAMS} + 1,
              CASE WHEN g % 7 = 0 THEN 'sub-' || (g % 50) END, 'MT', CASE WHEN g % 50 = 0 THEN 'bot' END
       FROM (SELECT g, s, t, pos, (s * ${TOPLISTS} + t) * ${POSITIONS} + pos AS combo,
                    1 + ((s * 7 + t * 3 + pos) % ${BRANDS}) AS brand
             FROM (SELECT g, (hashint4(g::int) & 1023) % ${SITES} AS s, (hashint4(g::int + 7) & 1023) % ${TOPLISTS} AS t,
                          floor(${POSITIONS} * power(((hashint4(g::int + 13) & 65535) / 65536.0), 2))::int AS pos
                   FROM generate_series($1::bigint, $2::bigint) g) x) y`,
      [lo, hi, start.toISOString(), CLICKS, spanMs],
    );
    log(
      `scale: month ${m + 1}/${MONTHS}: clicks ${hi.toLocaleString('en')} (${Math.round((performance.now() - t0) / 1000)} s)`,
    );
  }
  for (const { def } of indexes) await db.exec(def);
  log(`scale: indexes (${Math.round((performance.now() - t0) / 1000)} s)`);
  // One conversion per 100 clicks, an hour after its click; every fifth an FTD.
  await db.query(
    `INSERT INTO postback_log (id, received_at, program, method, query)
     SELECT g, $2::timestamptz + (g * 100.0 / $1 * $3 + 3600000) * interval '1 millisecond', 'op', 'GET', '{}'::jsonb
     FROM generate_series(1, $1::bigint / 100) g`,
    [CLICKS, start.toISOString(), spanMs],
  );
  await db.query(
    `INSERT INTO conversions (id, program_id, transaction_id, event, amount, currency, click_id, attributed, tracker_id,
                              offer_id, brand_id, site_id, toplist_id, position, log_id, received_at)
     SELECT 'V' || lpad(l.id::text, 25, '0'), c.program_id, 'tx-' || l.id,
            CASE WHEN l.id % 5 = 0 THEN 'ftd' ELSE 'registration' END, 10, 'EUR', c.id, true, c.tracker_id,
            c.offer_id, c.brand_id, c.site_id, c.toplist_id, c.position, l.id, l.received_at
     FROM postback_log l JOIN clicks c ON c.id = 'B' || lpad((l.id * 100)::text, 25, '0')`,
  );
  await db.query(
    `INSERT INTO conversion_keys (program_id, transaction_id, conversion_id, attributed, received_at)
     SELECT program_id, transaction_id, id, attributed, received_at FROM conversions`,
  );
  log(`scale: conversions (${Math.round((performance.now() - t0) / 1000)} s); rollups…`);
  await db.query(
    `INSERT INTO click_rollups_base (bucket, kind, site_id, toplist_id, position, brand_id, program_id, link_id, n)
     SELECT date_bin('15 minutes', at, timestamptz '2000-01-01 00:00:00+00'), kind, site_id, toplist_id, position,
            brand_id, program_id, link_id, count(*)
     FROM clicks WHERE flag IS NULL GROUP BY 1, 2, 3, 4, 5, 6, 7, 8`,
  );
  await db.query(
    `INSERT INTO conversion_rollups (bucket, event, currency, site_id, toplist_id, position, brand_id, program_id, n)
     SELECT date_bin('15 minutes', received_at, timestamptz '2000-01-01 00:00:00+00'), event, currency, site_id,
            toplist_id, position, brand_id, program_id, count(*)
     FROM conversions GROUP BY 1, 2, 3, 4, 5, 6, 7, 8`,
  );
  // The bulk load bypassed the batch statements that keep the daily rows, so every zone
  // (UTC included) is built from the 15-minute rollups.
  await db.exec('UPDATE rollup_zones SET ready = false');
  const t1 = performance.now();
  const zones = await new RollupZones(new RollupZoneRepository(db)).sync();
  const zoneBuildSeconds = Math.round((performance.now() - t1) / 100) / 10;
  log(`scale: daily rollups of ${zones.length} zones (${zoneBuildSeconds} s)`);
  await db.exec('VACUUM ANALYZE');
  return { seconds: Math.round((performance.now() - t0) / 1000), zoneBuildSeconds };
}

async function timed(runs: number, q: (i: number) => Promise<unknown>) {
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await q(i);
    ms.push(performance.now() - t);
  }
  return { runs, p50_ms: pct(ms, 50), p99_ms: pct(ms, 99), max_ms: pct(ms, 100) };
}

const day = (d: Date) => d.toISOString().slice(0, 10);

/** Rows per second that 4 writers of 500-row batches get through `write`. */
/**
 * Click rows written a second by four concurrent writers (each its own lane, as the group commit
 * writes), `after` (moving the batches' rollup deltas) included in the time.
 */
async function writeRate(
  write: (rows: ClickRow[], lane: number) => Promise<void>,
  after: () => Promise<unknown> = async () => {},
): Promise<number> {
  const batch = () =>
    Array.from({ length: 500 }, (_, i): ClickRow => {
      const combo = i % (SITES * TOPLISTS * POSITIONS);
      return {
        id: ulid(),
        kind: 'click',
        at: new Date(),
        linkId: combo + 1,
        trackerId: combo + 1,
        offerId: 1,
        brandId: 1 + (combo % BRANDS),
        siteId: 1 + (combo % SITES),
        toplistId: 10,
        position: 1 + (combo % POSITIONS),
        programId: 1,
        subId: null,
        referrer: 'https://example.test/best-casinos',
        userAgent: 'Mozilla/5.0',
        country: 'MT',
        flag: null,
      };
    });
  const perWriter = Math.ceil(WRITE_ROWS / 2000);
  const t = performance.now();
  await Promise.all(
    Array.from({ length: 4 }, async (_, lane) => {
      for (let i = 0; i < perWriter; i++) await write(batch(), lane);
    }),
  );
  await after();
  return Math.round((perWriter * 2000) / ((performance.now() - t) / 1000));
}

/** Runs the scale scenario; needs PostgreSQL. */
export async function run(log: (m: string) => void = () => {}): Promise<Record<string, unknown>> {
  const base = process.env.BENCH_SCALE_URL ?? process.env.DATABASE_URL;
  if (!base) return { skipped: 'set DATABASE_URL (or BENCH_SCALE_URL) to a PostgreSQL server' };
  const load = execFileSync('uptime').toString().trim();
  if (!REUSE) {
    await admin(base, `DROP DATABASE IF EXISTS ${DB_NAME}`);
    await admin(base, `CREATE DATABASE ${DB_NAME}`);
  }
  const url = withDatabase(base, DB_NAME);
  const db = await openDb({ url, poolSize: 8 });
  try {
    const t0 = performance.now();
    const applied = await migrate(db);
    const migrateSeconds = Math.round((performance.now() - t0) / 100) / 10;
    const now = new Date();
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - MONTHS + 1, 1));
    let filled: { seconds: number; zoneBuildSeconds: number } | undefined;
    if (REUSE) {
      log(`scale: reusing ${DB_NAME}; migrations applied ${JSON.stringify(applied)} (${migrateSeconds} s)`);
      await db.exec('DROP TABLE IF EXISTS clicks_before');
      await db.exec('VACUUM ANALYZE');
    } else {
      await db.query(
        "SELECT tracking_ensure_partitions(t, $1, now() + interval '3 months') FROM unnest($2::text[]) t",
        [start.toISOString(), ['clicks', 'conversions', 'postback_log', 'postback_outcomes']],
      );
      log(`scale: filling ${CLICKS.toLocaleString('en')} clicks over ${MONTHS} months from ${day(start)}`);
      filled = await fill(db, start, log);
    }
    const [size] = await db.query<{
      clicks: number;
      rollups: number;
      rollup_rows: number;
      conversions: number;
      daily: number;
      daily_rows: number;
      zones: number;
    }>(
      `SELECT (SELECT sum(pg_total_relation_size(inhrelid)) FROM pg_inherits WHERE inhparent = 'clicks'::regclass)::bigint AS clicks,
              (SELECT sum(pg_total_relation_size(inhrelid)) FROM pg_inherits WHERE inhparent = 'conversions'::regclass)::bigint AS conversions,
              (pg_total_relation_size('click_rollups_base') + pg_total_relation_size('click_rollup_deltas')
                + pg_total_relation_size('conversion_rollups'))::bigint AS rollups,
              (SELECT count(*) FROM click_rollups)::bigint AS rollup_rows,
              (pg_total_relation_size('click_daily_rollups') + pg_total_relation_size('conversion_daily_rollups'))::bigint
                AS daily,
              (SELECT count(*) FROM click_daily_rollups)::bigint AS daily_rows,
              (SELECT count(*) FROM rollup_zones WHERE ready)::int AS zones`,
    );
    const [counted] = await db.query<{ n: number }>('SELECT count(*)::bigint AS n FROM clicks');

    const reports = new StatsRepository(db);
    const spanDays = Math.floor((now.getTime() - start.getTime()) / 86_400_000) - 31;
    const windowAt = (i: number) => new Date(start.getTime() + ((i * 7919) % spanDays) * 86_400_000);
    log('scale: 30-day stats queries');
    const stats = await timed(QUERY_RUNS, (i) => {
      const from = windowAt(i);
      const to = new Date(from.getTime() + 29 * 86_400_000);
      return reports.stats({
        from: day(from),
        to: day(to),
        tz: 'fixed',
        zone: ZONES[i % ZONES.length],
        limit: 1000,
        offset: 0,
      });
    });
    const [rowsOfOne] = [
      await reports.stats({
        from: day(windowAt(0)),
        to: day(new Date(windowAt(0).getTime() + 29 * 86_400_000)),
        tz: 'fixed',
        zone: 'Europe/Malta',
        limit: 1,
        offset: 0,
      }),
    ];
    log(`scale: stats ${JSON.stringify(stats)}; disk ${JSON.stringify(size)}; clicks ${counted?.n}`);
    const fallback = await timed(FALLBACK_RUNS, (i) => {
      const from = windowAt(i);
      return reports.stats({
        from: day(from),
        to: day(new Date(from.getTime() + 29 * 86_400_000)),
        tz: 'fixed',
        zone: UNMAINTAINED_ZONE,
        limit: 1000,
        offset: 0,
      });
    });
    log(`scale: stats in an unmaintained zone ${JSON.stringify(fallback)}`);
    // by=sub_id reads the raw clicks of its range (≤ 31 days) by time: the one reader of their
    // time index (migration 0086). One programme's and every programme's.
    const subIds = async (programId: number | undefined) =>
      timed(FALLBACK_RUNS, (i) => {
        const from = windowAt(i + 1);
        return reports.stats({
          from: day(from),
          to: day(new Date(from.getTime() + 29 * 86_400_000)),
          tz: 'fixed',
          zone: 'Europe/Malta',
          programId,
          bySubId: true,
          limit: 1000,
          offset: 0,
        });
      });
    log('scale: 30-day by=sub_id reports');
    const bySubIdOne = await subIds(1);
    const bySubIdAll = await subIds(undefined);
    log(`scale: by=sub_id one programme ${JSON.stringify(bySubIdOne)}, all ${JSON.stringify(bySubIdAll)}`);
    log('scale: reconciliation months');
    const aggregates = new AggregateRepository(db);
    const reconcile = await timed(QUERY_RUNS, (i) => {
      const from = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + (i % (MONTHS - 1)), 1));
      const to = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 0));
      return aggregates.reconcile(1 + (i % PROGRAMS), day(from), day(to), ZONES[i % ZONES.length] as string);
    });

    log(`scale: reconciliation ${JSON.stringify(reconcile)}`);
    log('scale: click write throughput, plain table (before) and partitioned with rollups');
    await db.exec(`DROP TABLE IF EXISTS clicks_before; CREATE TABLE clicks_before (
      id text PRIMARY KEY, kind text NOT NULL CHECK (kind IN ('click', 'impression')), at timestamptz NOT NULL,
      link_id integer NOT NULL, tracker_id integer NOT NULL, offer_id integer, brand_id integer, site_id integer,
      toplist_id integer, position integer, program_id integer, sub_id text, referrer text, user_agent text,
      country char(2), flag text CHECK (flag IN ('head', 'prefetch', 'bot')));
      CREATE INDEX clicks_before_at ON clicks_before(at);
      CREATE INDEX clicks_before_program_at ON clicks_before(program_id, at);`);
    const plainRate = await writeRate(async (rows) => {
      await db.query(`INSERT INTO clicks_before ${clickRows(1)}`, [clickRowsParam(rows)]);
    });
    const partitionedRate = await writeRate(
      async (rows, lane) => void (await new TrackingRepository(db).insertClicks(rows, lane)),
      () => new ClickDeltaRepository(db).move(),
    );
    const mb = (b: number) => Math.round(b / 1e6);
    return {
      load_before: load,
      load_after: execFileSync('uptime').toString().trim(),
      clicks: Number(counted?.n),
      months: MONTHS,
      dimensions: {
        sites: SITES,
        toplists_per_site: TOPLISTS,
        positions: POSITIONS,
        brands: BRANDS,
        programs: PROGRAMS,
      },
      fill_seconds: filled?.seconds ?? null,
      migrate_seconds: migrateSeconds,
      daily_rollups: {
        zones: Number(size?.zones),
        build_seconds_all_zones: filled?.zoneBuildSeconds ?? null,
        mb: mb(Number(size?.daily)),
        click_rows: Number(size?.daily_rows),
      },
      disk: {
        clicks_mb: mb(Number(size?.clicks)),
        bytes_per_million_clicks: Math.round(Number(size?.clicks) / (Number(counted?.n) / 1e6)),
        conversions_mb: mb(Number(size?.conversions)),
        rollups_mb: mb(Number(size?.rollups)),
        click_rollup_rows: Number(size?.rollup_rows),
      },
      stats_30_days: {
        ...stats,
        rows_in_result: rowsOfOne.total,
        goal_p99_ms: GOAL_P99_MS,
        met: stats.p99_ms < GOAL_P99_MS,
      },
      stats_30_days_unmaintained_zone: { zone: UNMAINTAINED_ZONE, ...fallback },
      stats_30_days_by_sub_id: { one_programme: bySubIdOne, all_programmes: bySubIdAll },
      reconciliation_month: reconcile,
      click_writes_per_s: {
        plain_table_before: plainRate,
        partitioned_with_rollups: partitionedRate,
        ratio: Math.round((partitionedRate / plainRate) * 100) / 100,
      },
    };
  } finally {
    await db.close();
    if (process.env.BENCH_SCALE_KEEP !== '1') await admin(base, `DROP DATABASE IF EXISTS ${DB_NAME}`);
  }
}
