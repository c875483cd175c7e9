import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { type Db, openDb } from '../src/db/index.ts';
import { migrate } from '../src/db/migrate.ts';
import { TrackingService } from '../src/modules/tracking/service.ts';
import { DB_KIND, schemaOf, servicesOn, type TestDb, testDb } from './helpers.ts';
import { serve } from './serve-process.ts';
import { redirectedClickIds, storm, trackingFixture } from './tracking-fixture.ts';

/**
 * A real `podium serve` process under a click storm gets SIGTERM part-way: every click it
 * answered with a 302 must be in the database afterwards (pending batches are drained).
 */
describe(`SIGTERM during a click storm (${DB_KIND})`, () => {
  let pg: TestDb | undefined;
  let dir: string | undefined;
  afterAll(async () => {
    await pg?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A seeded database and the environment that points `podium serve` at it. */
  async function seed(): Promise<{ env: NodeJS.ProcessEnv; slug: string; reopen: () => Promise<Db> }> {
    let db: Db;
    const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info' };
    if (process.env.DATABASE_URL) {
      pg = await testDb();
      db = pg.db;
      const url = new URL(process.env.DATABASE_URL);
      url.searchParams.set('options', `-c search_path=${await schemaOf(db)}`);
      env.DATABASE_URL = url.toString();
    } else {
      dir = mkdtempSync(join(tmpdir(), 'podium-drain-'));
      db = await openDb({ dataDir: dir });
      await migrate(db);
      env.PODIUM_DATA_DIR = dir;
    }
    const services = servicesOn(db);
    const fx = await trackingFixture(services, db);
    const config = loadConfig({}, { logLevel: 'silent' });
    await new TrackingService(db, services.catalog, config, () => new Date()).createProgram({
      slug: 'drain',
      name: 'Drain',
      landingParams: 'btag=a_{click_id}',
      trackerIds: fx.trackerIds,
    });
    if (dir) await db.close();
    const dataDir = dir;
    return {
      env,
      slug: fx.slugs[0] as string,
      reopen: async () => (dataDir ? openDb({ dataDir }) : db),
    };
  }

  it('loses none of the clicks it answered', async () => {
    const { env, slug, reopen } = await seed();
    const server = await serve(env);
    let answered = 0;
    const results = await storm(server.url, `/go/${slug}`, 2000, () => {
      answered += 1;
      if (answered === 200) server.proc.kill('SIGTERM');
    });
    expect(await server.exit).toBe(0);
    const ids = redirectedClickIds(results);
    expect(ids.length).toBeGreaterThanOrEqual(200);
    const db = await reopen();
    try {
      const [row] = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM clicks WHERE id = ANY($1::text[])',
        [ids],
      );
      expect(row?.n).toBe(ids.length);
    } finally {
      if (dir) await db.close();
    }
  }, 180_000);
});
