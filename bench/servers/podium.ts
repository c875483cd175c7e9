/**
 * Podium under test, one job per process so every CPU and RSS figure is its own:
 * `build <dataset>` writes a fresh dataset (demo or big) with tokens and a postback programme and
 * exits; `serve` runs the production entry (`startServer`: logging at info to stdout, metrics,
 * scheduler, change bus) on it. The database is PGlite in BENCH_DATA_DIR, or a schema
 * (BENCH_SCHEMA) on DATABASE_URL.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { loadConfig } from '../../src/config.ts';
import { openDb } from '../../src/db/index.ts';
import { ensureDemo } from '../../src/modules/catalog/demo.ts';
import { startServer } from '../../src/server.ts';
import { closeBench, freshBench } from '../bench-db.ts';
import { bigDataset } from '../lib/big-dataset.ts';
import type { FixtureInfo } from '../lib/fixture.ts';

const SCHEMA = process.env.BENCH_SCHEMA ?? 'bench';
const log = (m: string) => process.stderr.write(`${m}\n`);
const send = (m: Record<string, unknown>) => process.send?.(m);

async function build(dataset: string): Promise<void> {
  const opened = await freshBench(SCHEMA);
  const { db, app } = opened;
  const { catalog, tracking } = app.services;
  let siteId: number;
  if (dataset === 'demo') {
    await ensureDemo(app.services, log);
    // The demo site with the most live toplists (the casino geo family).
    const [top] = await db.query<{ site_id: number }>(
      `SELECT site_id FROM toplists WHERE live_edition_id IS NOT NULL GROUP BY site_id ORDER BY count(*) DESC LIMIT 1`,
    );
    siteId = top!.site_id;
  } else if (dataset === 'big') {
    siteId = (await bigDataset(catalog, log)).siteId;
  } else throw new Error(`unknown dataset ${dataset}`);
  const toplists = await db.query<{ id: number; slug: string }>(
    'SELECT id, slug FROM toplists WHERE site_id = $1 AND live_edition_id IS NOT NULL ORDER BY id',
    [siteId],
  );
  const links = await db.query<{ slug: string; tracker_id: number }>(
    'SELECT slug, tracker_id FROM tracking_links WHERE site_id = $1 ORDER BY slug LIMIT 20',
    [siteId],
  );
  const program = await tracking.createProgram({
    slug: 'bench',
    name: 'Bench Partners',
    affiliateId: 'aff42',
    landingParams: 'btag={affiliate_id}_{click_id}',
    trackerIds: [...new Set(links.map((l) => l.tracker_id))],
  });
  const info: FixtureInfo = {
    siteToken: (await app.services.access.createSiteToken(siteId, 'bench')).token,
    slugs: toplists.map((t) => t.slug),
    ids: toplists.map((t) => t.id),
    goSlugs: links.map((l) => l.slug),
    postbackPath: `/api/postback/bench/${program.postbackToken}`,
  };
  await closeBench(opened, SCHEMA, false);
  send({ built: info });
}

/** The in-process inspector: profiles only the measured runs, not start-up or idle time. */
const session = new Session();
const post = (method: string) =>
  new Promise<unknown>((resolve, reject) => {
    session.post(method, (err, result) => (err ? reject(err) : resolve(result)));
  });

async function serve(): Promise<void> {
  session.connect();
  const url = process.env.DATABASE_URL;
  const config = loadConfig({ ...process.env, HOST: '127.0.0.1', PORT: '0' });
  const db = await openDb({
    url,
    schema: url ? SCHEMA : undefined,
    dataDir: url ? undefined : config.dataDir,
  });
  const server = await startServer(config, { db, log });
  process.on('message', async (m: { cmd: string }) => {
    if (m.cmd === 'count') {
      const [r] = await db.query<Record<string, number>>(
        `SELECT (SELECT count(*)::int FROM clicks WHERE kind = 'click') AS clicks,
                (SELECT count(*)::int FROM clicks WHERE kind = 'impression') AS impressions,
                (SELECT count(*)::int FROM conversions) AS conversions,
                (SELECT count(DISTINCT l.query->>'transaction_id')::int FROM postback_log l
                   JOIN postback_outcomes o ON o.log_id = l.id WHERE o.status = 200) AS accepted_ids,
                (SELECT count(*)::int FROM postback_log l
                   LEFT JOIN postback_outcomes o ON o.log_id = l.id WHERE o.log_id IS NULL) AS undecided`,
      );
      send({ counted: r });
    }
    if (m.cmd === 'profile-start') {
      await post('Profiler.enable');
      await post('Profiler.start');
      send({ profiling: true });
    }
    if (m.cmd === 'profile-stop') {
      const { profile } = (await post('Profiler.stop')) as { profile: object };
      writeFileSync((m as { cmd: string; file: string }).file, JSON.stringify(profile));
      send({ profiled: true });
    }
    if (m.cmd === 'stop') {
      await server.close();
      if (url) {
        const admin = await openDb({ url });
        await admin.exec(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
        await admin.close();
      }
      process.exit(0);
    }
  });
  send({ ready: true, url: server.url, pid: process.pid });
}

const [mode, arg] = process.argv.slice(2);
(mode === 'build'
  ? build(arg ?? 'demo')
  : mode === 'serve'
    ? serve()
    : Promise.reject(new Error(`mode ${mode}`))
).catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
