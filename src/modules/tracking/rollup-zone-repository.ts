import type { Db, Queryable } from '../../db/index.ts';

/** SQL that is true when `zone` (an SQL expression) has ready daily rollups. */
export const zoneReady = (zone: string) =>
  `EXISTS (SELECT 1 FROM rollup_zones rz WHERE rz.zone = ${zone} AND rz.ready)`;

/**
 * Runs a report read with the 15-minute branches only when `unready` (a zone the report cuts days
 * in has no ready daily rollups): a branch never run still counts in the plan's cost, and that cost
 * alone has PostgreSQL JIT-compile the query (tenths of seconds to seconds) on a large
 * installation. A zone dropped during a daily-only read (no site or programme uses it any more)
 * took its daily rows along, so the read is repeated with the branches; dropped, added back and
 * built again within one read would take two runs of the zone job.
 */
export async function readRollups<T>(
  unready: () => Promise<boolean>,
  read: (withQuarters: boolean) => Promise<T>,
): Promise<T> {
  if (await unready()) return read(true);
  const out = await read(false);
  return (await unready()) ? read(true) : out;
}

/** The zones in use: UTC, and every tracking site's and programme's zone. */
const USED_ZONES =
  "SELECT 'UTC' AS zone UNION SELECT timezone FROM tracking_sites UNION SELECT timezone FROM affiliate_programs";

/** SQL of the report zones whose daily rollups are maintained (migration 0082). */
export class RollupZoneRepository {
  constructor(private readonly db: Db) {}

  /**
   * Makes the maintained zones those in use (UTC, every tracking site's and programme's zone):
   * adds the missing ones (not ready: writers maintain them from the next statement on) and
   * drops the unused ones with their daily rows. Returns the zones not ready yet.
   */
  async reconcileZones(): Promise<string[]> {
    // The usual minute: nothing to add, drop or build. Told by one prepared read instead of the
    // writing statement, which PGlite plans anew each time inside a transaction (~8 ms a minute).
    const [settled] = await this.db.query<{ settled: boolean }>(
      `SELECT NOT EXISTS (SELECT 1 FROM rollup_zones WHERE NOT ready)
              AND (SELECT array_agg(zone ORDER BY zone) FROM rollup_zones) =
                  (SELECT array_agg(zone ORDER BY zone) FROM (${USED_ZONES}) u) AS settled`,
      [],
      'rollup_zones_settled',
    );
    if (settled?.settled) return [];
    return this.db.tx(async (q: Queryable) => {
      await q.query(
        `WITH used AS (${USED_ZONES}), gone AS (
           DELETE FROM rollup_zones z WHERE NOT EXISTS (SELECT 1 FROM used u WHERE u.zone = z.zone) RETURNING zone
         ), clicks AS (
           DELETE FROM click_daily_rollups d USING gone g WHERE d.zone = g.zone
         ), conversions AS (
           DELETE FROM conversion_daily_rollups d USING gone g WHERE d.zone = g.zone
         )
         INSERT INTO rollup_zones (zone) SELECT zone FROM used ON CONFLICT (zone) DO NOTHING`,
      );
      const rows = await q.query<{ zone: string }>(
        'SELECT zone FROM rollup_zones WHERE NOT ready ORDER BY zone',
      );
      return rows.map((r) => r.zone);
    });
  }

  /**
   * Waits until every write that began before now has ended: a batch whose statement did not yet
   * see a newly added zone has then committed (or failed), so its rows are in the 15-minute
   * rollups that `build` reads. New batches wait only for that instant.
   */
  async barrier(): Promise<void> {
    await this.db.tx(async (q: Queryable) => {
      await q.exec('LOCK TABLE click_rollups, conversion_rollups IN SHARE MODE');
    });
  }

  /**
   * Builds `zone`'s daily rows exactly and marks it ready; false when it was ready already (or is
   * gone). One statement per table reads the 15-minute rollups and the daily rows in the same
   * snapshot and adds the difference, so rows that batches added since the zone was listed (and
   * batches committing meanwhile) are counted once. Run after `barrier`.
   */
  async build(zone: string): Promise<boolean> {
    return this.db.tx(async (q: Queryable) => {
      // The row lock keeps two builders of the zone (two processes) from both adding the difference.
      const claimed = await q.query('SELECT 1 FROM rollup_zones WHERE zone = $1 AND NOT ready FOR UPDATE', [
        zone,
      ]);
      if (!claimed.length) return false;
      await q.query(
        `INSERT INTO click_daily_rollups AS d (zone, day, kind, site_id, toplist_id, position, brand_id, program_id, n)
         SELECT $1, day, kind, site_id, toplist_id, position, brand_id, program_id, sum(n)
         FROM (SELECT (bucket AT TIME ZONE $1)::date AS day, kind, site_id, toplist_id, position, brand_id, program_id, n
               FROM click_rollups
               UNION ALL
               SELECT day, kind, site_id, toplist_id, position, brand_id, program_id, -n
               FROM click_daily_rollups WHERE zone = $1) x
         GROUP BY 2, 3, 4, 5, 6, 7, 8 HAVING sum(n) <> 0
         ORDER BY 2, 3, 4, 5, 6, 7, 8
         ON CONFLICT ON CONSTRAINT click_daily_rollups_key DO UPDATE SET n = d.n + EXCLUDED.n`,
        [zone],
      );
      await q.query(
        `INSERT INTO conversion_daily_rollups AS d (zone, day, event, currency, site_id, toplist_id, position,
                                                    brand_id, program_id, n, amount)
         SELECT $1, day, event, currency, site_id, toplist_id, position, brand_id, program_id, sum(n), sum(amount)
         FROM (SELECT (bucket AT TIME ZONE $1)::date AS day, event, currency, site_id, toplist_id, position, brand_id,
                      program_id, n, amount
               FROM conversion_rollups
               UNION ALL
               SELECT day, event, currency, site_id, toplist_id, position, brand_id, program_id, -n, -amount
               FROM conversion_daily_rollups WHERE zone = $1) x
         GROUP BY 2, 3, 4, 5, 6, 7, 8, 9 HAVING sum(n) <> 0 OR sum(amount) <> 0
         ORDER BY 2, 3, 4, 5, 6, 7, 8, 9
         ON CONFLICT ON CONSTRAINT conversion_daily_rollups_key
         DO UPDATE SET n = d.n + EXCLUDED.n, amount = d.amount + EXCLUDED.amount`,
        [zone],
      );
      await q.query('UPDATE rollup_zones SET ready = true WHERE zone = $1', [zone]);
      return true;
    });
  }
}
