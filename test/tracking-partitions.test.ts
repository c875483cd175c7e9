import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import type { Db } from '../src/db/index.ts';
import { migrate } from '../src/db/migrate.ts';
import { Scheduler } from '../src/lib/jobs.ts';
import { PartitionRepository } from '../src/modules/tracking/partition-repository.ts';
import {
  type ExportManifest,
  PARTITION_JOB,
  registerPartitionJob,
  TrackingPartitions,
} from '../src/modules/tracking/partitions.ts';
import { type PostbackJob, TrackingRepository } from '../src/modules/tracking/repository.ts';
import type { ClickRow } from '../src/modules/tracking/types.ts';
import { click, dbBefore, type TestDb, testDb } from './helpers.ts';

const dump = (db: Db, table: string, key: string) =>
  db.query<{ row: Record<string, unknown> }>(`SELECT to_jsonb(t) AS row FROM ${table} t ORDER BY ${key}`);

describe('partitioning migration on an installation with data', () => {
  let t: { db: Db; close(): Promise<void> };
  beforeAll(async () => {
    t = await dbBefore('0020');
  });
  afterAll(() => t.close());

  it('keeps every click, postback and conversion with its id, and the dedupe keys and counts with them', async () => {
    const { db } = t;
    await db.query(
      `INSERT INTO affiliate_programs (id, slug, name, postback_token_hash, postback_token_hint)
       VALUES (7, 'op', 'Operator', '\\x00', 'x')`,
    );
    // Clicks over three years, a flagged one and an impression among them.
    await db.query(
      `INSERT INTO clicks (id, kind, at, link_id, tracker_id, site_id, position, program_id, flag)
       SELECT 'C' || lpad(g::text, 6, '0'), CASE WHEN g % 10 = 0 THEN 'impression' ELSE 'click' END,
              timestamptz '2024-01-15 10:07:00+00' + g * interval '37 hours 13 minutes', 3, 4, 1 + g % 3, g % 5, 7,
              CASE WHEN g % 17 = 0 THEN 'bot' END
       FROM generate_series(1, 600) g`,
    );
    await db.query(
      `INSERT INTO postback_log (received_at, program, method, query)
       SELECT timestamptz '2024-03-01 00:00:00+00' + g * interval '11 days', 'op', 'GET', '{}'::jsonb
       FROM generate_series(1, 60) g`,
    );
    await db.query(
      `INSERT INTO postback_outcomes (log_id, status, code, conversion_id, decided_at)
       SELECT id, 200, 'accepted', 'V' || id, received_at FROM postback_log`,
    );
    await db.query(
      `INSERT INTO conversions (id, program_id, transaction_id, event, attributed, click_id, log_id, received_at)
       SELECT 'V' || id, 7, 'tx-' || id, CASE WHEN id % 2 = 0 THEN 'ftd' ELSE 'registration' END, true,
              'C' || lpad(id::text, 6, '0'), id, received_at
       FROM postback_log`,
    );
    const before = {
      clicks: await dump(db, 'clicks', 'id'),
      log: await dump(db, 'postback_log', 'id'),
      outcomes: await dump(db, 'postback_outcomes', 'log_id'),
      conversions: await dump(db, 'conversions', 'id'),
    };
    const [{ lastLog }] = (await db.query<{ lastLog: number }>(
      'SELECT max(id)::int AS "lastLog" FROM postback_log',
    )) as [{ lastLog: number }];

    const applied = await migrate(db);
    expect(applied).toContain('0020_tracking_partitions');

    for (const table of ['clicks', 'postback_log', 'postback_outcomes', 'conversions']) {
      const [r] = await db.query<{ relkind: string }>(
        'SELECT relkind FROM pg_class WHERE relname = $1 AND relnamespace = current_schema()::regnamespace',
        [table],
      );
      expect(r?.relkind, table).toBe('p');
    }
    expect(await dump(db, 'clicks', 'id')).toEqual(before.clicks);
    expect(await dump(db, 'postback_log', 'id')).toEqual(before.log);
    // Later migrations run too: 0080 marks every existing outcome as an original (not a replay),
    // 0093 gives outcomes a refusal's message and field, which those logged before it lack.
    expect(await dump(db, 'postback_outcomes', 'log_id')).toEqual(
      before.outcomes.map(({ row }) => ({ row: { ...row, replay: false, message: null, field: null } })),
    );
    expect(await dump(db, 'conversions', 'id')).toEqual(before.conversions);
    // Every month holding rows got its partition (600 clicks over ~2.5 years).
    const parts = await new PartitionRepository(db).list();
    expect(parts.filter((p) => p.table === 'clicks').length).toBeGreaterThanOrEqual(30);

    // The log's sequence goes on from where it was.
    const [next] = await db.query<{ id: number }>(
      `INSERT INTO postback_log (program, method, query) VALUES ('op', 'GET', '{}') RETURNING id::int AS id`,
    );
    expect(next?.id).toBe(lastLog + 1);

    // Click ids still resolve for attribution, and a repeated transaction id is still a duplicate
    // answered with the original conversion.
    const repo = new TrackingRepository(db);
    const job = (tx: string): PostbackJob => ({
      log: { program: 'op', method: 'GET', contentType: null, query: {}, body: null, remoteIp: null },
      receivedAt: new Date(),
      conversion: {
        id: `NEW-${tx}`,
        programId: 7,
        transactionId: tx,
        event: 'ftd',
        amount: null,
        currency: null,
        playerRef: null,
        clickId: 'C000002',
      },
    });
    const jobs = [job('tx-5'), job('tx-new')];
    const written = await db.tx((q) => repo.with(q).writePostbacks(jobs));
    expect(written[0]).toEqual({ conversionId: 'V5', duplicate: true, attributed: true });
    expect(written[1]).toEqual({ conversionId: 'NEW-tx-new', duplicate: false, attributed: true });
    const [attributed] = await db.query<{ site_id: number }>(
      "SELECT site_id FROM conversions WHERE id = 'NEW-tx-new'",
    );
    expect(attributed?.site_id).toBe(3); // click 2: 1 + 2 % 3

    // The rollups were filled from the existing rows: stats over everything equal the raw counts.
    const [raw] = await db.query<{ clicks: number; impressions: number }>(
      `SELECT count(*) FILTER (WHERE kind = 'click' AND flag IS NULL)::int AS clicks,
              count(*) FILTER (WHERE kind = 'impression' AND flag IS NULL)::int AS impressions FROM clicks`,
    );
    const [rolled] = await db.query<{ clicks: number; impressions: number }>(
      `SELECT coalesce(sum(n) FILTER (WHERE kind = 'click'), 0)::int AS clicks,
              coalesce(sum(n) FILTER (WHERE kind = 'impression'), 0)::int AS impressions FROM click_rollups`,
    );
    expect(rolled).toEqual(raw);
    const [conv] = await db.query<{ n: number }>('SELECT sum(n)::int AS n FROM conversion_rollups');
    expect(conv?.n).toBe(61);
  });
});

describe('partitions ahead, on demand and retention', () => {
  let t: TestDb;
  let archive: string;
  beforeAll(async () => {
    t = await testDb();
    archive = mkdtempSync(path.join(tmpdir(), 'podium-archive-'));
  });
  afterAll(async () => {
    await t.close();
    rmSync(archive, { recursive: true, force: true });
  });

  it('is off by default', async () => {
    const off = new TrackingPartitions(t.db, loadConfig({}), () => new Date('2040-01-01T00:00:00Z'));
    expect(await off.expired()).toEqual([]);
  });

  it('creates a month on demand when a row lands where no partition is', async () => {
    const clock = () => new Date('2026-06-15T12:00:00Z');
    const parts = new TrackingPartitions(t.db, loadConfig({}), clock);
    const repo = new TrackingRepository(t.db);
    const far = [click('FAR1', '2031-02-03T04:05:06Z')];
    await expect(repo.insertClicks(far)).rejects.toThrow(/no partition/);
    await parts.writing(
      () => far.map((r) => r.at),
      () => repo.insertClicks(far),
    );
    const [r] = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM clicks WHERE id = 'FAR1'");
    expect(r?.n).toBe(1);
    await t.db.query('ALTER TABLE clicks DETACH PARTITION clicks_p203102');
    await t.db.query('DROP TABLE clicks_p203102');
  });

  it('runs partition upkeep once per slot across two schedulers sharing the database', async () => {
    const at = new Date('2026-06-15T12:30:00Z');
    const config = loadConfig({});
    const a = new Scheduler(t.db, () => at);
    const b = new Scheduler(t.db, () => at);
    registerPartitionJob(a, new TrackingPartitions(t.db, config, () => at));
    registerPartitionJob(b, new TrackingPartitions(t.db, config, () => at));
    await Promise.all([a.tick(), b.tick()]);
    const runs = await t.db.query<{ status: string }>('SELECT status FROM job_runs WHERE job = $1', [
      PARTITION_JOB,
    ]);
    expect(runs).toEqual([{ status: 'succeeded' }]);
    const names = (await new PartitionRepository(t.db).list()).map((p) => p.name);
    for (const table of ['clicks', 'conversions', 'postback_log', 'postback_outcomes'])
      for (const month of ['202605', '202606', '202607', '202608', '202609'])
        expect(names).toContain(`${table}_p${month}`);
  });

  it("summarises the clicks' time index (BRIN) as the hourly job runs, which no VACUUM does on PGlite", async () => {
    const at = new Date('2033-03-20T12:30:00Z');
    const parts = new TrackingPartitions(t.db, loadConfig({}), () => at);
    await new PartitionRepository(t.db).ensure('clicks', new Date('2033-03-01Z'), new Date('2033-04-01Z'));
    // ~15 000 rows of ~200 bytes fill a few 128-page ranges of the month's partition.
    const fill = (from: number) =>
      t.db.query(
        `INSERT INTO clicks (id, kind, at, link_id, tracker_id, user_agent)
         SELECT 'BRIN' || g, 'click', '2033-03-01T00:00:00Z'::timestamptz + g * interval '1 minute', 1, 1, repeat('x', 150)
         FROM generate_series($1::int, $1::int + 14999) g`,
        [from],
      );
    await fill(0);
    const first = await parts.summarizeTimeIndexes();
    expect(first).toBeGreaterThan(0);
    expect(await parts.summarizeTimeIndexes()).toBe(0);
    await fill(15_000);
    const scheduler = new Scheduler(t.db, () => at);
    registerPartitionJob(scheduler, parts);
    await scheduler.tick();
    // The job summarised the new ranges: nothing is left to summarise.
    expect(await parts.summarizeTimeIndexes()).toBe(0);
    await t.db.query('ALTER TABLE clicks DETACH PARTITION clicks_p203303');
    await t.db.query('DROP TABLE clicks_p203303');
  });

  it('exports then drops exactly the partitions wholly past the limit, and nothing else', async () => {
    const now = new Date('2026-06-15T12:00:00Z');
    const config = loadConfig({}, { retentionClicksDays: 40, trackingArchiveDir: archive });
    const parts = new TrackingPartitions(t.db, config, () => now);
    await parts.ensureFor([new Date('2025-12-01T00:00:00Z'), now]);
    const repo = new TrackingRepository(t.db);
    // Two clicks a month from December to June, with text that needs CSV quoting.
    const rows: ClickRow[] = [];
    for (let m = 0; m < 7; m++)
      for (const d of [1, 28]) {
        const at = new Date(Date.UTC(2025, 11 + m, d, 23, 59, 59, 999));
        rows.push(click(`R${m}-${d}`, at.toISOString(), { referrer: 'https://a.test/?q="x",y\nz' }));
      }
    await repo.insertClicks(rows);
    const before = await dump(t.db, 'clicks', 'id');
    const conversionsBefore = (await new PartitionRepository(t.db).list()).filter(
      (p) => p.table !== 'clicks',
    );

    // Limit: 2026-05-06T12:00Z. April's partition ends 05-01 (past it); May's ends 06-01 (not).
    const expired = await parts.expired();
    expect(expired.map((p) => p.name)).toEqual([
      'clicks_p202512',
      'clicks_p202601',
      'clicks_p202602',
      'clicks_p202603',
      'clicks_p202604',
    ]);
    const done = await parts.retain();
    expect(done.map((d) => d.partition)).toEqual(expired.map((p) => p.name));

    const left = await new PartitionRepository(t.db).list();
    expect(left.filter((p) => p.table === 'clicks').map((p) => p.name)[0]).toBe('clicks_p202605');
    expect(left.filter((p) => p.table !== 'clicks')).toEqual(conversionsBefore);
    const kept = await dump(t.db, 'clicks', 'id');
    expect(kept.map((r) => r.row.id)).toEqual(['R5-1', 'R5-28', 'R6-1', 'R6-28']);

    // Each export holds exactly its partition's rows, and the manifest describes the file.
    expect(readdirSync(archive).sort()).toEqual(
      expired.flatMap((p) => [`${p.name}.csv.gz`, `${p.name}.manifest.json`]).sort(),
    );
    let exportedIds: string[] = [];
    for (const { manifest } of done) {
      const m = manifest as ExportManifest;
      const gz = readFileSync(path.join(archive, m.file));
      expect(m.bytes).toBe(gz.length);
      expect(m.sha256).toBe(createHash('sha256').update(gz).digest('hex'));
      expect(JSON.parse(readFileSync(path.join(archive, `${m.partition}.manifest.json`), 'utf8'))).toEqual(m);
      const text = gunzipSync(gz).toString('utf8');
      expect(text.startsWith(`${m.columns.join(',')}\r\n`)).toBe(true);
      expect(m.rows).toBe(2);
      expect(text).toContain('"https://a.test/?q=""x"",y\nz"');
      exportedIds = exportedIds.concat(
        [...text.matchAll(/\r\n(R[0-9]-[0-9]+),/g)].map((x) => x[1] as string),
      );
    }
    expect(exportedIds.sort()).toEqual(
      before
        .map((r) => r.row.id as string)
        .filter((id) => !['R5-1', 'R5-28', 'R6-1', 'R6-28'].includes(id))
        .sort(),
    );
    // Running again finds nothing more to drop.
    expect(await parts.retain()).toEqual([]);
    // Reports still count the dropped months: they read the rollups.
    const [r] = await t.db.query<{ n: number }>(
      "SELECT sum(n)::int AS n FROM click_rollups WHERE bucket < '2026-05-01'",
    );
    expect(r?.n).toBe(10);
  });
});
