import { sql } from 'kysely';
import type { Queryable } from '../../db/index.ts';
import { kysely, type Sql } from '../../db/kysely.ts';
import { isoOrNull as iso } from '../../lib/time.ts';

/** An advertiser's machine token as listed (never the token itself). */
export interface AdvertiserToken {
  id: number;
  advertiser_id: string;
  name: string;
  hint: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** One package of a media buy: the buyer's reference and the reservation lines it became. */
export interface BuyPackage {
  package_id: string;
  buyer_ref: string;
  product_id: string;
  pricing_option_id: string;
  geo: string;
  impressions: number;
  line_nos: number[];
}

export interface MediaBuyRow {
  reservation_id: string;
  advertiser_id: string;
  buyer_ref: string;
  packages: BuyPackage[];
  created_at: string;
}

/** What one reservation line delivered over a range, from the ad server's report rows. */
export interface LineDelivery {
  line_no: number;
  impressions: number;
  clicks: number;
  /** Exact decimal: CPM × impressions / 1000, or the flat fee pro-rated by the days it ran. */
  spend: string;
}

const tokenRow = (r: {
  id: string | number;
  advertiser_id: string;
  name: string;
  hint: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}): AdvertiserToken => ({
  id: Number(r.id),
  advertiser_id: r.advertiser_id,
  name: r.name,
  hint: r.hint,
  created_at: iso(r.created_at)!,
  last_used_at: iso(r.last_used_at),
  revoked_at: iso(r.revoked_at),
});

const TOKEN_COLUMNS = [
  'id',
  'advertiser_id',
  'name',
  'hint',
  'created_at',
  'last_used_at',
  'revoked_at',
] as const;

/** SQL of the sales agent: advertiser tokens and the media buys made through it. */
export class SalesAgentRepository {
  private readonly k: Sql;

  constructor(private readonly db: Queryable) {
    this.k = kysely(db);
  }

  with(q: Queryable): SalesAgentRepository {
    return new SalesAgentRepository(q);
  }

  async insertToken(
    advertiserId: string,
    name: string,
    hash: Buffer,
    hint: string,
  ): Promise<AdvertiserToken> {
    const row = await this.k
      .insertInto('market_advertiser_tokens')
      .values({ advertiser_id: advertiserId, name, token_hash: hash, hint })
      .returning(TOKEN_COLUMNS)
      .executeTakeFirstOrThrow();
    return tokenRow(row);
  }

  async listTokens(advertiserId: string): Promise<AdvertiserToken[]> {
    const rows = await this.k
      .selectFrom('market_advertiser_tokens')
      .select(TOKEN_COLUMNS)
      .where('advertiser_id', '=', advertiserId)
      .orderBy('id')
      .execute();
    return rows.map(tokenRow);
  }

  async liveTokenCount(advertiserId: string): Promise<number> {
    const r = await this.k
      .selectFrom('market_advertiser_tokens')
      .select((e) => e.fn.countAll<string>().as('n'))
      .where('advertiser_id', '=', advertiserId)
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async revokeToken(advertiserId: string, id: number): Promise<AdvertiserToken | undefined> {
    const row = await this.k
      .updateTable('market_advertiser_tokens')
      .set({ revoked_at: sql`coalesce(revoked_at, now())` })
      .where('id', '=', id)
      .where('advertiser_id', '=', advertiserId)
      .returning(TOKEN_COLUMNS)
      .executeTakeFirst();
    return row && tokenRow(row);
  }

  /** The advertiser a live token belongs to (and marks it used); undefined for an unknown or revoked one. */
  async liveToken(hash: Buffer, at: Date): Promise<{ tokenId: number; advertiserId: string } | undefined> {
    const row = await this.k
      .updateTable('market_advertiser_tokens')
      .set({ last_used_at: at })
      .where('token_hash', '=', hash)
      .where('revoked_at', 'is', null)
      .returning(['id', 'advertiser_id'])
      .executeTakeFirst();
    return row && { tokenId: Number(row.id), advertiserId: row.advertiser_id };
  }

  async insertBuy(b: Omit<MediaBuyRow, 'created_at'>): Promise<void> {
    await this.k
      .insertInto('market_media_buys')
      .values({
        reservation_id: b.reservation_id,
        advertiser_id: b.advertiser_id,
        buyer_ref: b.buyer_ref,
        packages: JSON.stringify(b.packages),
      })
      .execute();
  }

  /** Replaces a buy's packages (their impressions changed by update_media_buy). */
  async setPackages(reservationId: string, packages: BuyPackage[]): Promise<void> {
    await this.k
      .updateTable('market_media_buys')
      .set({ packages: JSON.stringify(packages) })
      .where('reservation_id', '=', reservationId)
      .execute();
  }

  async buyByRef(advertiserId: string, buyerRef: string): Promise<MediaBuyRow | undefined> {
    return (await this.buys(advertiserId, { buyer_refs: [buyerRef] }))[0];
  }

  /** The advertiser's media buys, newest first, optionally by id or buyer reference (at most `limit`). */
  async buys(
    advertiserId: string,
    filter: { ids?: string[]; buyer_refs?: string[] },
    limit = 50,
  ): Promise<MediaBuyRow[]> {
    let q = this.k
      .selectFrom('market_media_buys')
      .select(['reservation_id', 'advertiser_id', 'buyer_ref', 'packages', 'created_at'])
      .where('advertiser_id', '=', advertiserId);
    if (filter.ids) q = q.where('reservation_id', 'in', filter.ids.length ? filter.ids : ['']);
    if (filter.buyer_refs)
      q = q.where('buyer_ref', 'in', filter.buyer_refs.length ? filter.buyer_refs : ['']);
    const rows = await q
      .orderBy('created_at', 'desc')
      .orderBy('reservation_id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      reservation_id: r.reservation_id,
      advertiser_id: r.advertiser_id,
      buyer_ref: r.buyer_ref,
      packages: (typeof r.packages === 'string' ? JSON.parse(r.packages) : r.packages) as BuyPackage[],
      created_at: iso(r.created_at)!,
    }));
  }

  /** The domains of sites, by id: what an AdCP product names as its publisher property. */
  async siteDomains(ids: number[]): Promise<Map<number, string>> {
    if (!ids.length) return new Map();
    const rows = await this.k.selectFrom('sites').select(['id', 'domain']).where('id', 'in', ids).execute();
    return new Map(rows.map((r) => [Number(r.id), r.domain]));
  }

  /**
   * What each line of a booked reservation delivered between two days (inclusive), from the ad
   * server's report rows: the statement's rule (CPM × impressions / 1000, a flat fee × the days it
   * ran in its month / the month's days), rounded to 2 decimals.
   */
  async delivery(reservationId: string, start: string, end: string): Promise<LineDelivery[]> {
    const rows = await this.db.query<Record<string, unknown>>(
      `WITH delivered AS (
         SELECT l.line_no, l.pricing, l.price,
                coalesce(sum(d.impressions), 0)::bigint AS impressions,
                coalesce(sum(d.clicks), 0)::bigint AS clicks,
                coalesce(max(d.day) FILTER (WHERE d.impressions > 0) - min(d.day) FILTER (WHERE d.impressions > 0) + 1, 0) AS days_ran,
                extract(day FROM (to_date(l.month, 'YYYY-MM') + interval '1 month' - interval '1 day'))::int AS days_in_month
           FROM market_reservation_lines l
           JOIN market_reservations r ON r.id = l.reservation_id
           LEFT JOIN adserver_booking_lines bl ON bl.booking_id = r.booking_id AND bl.line_no = l.line_no
           LEFT JOIN adserver_delivery d ON d.connection_id = r.connection_id AND d.line_item_id = bl.line_item_id
                AND d.day BETWEEN $2::date AND $3::date
          WHERE l.reservation_id = $1
          GROUP BY l.line_no, l.pricing, l.price, l.month)
       SELECT line_no, impressions, clicks,
              round(CASE WHEN pricing = 'cpm' THEN price * impressions / 1000
                         ELSE price * days_ran / days_in_month END, 2)::text AS spend
         FROM delivered ORDER BY line_no`,
      [reservationId, start, end],
    );
    return rows.map((r) => ({
      line_no: Number(r.line_no),
      impressions: Number(r.impressions),
      clicks: Number(r.clicks),
      spend: r.spend as string,
    }));
  }
}
