/**
 * `build <dataset>`: writes a fresh dataset (demo or big) with tokens and a postback programme and
 * exits (its own process; `serve.mjs` then serves it from the production build). The database is
 * PGlite in BENCH_DATA_DIR, or a schema (BENCH_SCHEMA) on DATABASE_URL.
 */
import { ensureDemo } from '../../src/modules/catalog/demo.ts';
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

const [mode, arg] = process.argv.slice(2);
(mode === 'build' ? build(arg ?? 'demo') : Promise.reject(new Error(`mode ${mode}`))).catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
