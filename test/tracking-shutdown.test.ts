import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { type Db, openDb } from '../src/db/index.ts';
import { TrackingService } from '../src/modules/tracking/service.ts';
import { DB_KIND, servicesOn } from './helpers.ts';
import { type ServedDb, serve, servedDb } from './serve-process.ts';
import { redirectedClickIds, storm, trackingFixture } from './tracking-fixture.ts';

/**
 * A real `podium serve` process under a click storm gets SIGTERM part-way: every click it
 * answered with a 302 must be in the database afterwards (pending batches are drained). Killed
 * outright (SIGKILL), it must still have every click it answered: a 302 leaves only after its
 * batch committed and its log was flushed, on PGlite as on PostgreSQL.
 */
describe(`SIGTERM or SIGKILL during a click storm (${DB_KIND})`, () => {
  const all: ServedDb[] = [];
  afterAll(async () => {
    for (const served of all) await served.remove();
  });

  /** A seeded database and the environment that points `podium serve` at it. */
  async function seed(): Promise<{ env: NodeJS.ProcessEnv; slug: string; reopen: () => Promise<Db> }> {
    const served = await servedDb('podium-drain');
    all.push(served);
    const { db, env, dir } = served;
    const services = await servicesOn(db);
    const fx = await trackingFixture(services, db);
    const config = loadConfig({}, { logLevel: 'silent' });
    await new TrackingService(db, services.catalog, config, () => new Date()).createProgram({
      slug: 'drain',
      name: 'Drain',
      landingParams: 'btag=a_{click_id}',
      trackerIds: fx.trackerIds,
    });
    if (dir) await db.close();
    return {
      env,
      slug: fx.slugs[0] as string,
      // On PGlite the killed server's data directory is opened again, as its next start would.
      reopen: async () => {
        if (!dir) return db;
        const again = await openDb({ dataDir: dir });
        await servicesOn(again);
        return again;
      },
    };
  }

  for (const signal of ['SIGTERM', 'SIGKILL'] as const)
    it(`loses none of the clicks it answered (${signal})`, async () => {
      const { env, slug, reopen } = await seed();
      const server = await serve(env);
      let answered = 0;
      const results = await storm(server.url, `/go/${slug}`, 2000, () => {
        answered += 1;
        if (answered === 200) server.proc.kill(signal);
      });
      const code = await server.exit;
      if (signal === 'SIGTERM') expect(code).toBe(0);
      else expect(server.proc.signalCode).toBe('SIGKILL');
      const ids = redirectedClickIds(results);
      expect(ids.length).toBeGreaterThanOrEqual(200);
      // Killed part-way: the rest of the storm was never answered.
      if (signal === 'SIGKILL') expect(ids.length).toBeLessThan(2000);
      const db = await reopen();
      try {
        const [row] = await db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM clicks WHERE id = ANY($1::text[])',
          [ids],
        );
        expect(row?.n).toBe(ids.length);
        // Counted exactly in the rollups either way; a clean stop also moved its last deltas.
        const [counts] = await db.query<{ raw: number; rolled: number; deltas: number }>(
          `SELECT (SELECT count(*)::int FROM clicks WHERE flag IS NULL) AS raw,
                  (SELECT sum(n)::int FROM click_rollups) AS rolled,
                  (SELECT count(*)::int FROM click_rollup_deltas) AS deltas`,
        );
        expect(counts?.rolled).toBe(counts?.raw);
        if (signal === 'SIGTERM') expect(counts?.deltas).toBe(0);
      } finally {
        if (all.at(-1)?.dir) await db.close();
      }
    }, 180_000);
});
