import { firstValue } from '../../db/first-value.ts';
import type { Queryable } from '../../db/index.ts';
import { type Paged, pagedRows } from '../../db/paged.ts';
import type { StatsDimension, StatsFilter, StatsRow } from '../tracking/types.ts';
import {
  readRollups,
  zoneReady as ready,
  unfoldedClicks,
  unfoldedClicksFrom,
} from './rollup-zone-repository.ts';

/**
 * Events whose amounts are revenue: money the player deposited (comparable with the operator
 * report's `deposits`).
 */
export const REVENUE_EVENTS: readonly string[] = ['ftd', 'deposit'];
/** Events whose amounts are commission: what the operator pays us (its report's `commission`). */
export const COMMISSION_EVENTS: readonly string[] = ['cpa', 'revshare', 'commission'];

/** Whether a zone the report cuts days in ($1 mode, $2 fixed zone) has no ready daily rollups. */
const SOME_ZONE_UNREADY = `SELECT EXISTS (
  SELECT 1 FROM (SELECT $2::text AS zone WHERE $1::text = 'fixed'
                 UNION ALL SELECT 'UTC' WHERE $1 <> 'fixed'
                 UNION ALL SELECT timezone FROM tracking_sites WHERE $1 = 'site'
                 UNION ALL SELECT timezone FROM affiliate_programs WHERE $1 = 'program') used
  WHERE NOT ${ready('used.zone')}) AS unready`;

/** Groups a branch of the report's facts to one row per day, dimension, event and currency. */
const BY_KEY = 'GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11';

/** SQL of the stats report: from the daily or 15-minute rollups, or by sub_id from a bounded raw scan. */
export class StatsRepository {
  constructor(private readonly db: Queryable) {}

  /**
   * Counted clicks, impressions, conversions (per event) and money (per currency) per day and
   * dimension. Each row's day is cut in the zone `f.tz` names: its site's, its programme's (UTC
   * when it has none) or one fixed zone, and read from that zone's daily rollups when it is ready
   * (with its clicks not folded yet from the 15-minute ones), else from the 15-minute ones. Rows
   * come pre-paged with the total number of rows.
   * With `bySubId` the rows are also split by the click's sub_id, read from the raw clicks and
   * conversions (sub_id is not a rollup key); the service bounds that range.
   */
  async stats(f: StatsFilter): Promise<Paged<StatsRow>> {
    if (f.bySubId) return this.page(f, false, null);
    const since = await unfoldedClicksFrom(this.db);
    return readRollups(
      () => this.someZoneUnready(f),
      (withQuarters) => this.page(f, withQuarters, since),
    );
  }

  private async someZoneUnready(f: StatsFilter): Promise<boolean> {
    const [r] = await this.db.query<{ unready: boolean }>(SOME_ZONE_UNREADY, [f.tz, f.zone ?? 'UTC']);
    return r?.unready === true;
  }

  /**
   * One page of the report; the 15-minute rollups of unready zones are read only `withQuarters`,
   * those of ready zones' unfolded clicks from `since` (`unfoldedClicksFrom`; null by sub_id).
   */
  private async page(f: StatsFilter, withQuarters: boolean, since: string | null): Promise<Paged<StatsRow>> {
    const zone = (site: string, program: string) =>
      `CASE $3 WHEN 'site' THEN coalesce(${site}.timezone, 'UTC') WHEN 'program' THEN coalesce(${program}.timezone, 'UTC') ELSE $4 END`;
    const where = (t: string) =>
      `($5::int IS NULL OR ${t}.program_id = $5) AND ($6::int IS NULL OR ${t}.site_id = $6)
       AND ($7::int IS NULL OR ${t}.toplist_id = $7) AND ($8::int IS NULL OR ${t}.brand_id = $8)
       AND ($13::int[] IS NULL OR ${t}.site_id = ANY($13::int[]))`;
    // Days are cut per row, so the scan takes a day either side (every zone is within ±14 h of UTC).
    const during = (column: string) =>
      `${column} >= ($1::date - 1)::timestamp AT TIME ZONE 'UTC' AND ${column} < ($2::date + 2)::timestamp AT TIME ZONE 'UTC'`;
    const joins = (t: string) =>
      `LEFT JOIN tracking_sites ts ON ts.site_id = ${t}.site_id LEFT JOIN affiliate_programs p ON p.id = ${t}.program_id
       CROSS JOIN LATERAL (SELECT ${zone('ts', 'p')} AS tz) z`;
    const quarters = `UNION ALL
         SELECT c.site_id, c.toplist_id, c.position, c.brand_id, c.program_id, NULL::text, c.kind, NULL::text,
                NULL::text, z.tz, (c.bucket AT TIME ZONE z.tz)::date, sum(c.n), 0::numeric
         FROM click_rollups c ${joins('c')}
         WHERE NOT ${ready('z.tz')} AND ${during('c.bucket')} AND ${where('c')}
         ${BY_KEY}
         UNION ALL
         SELECT v.site_id, v.toplist_id, v.position, v.brand_id, v.program_id, NULL::text, 'conversion', v.event,
                v.currency::text, z.tz, (v.bucket AT TIME ZONE z.tz)::date, sum(v.n), sum(v.amount)
         FROM conversion_rollups v ${joins('v')}
         WHERE NOT ${ready('z.tz')} AND ${during('v.bucket')} AND ${where('v')}
         ${BY_KEY}`;
    // Clicks the click guard kept from the operator: from the raw rows (never rolled up).
    const blocked = `UNION ALL
         SELECT c.site_id, c.toplist_id, c.position, c.brand_id, c.program_id, ${f.bySubId ? 'c.sub_id' : 'NULL::text'},
                'blocked', NULL::text, NULL::text, z.tz, (c.at AT TIME ZONE z.tz)::date, count(*), 0::numeric
         FROM clicks c ${joins('c')}
         WHERE c.flag = 'blocked' AND ${during('c.at')} AND ${where('c')}
         ${BY_KEY}`;
    const facts = f.bySubId
      ? `SELECT c.site_id, c.toplist_id, c.position, c.brand_id, c.program_id, c.sub_id, c.kind, NULL::text AS event,
                NULL::text AS currency, z.tz, (c.at AT TIME ZONE z.tz)::date AS day, count(*) AS n, 0::numeric AS amount
         FROM clicks c ${joins('c')}
         WHERE c.flag IS NULL AND ${during('c.at')} AND ${where('c')}
         ${BY_KEY}
         UNION ALL
         SELECT v.site_id, v.toplist_id, v.position, v.brand_id, v.program_id, k.sub_id, 'conversion', v.event,
                v.currency::text, z.tz, (v.received_at AT TIME ZONE z.tz)::date, count(*), coalesce(sum(v.amount), 0)
         FROM conversions v ${joins('v')}
         LEFT JOIN clicks k ON v.attributed AND k.id = v.click_id AND k.kind = 'click'
         WHERE ${during('v.received_at')} AND ${where('v')}
         ${BY_KEY}
         ${blocked}`
      : // A row whose zone is ready reads its day's daily rollup; any other cuts the 15-minute buckets
        // (only when the report names such a zone). A row's zone is either, so each branch already
        // holds one row per day, dimension and event.
        // Clicks of a ready zone also read the quarter hours not folded into its daily rows yet
        // (lines sum both per day).
        `SELECT c.site_id, c.toplist_id, c.position, c.brand_id, c.program_id, NULL::text AS sub_id, c.kind,
                NULL::text AS event, NULL::text AS currency, z.tz, c.day, c.n, 0::numeric AS amount
         FROM click_daily_rollups c ${joins('c')}
         WHERE c.zone = z.tz AND ${ready('c.zone')} AND c.day BETWEEN $1::date AND $2::date AND ${where('c')}
         UNION ALL
         SELECT c.site_id, c.toplist_id, c.position, c.brand_id, c.program_id, NULL::text, c.kind, NULL::text,
                NULL::text, z.tz, (c.bucket AT TIME ZONE z.tz)::date, sum(c.n), 0::numeric
         FROM click_rollups c ${joins('c')}
         WHERE ${unfoldedClicks('c.bucket', 'z.tz', '$14')} AND ${during('c.bucket')} AND ${where('c')}
         ${BY_KEY}
         UNION ALL
         SELECT v.site_id, v.toplist_id, v.position, v.brand_id, v.program_id, NULL::text, 'conversion', v.event,
                v.currency::text, z.tz, v.day, v.n, v.amount
         FROM conversion_daily_rollups v ${joins('v')}
         WHERE v.zone = z.tz AND ${ready('v.zone')} AND v.day BETWEEN $1::date AND $2::date AND ${where('v')}
         ${withQuarters ? quarters : ''}
         ${blocked}`;
    const dims = 'day, tz, site_id, toplist_id, position, brand_id, program_id, sub_id';
    // A grouped report blanks the dimensions it sums over before anything is added up, so every
    // later step (money per currency included) works on the coarser key unchanged.
    const kept = (d: StatsDimension) => !f.group || f.group.includes(d);
    const blank = (d: StatsDimension, column: string, type: string) =>
      kept(d) ? column : `NULL::${type} AS ${column}`;
    const picked = [
      blank('day', 'day', 'date'),
      kept('day') ? 'tz' : 'NULL::text AS tz',
      blank('site', 'site_id', 'int'),
      blank('toplist', 'toplist_id', 'int'),
      blank('position', 'position', 'int'),
      blank('brand', 'brand_id', 'int'),
      blank('program', 'program_id', 'int'),
      'sub_id',
    ].join(', ');
    const order = kept('day') ? '' : 'clicks DESC, ';
    const page = await pagedRows<StatsRow & { sub_id?: string | null }>(f, (w) =>
      this.db.query<StatsRow & { total: number; sub_id?: string | null }>(
        // Inlined, each use of per scans only the branches of its kind (clicks once, conversions
        // twice) instead of writing every fact to a temporary store first.
        `WITH per AS NOT MATERIALIZED (${facts}
       ), kept AS NOT MATERIALIZED (
         SELECT ${picked}, kind, event, currency, n, amount FROM per WHERE day BETWEEN $1::date AND $2::date
       ), parts AS (
         SELECT ${dims}, kind, event, NULL::text AS currency, n, NULL::numeric AS revenue, NULL::numeric AS commission
         FROM kept WHERE kind <> 'conversion'
         UNION ALL
         SELECT ${dims}, kind, event, NULL, sum(n), NULL, NULL
         FROM kept WHERE kind = 'conversion'
         GROUP BY ${dims}, kind, event
         UNION ALL
         SELECT ${dims}, 'money', NULL, currency, 0, sum(amount) FILTER (WHERE event = ANY($11::text[])),
                sum(amount) FILTER (WHERE event = ANY($12::text[]))
         FROM kept WHERE kind = 'conversion' AND currency IS NOT NULL
         GROUP BY ${dims}, currency
       ), lines AS (
         SELECT ${dims},
                coalesce(sum(n) FILTER (WHERE kind = 'click'), 0)::int AS clicks,
                coalesce(sum(n) FILTER (WHERE kind = 'impression'), 0)::int AS impressions,
                coalesce(sum(n) FILTER (WHERE kind = 'blocked'), 0)::int AS blocked_clicks,
                coalesce(jsonb_object_agg(event, n::int) FILTER (WHERE kind = 'conversion'), '{}'::jsonb) AS events,
                coalesce(jsonb_object_agg(currency, round(revenue, 4)::text)
                           FILTER (WHERE kind = 'money' AND revenue IS NOT NULL), '{}'::jsonb) AS revenue,
                coalesce(jsonb_object_agg(currency, round(commission, 4)::text)
                           FILTER (WHERE kind = 'money' AND commission IS NOT NULL), '{}'::jsonb) AS commission
         FROM parts
         GROUP BY ${dims}
       )
       SELECT to_char(day, 'YYYY-MM-DD') AS day, tz AS timezone, site_id AS "siteId", toplist_id AS "toplistId",
              position, brand_id AS "brandId", program_id AS "programId", sub_id, clicks, impressions,
              blocked_clicks AS "blockedClicks", events,
              revenue, commission,
              (SELECT coalesce(jsonb_object_agg(key, CASE WHEN clicks > 0 THEN round(value::numeric / clicks, 4)::text END),
                               '{}'::jsonb)
               FROM jsonb_each_text(commission)) AS epc,
              count(*) OVER ()::int AS total
       FROM lines
       ORDER BY ${order}day, site_id NULLS FIRST, toplist_id NULLS FIRST, position NULLS FIRST, brand_id NULLS FIRST,
                program_id NULLS FIRST, sub_id NULLS FIRST, tz
       LIMIT $9 OFFSET $10`,
        [
          f.from,
          f.to,
          f.tz,
          f.zone ?? 'UTC',
          f.programId ?? null,
          f.siteId ?? null,
          f.toplistId ?? null,
          f.brandId ?? null,
          w.limit,
          w.offset,
          REVENUE_EVENTS,
          COMMISSION_EVENTS,
          f.siteIds ? [...f.siteIds] : null,
          ...(since === null ? [] : [since]),
        ],
      ),
    );
    return {
      ...page,
      rows: page.rows.map(({ sub_id, ...r }) => (f.bySubId ? { ...r, subId: sub_id ?? null } : r)),
    };
  }

  /** A site's reporting time zone, when one was set. */
  async siteTimezone(siteId: number): Promise<string | undefined> {
    return firstValue<string>(this.db, 'SELECT timezone FROM tracking_sites WHERE site_id = $1', [siteId]);
  }

  /** Sets a site's reporting time zone. */
  async setSiteTimezone(siteId: number, timezone: string): Promise<void> {
    await this.db.query(
      `INSERT INTO tracking_sites (site_id, timezone) VALUES ($1, $2)
       ON CONFLICT (site_id) DO UPDATE SET timezone = EXCLUDED.timezone, updated_at = now()`,
      [siteId, timezone],
    );
  }
}
