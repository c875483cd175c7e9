import type { Db, Queryable } from '../../db/index.ts';
import { CLICK_ROLLUP_TABLES } from './click-delta-repository.ts';

/** SQL that is true when `zone` (an SQL expression) has ready daily rollups. */
export const zoneReady = (zone: string) =>
  `EXISTS (SELECT 1 FROM rollup_zones rz WHERE rz.zone = ${zone} AND rz.ready)`;

/**
 * SQL that is true when the 15-minute click bucket `bucket` is not folded into the daily rollups of
 * `zone` yet, so reports read it from the 15-minute rollups (migration 0084); false when the zone
 * is not ready. `bound` names the parameter holding `unfoldedClicksFrom`, which bounds the scan of
 * click_rollups' bucket index (all SQL expressions).
 */
export const unfoldedClicks = (bucket: string, zone: string, bound: string) =>
  `${bucket} >= ${bound}::timestamptz
   AND ${bucket} >= (SELECT rz.clicks_folded_to FROM rollup_zones rz WHERE rz.zone = ${zone} AND rz.ready)`;

/**
 * The earliest 15-minute click bucket a report may read beside the daily rollups of a ready zone,
 * passed to the report as a constant so the planner bounds its scan of click_rollups' bucket
 * index (the exact cut, per zone, is `unfoldedClicks`). Folded instants only move forward, and a
 * zone leaving 'infinity' opens at or after the others' instant; while one is at 'infinity' (for
 * the moment between its build and its fold), it may open at its fold's clock, so the bound
 * reaches a day before the last bucket written.
 */
export async function unfoldedClicksFrom(db: Queryable): Promise<string> {
  // As text: the bound may be an infinity, which no Date holds.
  const [r] = await db.query<{ since: string }>(
    `SELECT coalesce(least(
              (SELECT min(clicks_folded_to) FROM rollup_zones WHERE ready),
              CASE WHEN EXISTS (SELECT 1 FROM rollup_zones WHERE ready AND clicks_folded_to = 'infinity')
                   THEN coalesce((SELECT max(bucket) FROM click_rollups) - interval '1 day', '-infinity') END),
            'infinity')::text AS since`,
    [],
    'unfolded_clicks_from',
  );
  return r?.since ?? 'infinity';
}

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
   * Folds every ready zone's clicks up to `to` (a quarter-hour edge): adds the 15-minute click
   * rollups from its folded instant to `to` to its daily rows. A zone at 'infinity' (its daily
   * rows kept by every batch: just built, or from before migration 0084) opens at the later of
   * `to` and the other zones' instant, its daily rows of that day on recounted from the quarter
   * hours before it, so folded instants never move back. The SHARE lock waits for the batches
   * under way and holds new ones until the fold commits: a batch reads the folded instants in its
   * own snapshot, so none writes into a range while it is folded. Returns whether a zone moved.
   */
  async fold(to: Date): Promise<boolean> {
    const [due] = await this.db.query<{ due: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM rollup_zones
                      WHERE ready AND (clicks_folded_to < $1 OR clicks_folded_to = 'infinity')) AS due`,
      [to],
      'rollup_zones_fold_due',
    );
    if (!due?.due) return false;
    return this.db.tx(async (q: Queryable) => {
      await q.exec(`LOCK TABLE ${CLICK_ROLLUP_TABLES} IN SHARE MODE`);
      // FOR UPDATE: a second process folding at once waits here, then sees the zones moved.
      const opening = (
        await q.query<{ zone: string }>(
          "SELECT zone FROM rollup_zones WHERE ready AND clicks_folded_to = 'infinity' ORDER BY zone FOR UPDATE",
        )
      ).map((r) => r.zone);
      if (opening.length) await this.open(q, opening, to);
      const moved = await q.query(
        `WITH z AS (
           SELECT zone, clicks_folded_to AS since FROM rollup_zones
           WHERE ready AND clicks_folded_to < $1 FOR UPDATE
         ), added AS (
           INSERT INTO click_daily_rollups AS d (zone, day, kind, site_id, toplist_id, position, brand_id, program_id, n)
           SELECT z.zone, (c.bucket AT TIME ZONE z.zone)::date, c.kind, c.site_id, c.toplist_id, c.position,
                  c.brand_id, c.program_id, sum(c.n)
           FROM z JOIN click_rollups c ON c.bucket >= z.since AND c.bucket < $1
           GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
           ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
           ON CONFLICT ON CONSTRAINT click_daily_rollups_key DO UPDATE SET n = d.n + EXCLUDED.n
         )
         UPDATE rollup_zones r SET clicks_folded_to = $1 FROM z WHERE r.zone = z.zone RETURNING r.zone`,
        [to],
      );
      return opening.length + moved.length > 0;
    });
  }

  /**
   * Gives zones at 'infinity' a folded instant: the later of `to` and the other zones' (instants
   * only move forward, which reports rely on). Their daily rows of the instant's local day and
   * after are recounted from the quarter hours before it; earlier days hold every bucket already.
   */
  private async open(q: Queryable, zones: readonly string[], to: Date): Promise<void> {
    const [at] = await q.query<{ f: string }>(
      `SELECT greatest($1::timestamptz,
                       (SELECT max(clicks_folded_to) FROM rollup_zones
                        WHERE ready AND clicks_folded_to <> 'infinity'))::text AS f`,
      [to],
    );
    const f = (at as { f: string }).f;
    const since = (zone: string) => `(($2::timestamptz AT TIME ZONE ${zone})::date)`;
    await q.query(
      `DELETE FROM click_daily_rollups WHERE zone = ANY($1::text[]) AND day >= ${since('zone')}`,
      [zones, f],
    );
    await q.query(
      `INSERT INTO click_daily_rollups (zone, day, kind, site_id, toplist_id, position, brand_id, program_id, n)
       SELECT z.zone, (c.bucket AT TIME ZONE z.zone)::date, c.kind, c.site_id, c.toplist_id, c.position,
              c.brand_id, c.program_id, sum(c.n)
       FROM unnest($1::text[]) AS z(zone)
       JOIN click_rollups c ON c.bucket >= $2::timestamptz - interval '2 days' AND c.bucket < $2
                            AND (c.bucket AT TIME ZONE z.zone)::date >= ${since('z.zone')}
       GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
       ORDER BY 1, 2, 3, 4, 5, 6, 7, 8`,
      [zones, f],
    );
    await q.query('UPDATE rollup_zones SET clicks_folded_to = $2 WHERE zone = ANY($1::text[])', [zones, f]);
  }

  /**
   * Waits until every write that began before now has ended: a batch whose statement did not yet
   * see a newly added zone has then committed (or failed), so its rows are in the 15-minute
   * rollups that `build` reads. New batches wait only for that instant.
   */
  async barrier(): Promise<void> {
    await this.db.tx(async (q: Queryable) => {
      await q.exec(`LOCK TABLE ${CLICK_ROLLUP_TABLES}, conversion_rollups IN SHARE MODE`);
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
