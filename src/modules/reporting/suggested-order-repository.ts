import type { Queryable } from '../../db/index.ts';
import { unfoldedClicks, unfoldedClicksFrom } from './rollup-zone-repository.ts';
import { COMMISSION_EVENTS } from './stats-repository.ts';

/** The estimate knobs, all in the units the docs give (clicks, conversions, a normal quantile). */
export interface Shrinkage {
  /** Prior strength of the conversion rate, in clicks. */
  priorClicks: number;
  /** Prior strength of the commission per conversion, in conversions. */
  priorConversions: number;
  /** Normal quantile of the interval (1.645: 90 %). */
  z: number;
}

/** One item of a toplist with its figures and estimates (decimal strings). */
export interface SuggestedRow {
  brandId: number;
  brandName: string;
  currentPosition: number;
  suggestedPosition: number;
  clicks: number;
  conversions: number;
  commission: string;
  epc: string | null;
  shrunkEpc: string;
  low: string;
  high: string;
}

/** The whole answer of one query: the currency used, the family prior and the list's expectations. */
export interface SuggestedFigures {
  currency: string;
  priorEpc: string | null;
  currentEpc: string;
  suggestedEpc: string;
  change: string;
  items: SuggestedRow[];
}

/**
 * Reads the UTC daily rollups of a toplist's geo family for the suggested order (UTC is always
 * maintained and ready: migration 0082), with the clicks not folded into them yet (migration
 * 0084); all arithmetic in SQL numeric.
 */
export class SuggestedOrderRepository {
  constructor(private readonly db: Queryable) {}

  /**
   * The toplist's items ranked by shrunk EPC over the UTC days [from, to]. `currency` null takes
   * the family's most frequent commission currency in the window (else the programmes' first, else EUR).
   */
  async figures(
    toplistId: number,
    from: string,
    to: string,
    currency: string | null,
    s: Shrinkage,
  ): Promise<SuggestedFigures> {
    const since = await unfoldedClicksFrom(this.db);
    const rows = await this.db.query<SuggestedRow & Omit<SuggestedFigures, 'items'>>(
      `WITH t AS (
         SELECT id, site_id, template_id FROM toplists WHERE id = $1
       ), fam AS (
         SELECT f.id FROM toplists f JOIN t ON f.site_id = t.site_id AND f.template_id = t.template_id
       ), cur AS (
         SELECT coalesce($4::text,
                         (SELECT v.currency::text FROM conversion_daily_rollups v
                          WHERE v.zone = 'UTC' AND v.toplist_id IN (SELECT id FROM fam) AND v.event = ANY($5::text[])
                            AND v.currency IS NOT NULL AND v.day BETWEEN $2::date AND $3::date
                          GROUP BY 1 ORDER BY sum(v.n) DESC, 1 LIMIT 1),
                         (SELECT currency::text FROM affiliate_programs ORDER BY id LIMIT 1),
                         'EUR') AS currency
       ), clk AS (
         SELECT toplist_id, brand_id, position, sum(n) AS clicks
         FROM (SELECT c.toplist_id, c.brand_id, c.position, c.n
               FROM click_daily_rollups c
               WHERE c.zone = 'UTC' AND c.kind = 'click' AND c.toplist_id IN (SELECT id FROM fam)
                 AND c.day BETWEEN $2::date AND $3::date
               UNION ALL
               SELECT c.toplist_id, c.brand_id, c.position, c.n
               FROM click_rollups c
               WHERE ${unfoldedClicks('c.bucket', "'UTC'", '$9')}
                 AND c.kind = 'click' AND c.toplist_id IN (SELECT id FROM fam)
                 AND c.bucket >= $2::date::timestamp AT TIME ZONE 'UTC'
                 AND c.bucket < ($3::date + 1)::timestamp AT TIME ZONE 'UTC') x
         GROUP BY 1, 2, 3
       ), cv AS (
         SELECT v.toplist_id, v.brand_id, sum(v.n) AS conversions, sum(v.amount) AS commission
         FROM conversion_daily_rollups v, cur
         WHERE v.zone = 'UTC' AND v.toplist_id IN (SELECT id FROM fam) AND v.event = ANY($5::text[])
           AND v.currency = cur.currency AND v.day BETWEEN $2::date AND $3::date
         GROUP BY 1, 2
       ), fam_total AS (
         SELECT (SELECT coalesce(sum(clicks), 0) FROM clk) AS clicks,
                (SELECT coalesce(sum(conversions), 0) FROM cv) AS conversions,
                (SELECT coalesce(sum(commission), 0) FROM cv) AS commission
       ), prior AS (
         SELECT CASE WHEN clicks > 0 THEN conversions::numeric / clicks ELSE 0 END AS rate,
                CASE WHEN conversions > 0 THEN commission / conversions ELSE 0 END AS value,
                CASE WHEN clicks > 0 THEN commission / clicks END AS epc
         FROM fam_total
       ), per AS (
         SELECT i.position, i.brand_id, b.name,
                coalesce((SELECT sum(clicks) FROM clk WHERE toplist_id = $1 AND brand_id = i.brand_id), 0) AS clicks,
                coalesce((SELECT sum(conversions) FROM cv WHERE toplist_id = $1 AND brand_id = i.brand_id), 0)
                  AS conversions,
                coalesce((SELECT sum(commission) FROM cv WHERE toplist_id = $1 AND brand_id = i.brand_id), 0)
                  AS commission
         FROM toplist_items i JOIN brands b ON b.id = i.brand_id
         WHERE i.toplist_id = $1
       ), shrunk AS (
         SELECT per.*, (per.conversions + $6::numeric * p.rate) / (per.clicks + $6::numeric) AS rate,
                (per.commission + $7::numeric * p.value) / (per.conversions + $7::numeric) AS value,
                sqrt(per.conversions + $6::numeric * p.rate) / (per.clicks + $6::numeric) AS sd
         FROM per, prior p
       ), ranked AS (
         SELECT shrunk.*, rate * value AS estimate,
                row_number() OVER (ORDER BY rate * value DESC, position) AS suggested
         FROM shrunk
       ), seen AS (
         SELECT position, sum(clicks) AS clicks FROM clk WHERE toplist_id = $1 GROUP BY 1
       ), weights AS (
         -- The observed click share of each position; equal shares before any click.
         SELECT r.position,
                CASE WHEN sum(coalesce(s.clicks, 0)) OVER () > 0
                     THEN coalesce(s.clicks, 0) / sum(coalesce(s.clicks, 0)) OVER ()
                     ELSE 1.0 / count(*) OVER () END AS w
         FROM ranked r LEFT JOIN seen s ON s.position = r.position
       ), expected AS (
         SELECT coalesce(sum(wc.w * r.estimate), 0) AS current, coalesce(sum(ws.w * r.estimate), 0) AS suggested
         FROM ranked r JOIN weights wc ON wc.position = r.position JOIN weights ws ON ws.position = r.suggested
       )
       SELECT cur.currency, round(p.epc, 4)::text AS "priorEpc", round(e.current, 4)::text AS "currentEpc",
              round(e.suggested, 4)::text AS "suggestedEpc", round(e.suggested - e.current, 4)::text AS change,
              r.brand_id AS "brandId", r.name AS "brandName", r.position AS "currentPosition",
              r.suggested::int AS "suggestedPosition", r.clicks::int AS clicks, r.conversions::int AS conversions,
              round(r.commission, 4)::text AS commission,
              CASE WHEN r.clicks > 0 THEN round(r.commission / r.clicks, 4)::text END AS epc,
              round(r.estimate, 4)::text AS "shrunkEpc",
              round(greatest(r.rate - $8::numeric * r.sd, 0) * r.value, 4)::text AS low,
              round((r.rate + $8::numeric * r.sd) * r.value, 4)::text AS high
       FROM cur, prior p, expected e LEFT JOIN ranked r ON true
       ORDER BY r.suggested`,
      [toplistId, from, to, currency, COMMISSION_EVENTS, s.priorClicks, s.priorConversions, s.z, since],
    );
    const first = rows[0] as SuggestedRow & Omit<SuggestedFigures, 'items'>;
    return {
      currency: first.currency,
      priorEpc: first.priorEpc,
      currentEpc: first.currentEpc,
      suggestedEpc: first.suggestedEpc,
      change: first.change,
      items: rows
        .filter((r) => r.brandId !== null)
        .map((r) => ({
          brandId: r.brandId,
          brandName: r.brandName,
          currentPosition: r.currentPosition,
          suggestedPosition: r.suggestedPosition,
          clicks: r.clicks,
          conversions: r.conversions,
          commission: r.commission,
          epc: r.epc,
          shrunkEpc: r.shrunkEpc,
          low: r.low,
          high: r.high,
        })),
    };
  }
}
