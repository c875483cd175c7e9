import type { Queryable } from '../../db/index.ts';
import type {
  ClickAttribution,
  ClickRow,
  ConversionInput,
  PostbackLogEntry,
  Program,
  StatsFilter,
  StatsRow,
} from './types.ts';

interface ProgramDbRow {
  id: number;
  slug: string;
  name: string;
  affiliate_id: string;
  landing_params: string;
  param_map: Record<string, string>;
  postback_token_hash: Uint8Array;
  postback_token_hint: string;
  timezone: string;
  currency: string;
  tracker_ids: number[] | null;
  created_at: Date;
  updated_at: Date;
}

/** A programme as stored, with its token hash (never leaves the service). */
export interface StoredProgram extends Program {
  tokenHash: Buffer;
}

const PROGRAM_SELECT = `SELECT p.*, (SELECT array_agg(tracker_id ORDER BY tracker_id) FROM program_trackers pt
                          WHERE pt.program_id = p.id) AS tracker_ids
                        FROM affiliate_programs p`;

function toProgram(r: ProgramDbRow): StoredProgram {
  return {
    id: r.id,
    slug: r.slug,
    name: r.name,
    affiliateId: r.affiliate_id,
    landingParams: r.landing_params,
    paramMap: r.param_map,
    timezone: r.timezone,
    currency: r.currency,
    trackerIds: r.tracker_ids ?? [],
    postbackTokenHint: r.postback_token_hint,
    createdAt: new Date(r.created_at).toISOString(),
    updatedAt: new Date(r.updated_at).toISOString(),
    tokenHash: Buffer.from(r.postback_token_hash),
  };
}

/** Column name of each programme field a create or patch may set. */
const PROGRAM_COLUMNS = {
  slug: 'slug',
  name: 'name',
  affiliateId: 'affiliate_id',
  landingParams: 'landing_params',
  paramMap: 'param_map',
  timezone: 'timezone',
  currency: 'currency',
} as const;

export type ProgramFields = Partial<Record<keyof typeof PROGRAM_COLUMNS, unknown>>;

/** The only place with tracking SQL. */
export class TrackingRepository {
  constructor(private readonly db: Queryable) {}

  with(q: Queryable): TrackingRepository {
    return new TrackingRepository(q);
  }

  /* Programmes */

  async insertProgram(fields: ProgramFields, tokenHash: Buffer, tokenHint: string): Promise<number> {
    const cols = ['postback_token_hash', 'postback_token_hint'];
    const params: unknown[] = [tokenHash, tokenHint];
    for (const [field, column] of Object.entries(PROGRAM_COLUMNS)) {
      const v = fields[field as keyof ProgramFields];
      if (v === undefined) continue;
      cols.push(column);
      params.push(field === 'paramMap' ? JSON.stringify(v) : v);
    }
    const [r] = await this.db.query<{ id: number }>(
      `INSERT INTO affiliate_programs (${cols.join(', ')}) VALUES (${params.map((_, i) => `$${i + 1}`).join(', ')})
       RETURNING id`,
      params,
    );
    return (r as { id: number }).id;
  }

  async updateProgram(id: number, fields: ProgramFields): Promise<boolean> {
    const sets = ['updated_at = now()'];
    const params: unknown[] = [id];
    for (const [field, column] of Object.entries(PROGRAM_COLUMNS)) {
      const v = fields[field as keyof ProgramFields];
      if (v === undefined) continue;
      params.push(field === 'paramMap' ? JSON.stringify(v) : v);
      sets.push(`${column} = $${params.length}`);
    }
    const rows = await this.db.query(
      `UPDATE affiliate_programs SET ${sets.join(', ')} WHERE id = $1 RETURNING id`,
      params,
    );
    return rows.length > 0;
  }

  async setProgramToken(id: number, tokenHash: Buffer, tokenHint: string): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE affiliate_programs SET postback_token_hash = $2, postback_token_hint = $3, updated_at = now()
       WHERE id = $1 RETURNING id`,
      [id, tokenHash, tokenHint],
    );
    return rows.length > 0;
  }

  /** Makes `trackerIds` exactly the programme's trackers (taking them from any other programme). */
  async setProgramTrackers(id: number, trackerIds: readonly number[]): Promise<void> {
    await this.db.query(
      'DELETE FROM program_trackers WHERE program_id = $1 AND NOT tracker_id = ANY($2::int[])',
      [id, trackerIds],
    );
    await this.db.query(
      `INSERT INTO program_trackers (tracker_id, program_id) SELECT unnest($2::int[]), $1
       ON CONFLICT (tracker_id) DO UPDATE SET program_id = EXCLUDED.program_id`,
      [id, trackerIds],
    );
  }

  async getProgram(id: number): Promise<StoredProgram | undefined> {
    const [r] = await this.db.query<ProgramDbRow>(`${PROGRAM_SELECT} WHERE p.id = $1`, [id]);
    return r && toProgram(r);
  }

  async getProgramBySlug(slug: string): Promise<StoredProgram | undefined> {
    const [r] = await this.db.query<ProgramDbRow>(`${PROGRAM_SELECT} WHERE p.slug = $1`, [slug]);
    return r && toProgram(r);
  }

  async listPrograms(limit: number, offset: number): Promise<{ rows: StoredProgram[]; total: number }> {
    const rows = await this.db.query<ProgramDbRow>(`${PROGRAM_SELECT} ORDER BY p.id LIMIT $1 OFFSET $2`, [
      limit,
      offset,
    ]);
    const [c] = await this.db.query<{ n: number }>('SELECT count(*)::int AS n FROM affiliate_programs');
    return { rows: rows.map(toProgram), total: c?.n ?? 0 };
  }

  /** The programme a tracker's traffic belongs to, if any. */
  async programOfTracker(trackerId: number): Promise<StoredProgram | undefined> {
    const [r] = await this.db.query<ProgramDbRow>(
      `${PROGRAM_SELECT} JOIN program_trackers pt ON pt.program_id = p.id WHERE pt.tracker_id = $1`,
      [trackerId],
    );
    return r && toProgram(r);
  }

  /** A generated key by name, created with `fresh` on first use (the first writer wins). */
  async ensureKey(name: string, fresh: Buffer): Promise<Buffer> {
    await this.db.query(
      'INSERT INTO tracking_keys (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING',
      [name, fresh],
    );
    const [r] = await this.db.query<{ value: Uint8Array }>(
      'SELECT value FROM tracking_keys WHERE name = $1',
      [name],
    );
    return Buffer.from((r as { value: Uint8Array }).value);
  }

  /* Clicks and impressions */

  /** One multi-row INSERT for a whole group-commit batch. */
  async insertClicks(rows: readonly ClickRow[]): Promise<void> {
    const col = <K extends keyof ClickRow>(k: K) => rows.map((r) => r[k]);
    await this.db.query(
      `INSERT INTO clicks (id, kind, at, link_id, tracker_id, offer_id, brand_id, site_id, toplist_id, position,
                           program_id, sub_id, referrer, user_agent, country, flag)
       SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::int[], $5::int[], $6::int[], $7::int[],
                            $8::int[], $9::int[], $10::int[], $11::int[], $12::text[], $13::text[], $14::text[],
                            $15::text[], $16::text[])`,
      [
        col('id'),
        col('kind'),
        rows.map((r) => r.at.toISOString()),
        col('linkId'),
        col('trackerId'),
        col('offerId'),
        col('brandId'),
        col('siteId'),
        col('toplistId'),
        col('position'),
        col('programId'),
        col('subId'),
        col('referrer'),
        col('userAgent'),
        col('country'),
        col('flag'),
      ],
    );
  }

  /** What a click (not an impression) attributes a conversion to. */
  async getClick(id: string): Promise<ClickAttribution | undefined> {
    const [r] = await this.db.query<ClickAttribution>(
      `SELECT tracker_id AS "trackerId", offer_id AS "offerId", brand_id AS "brandId", site_id AS "siteId",
              toplist_id AS "toplistId", position, program_id AS "programId"
       FROM clicks WHERE id = $1 AND kind = 'click'`,
      [id],
    );
    return r;
  }

  /* Postbacks */

  async appendPostbackLog(e: PostbackLogEntry): Promise<number> {
    const [r] = await this.db.query<{ id: number }>(
      `INSERT INTO postback_log (program, method, content_type, query, body, remote_ip)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [e.program, e.method, e.contentType, JSON.stringify(e.query), e.body, e.remoteIp],
    );
    return (r as { id: number }).id;
  }

  async appendPostbackOutcome(
    logId: number,
    o: { status: number; code: string; conversionId?: string; duplicate?: boolean },
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO postback_outcomes (log_id, status, code, conversion_id, duplicate) VALUES ($1, $2, $3, $4, $5)`,
      [logId, o.status, o.code, o.conversionId ?? null, o.duplicate ?? false],
    );
  }

  /**
   * Inserts a conversion unless the programme already has one with this transaction id;
   * returns the id of the conversion that holds the transaction and whether it is new.
   */
  async insertConversion(c: ConversionInput): Promise<{ id: string; created: boolean }> {
    const [r] = await this.db.query<{ id: string }>(
      `INSERT INTO conversions (id, program_id, transaction_id, event, amount, currency, player_ref, click_id,
                                attributed, tracker_id, offer_id, brand_id, site_id, toplist_id, position, log_id)
       VALUES ($1, $2, $3, $4, $5::numeric, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
       ON CONFLICT (program_id, transaction_id) DO NOTHING RETURNING id`,
      [
        c.id,
        c.programId,
        c.transactionId,
        c.event,
        c.amount,
        c.currency,
        c.playerRef,
        c.clickId,
        c.click !== undefined,
        c.click?.trackerId ?? null,
        c.click?.offerId ?? null,
        c.click?.brandId ?? null,
        c.click?.siteId ?? null,
        c.click?.toplistId ?? null,
        c.click?.position ?? null,
        c.logId,
      ],
    );
    if (r) return { id: r.id, created: true };
    const [existing] = await this.db.query<{ id: string }>(
      'SELECT id FROM conversions WHERE program_id = $1 AND transaction_id = $2',
      [c.programId, c.transactionId],
    );
    return { id: (existing as { id: string }).id, created: false };
  }

  /* Stats */

  /** Counted clicks, impressions and conversions per day (in `timezone`) and dimension. */
  async stats(f: StatsFilter): Promise<StatsRow[]> {
    return this.db.query<StatsRow>(
      `WITH bounds AS (
         SELECT ($1::date)::timestamp AT TIME ZONE $3 AS lo, ($2::date + 1)::timestamp AT TIME ZONE $3 AS hi
       ), hits AS (
         SELECT (c.at AT TIME ZONE $3)::date AS day, site_id, toplist_id, position, brand_id, program_id,
                count(*) FILTER (WHERE kind = 'click') AS clicks,
                count(*) FILTER (WHERE kind = 'impression') AS impressions,
                0 AS registrations, 0 AS ftds, 0 AS conversions
         FROM clicks c, bounds b
         WHERE c.at >= b.lo AND c.at < b.hi AND c.flag IS NULL
           AND ($4::int IS NULL OR program_id = $4) AND ($5::int IS NULL OR site_id = $5)
         GROUP BY 1, 2, 3, 4, 5, 6
         UNION ALL
         SELECT (v.received_at AT TIME ZONE $3)::date, site_id, toplist_id, position, brand_id, program_id, 0, 0,
                count(*) FILTER (WHERE event = 'registration'), count(*) FILTER (WHERE event = 'ftd'), count(*)
         FROM conversions v, bounds b
         WHERE v.received_at >= b.lo AND v.received_at < b.hi
           AND ($4::int IS NULL OR program_id = $4) AND ($5::int IS NULL OR site_id = $5)
         GROUP BY 1, 2, 3, 4, 5, 6
       )
       SELECT to_char(day, 'YYYY-MM-DD') AS day, site_id AS "siteId", toplist_id AS "toplistId", position,
              brand_id AS "brandId", program_id AS "programId",
              sum(clicks)::int AS clicks, sum(impressions)::int AS impressions,
              sum(registrations)::int AS registrations, sum(ftds)::int AS ftds, sum(conversions)::int AS conversions
       FROM hits GROUP BY 1, 2, 3, 4, 5, 6
       ORDER BY 1, 2 NULLS FIRST, 3 NULLS FIRST, 4 NULLS FIRST, 5 NULLS FIRST, 6 NULLS FIRST
       LIMIT $6`,
      [f.from, f.to, f.timezone, f.programId ?? null, f.siteId ?? null, f.limit],
    );
  }

  /** Counted clicks and impressions per tracking-link slug and day (in `timezone`), for the given slugs. */
  async countsBySlug(
    slugs: readonly string[],
    from: string,
    to: string,
    timezone: string,
  ): Promise<{ slug: string; day: string; clicks: number; impressions: number }[]> {
    return this.db.query(
      `SELECT l.slug, to_char((c.at AT TIME ZONE $4)::date, 'YYYY-MM-DD') AS day,
              count(*) FILTER (WHERE c.kind = 'click')::int AS clicks,
              count(*) FILTER (WHERE c.kind = 'impression')::int AS impressions
       FROM clicks c JOIN tracking_links l ON l.id = c.link_id
       WHERE l.slug = ANY($1::text[]) AND c.flag IS NULL
         AND c.at >= ($2::date)::timestamp AT TIME ZONE $4 AND c.at < ($3::date + 1)::timestamp AT TIME ZONE $4
       GROUP BY 1, 2 ORDER BY 1, 2`,
      [slugs, from, to, timezone],
    );
  }
}
