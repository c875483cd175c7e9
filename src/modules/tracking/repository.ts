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

/** One postback of a group-committed batch: its log row, and the conversion or the rejection. */
export interface PostbackJob {
  log: PostbackLogEntry;
  receivedAt: Date;
  /** Set when the postback is valid. */
  conversion?: ConversionInput;
  /** Set when it was refused: the answer's status and code, recorded as its outcome. */
  rejected?: { status: number; code: string };
  /** Filled by the write: the conversion holding the transaction id. */
  written?: { conversionId: string; duplicate: boolean; attributed: boolean };
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

/** The 15-minute bucket of a time column (UTC-aligned, as the rollups key it). */
export const BUCKET = (column: string) =>
  `date_bin('15 minutes', ${column}, timestamptz '2000-01-01 00:00:00+00')`;
// Rollup rows are upserted in key order so concurrent batches lock them in the same order.
const ROLLUP_ORDER = 'ORDER BY 1, 2, 3, 4, 5, 6, 7, 8';

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

  /**
   * One statement for a whole group-commit batch: the rows, and their counted ones added to the
   * 15-minute rollups, so reports never see a batch half-counted.
   */
  async insertClicks(rows: readonly ClickRow[]): Promise<void> {
    const col = <K extends keyof ClickRow>(k: K) => rows.map((r) => r[k]);
    await this.db.query(
      `WITH ins AS (
         INSERT INTO clicks (id, kind, at, link_id, tracker_id, offer_id, brand_id, site_id, toplist_id, position,
                             program_id, sub_id, referrer, user_agent, country, flag)
         SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::int[], $5::int[], $6::int[], $7::int[],
                              $8::int[], $9::int[], $10::int[], $11::int[], $12::text[], $13::text[], $14::text[],
                              $15::text[], $16::text[])
         RETURNING kind, at, site_id, toplist_id, position, brand_id, program_id, link_id, flag
       )
       INSERT INTO click_rollups (bucket, kind, site_id, toplist_id, position, brand_id, program_id, link_id, n)
       SELECT ${BUCKET('at')}, kind, site_id, toplist_id, position, brand_id, program_id, link_id, count(*)
       FROM ins WHERE flag IS NULL
       GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
       ${ROLLUP_ORDER}
       ON CONFLICT ON CONSTRAINT click_rollups_key DO UPDATE SET n = click_rollups.n + EXCLUDED.n`,
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

  /* Postbacks */

  /**
   * Writes a batch of postbacks in one transaction: their log rows, the conversions of the
   * accepted ones (one per programme and transaction id; a repeat, in this batch or an earlier
   * one, gets the holder's id), and every outcome. Fills each job's `written`. Run it on a
   * transaction (`with(tx)`).
   */
  async writePostbacks(jobs: PostbackJob[]): Promise<void> {
    const q = this.db;
    const logIds = await this.insertLogs(q, jobs);
    const accepted = jobs.flatMap((job, i) =>
      job.conversion ? [{ job, c: job.conversion, logId: logIds[i] as number }] : [],
    );
    const clicks = await this.clicksById(
      q,
      accepted.flatMap(({ c }) => (c.clickId ? [c.clickId] : [])),
    );
    const attributedTo = accepted.map(({ c }) => {
      const click = c.clickId ? clicks.get(c.clickId) : undefined;
      // A click of another programme's tracker is not this programme's conversion.
      return click && (click.programId === null || click.programId === c.programId) ? click : undefined;
    });
    const col = <T>(f: (a: (typeof accepted)[number], i: number) => T) => accepted.map(f);
    // The key table decides which postback holds each transaction id (a repeat in this batch or
    // a concurrent one waits on the first writer's key and then finds it taken). Keys are taken
    // in key order so two batches never wait on each other crosswise; the earlier of two equal
    // keys in a batch wins.
    const keyed = await q.query<{ conversion_id: string }>(
      `INSERT INTO conversion_keys (program_id, transaction_id, conversion_id, attributed, received_at)
       SELECT program_id, transaction_id, conversion_id, attributed, received_at
       FROM unnest($1::int[], $2::text[], $3::text[], $4::bool[], $5::timestamptz[]) WITH ORDINALITY
            AS k(program_id, transaction_id, conversion_id, attributed, received_at, ord)
       ORDER BY program_id, transaction_id, ord
       ON CONFLICT (program_id, transaction_id) DO NOTHING RETURNING conversion_id`,
      [
        col(({ c }) => c.programId),
        col(({ c }) => c.transactionId),
        col(({ c }) => c.id),
        col((_, i) => attributedTo[i] !== undefined),
        col(({ job }) => job.receivedAt.toISOString()),
      ],
    );
    const created = new Set(keyed.map((r) => r.conversion_id));
    const fresh = accepted.flatMap((a, i) => (created.has(a.c.id) ? [{ ...a, click: attributedTo[i] }] : []));
    const put = <T>(f: (a: (typeof fresh)[number]) => T) => fresh.map(f);
    if (fresh.length)
      await q.query(
        `WITH ins AS (
           INSERT INTO conversions (id, program_id, transaction_id, event, amount, currency, player_ref, click_id,
                                    attributed, tracker_id, offer_id, brand_id, site_id, toplist_id, position, log_id,
                                    received_at)
           SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::numeric[], $6::text[], $7::text[],
                                $8::text[], $9::bool[], $10::int[], $11::int[], $12::int[], $13::int[], $14::int[],
                                $15::int[], $16::bigint[], $17::timestamptz[])
           RETURNING received_at, event, currency, site_id, toplist_id, position, brand_id, program_id
         )
         INSERT INTO conversion_rollups (bucket, event, currency, site_id, toplist_id, position, brand_id,
                                         program_id, n)
         SELECT ${BUCKET('received_at')}, event, currency, site_id, toplist_id, position, brand_id, program_id,
                count(*)
         FROM ins GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
         ${ROLLUP_ORDER}
         ON CONFLICT ON CONSTRAINT conversion_rollups_key DO UPDATE SET n = conversion_rollups.n + EXCLUDED.n`,
        [
          put(({ c }) => c.id),
          put(({ c }) => c.programId),
          put(({ c }) => c.transactionId),
          put(({ c }) => c.event),
          put(({ c }) => c.amount),
          put(({ c }) => c.currency),
          put(({ c }) => c.playerRef),
          put(({ c }) => c.clickId),
          put(({ click }) => click !== undefined),
          put(({ click }) => click?.trackerId ?? null),
          put(({ click }) => click?.offerId ?? null),
          put(({ click }) => click?.brandId ?? null),
          put(({ click }) => click?.siteId ?? null),
          put(({ click }) => click?.toplistId ?? null),
          put(({ click }) => click?.position ?? null),
          put(({ logId }) => logId),
          put(({ job }) => job.receivedAt.toISOString()),
        ],
      );
    const holders = await this.conversionHolders(
      q,
      accepted.filter(({ c }) => !created.has(c.id)).map(({ c }) => c),
    );
    accepted.forEach(({ job, c }, i) => {
      if (created.has(c.id)) {
        job.written = { conversionId: c.id, duplicate: false, attributed: attributedTo[i] !== undefined };
        return;
      }
      const holder = holders.get(`${c.programId}\u0000${c.transactionId}`);
      if (!holder) throw new Error('conversion neither inserted nor found');
      job.written = { conversionId: holder.id, duplicate: true, attributed: holder.attributed };
    });
    await q.query(
      `INSERT INTO postback_outcomes (log_id, status, code, conversion_id, duplicate)
       SELECT * FROM unnest($1::bigint[], $2::int[], $3::text[], $4::text[], $5::bool[])`,
      [
        logIds,
        jobs.map((j) => j.rejected?.status ?? 200),
        jobs.map((j) => j.rejected?.code ?? (j.written?.duplicate ? 'duplicate' : 'accepted')),
        jobs.map((j) => j.written?.conversionId ?? null),
        jobs.map((j) => j.written?.duplicate ?? false),
      ],
    );
  }

  /** Inserts the log rows of a batch; ids in the jobs' order (one sequence, rows inserted in order). */
  private async insertLogs(q: Queryable, jobs: PostbackJob[]): Promise<number[]> {
    const rows = await q.query<{ id: string | number }>(
      `INSERT INTO postback_log (program, method, content_type, query, body, remote_ip, received_at)
       SELECT program, method, content_type, query, body, remote_ip, received_at
       FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::text[], $6::text[], $7::timestamptz[])
            WITH ORDINALITY AS t(program, method, content_type, query, body, remote_ip, received_at, ord)
       ORDER BY ord
       RETURNING id`,
      [
        jobs.map((j) => j.log.program),
        jobs.map((j) => j.log.method),
        jobs.map((j) => j.log.contentType),
        jobs.map((j) => JSON.stringify(j.log.query)),
        jobs.map((j) => j.log.body),
        jobs.map((j) => j.log.remoteIp),
        jobs.map((j) => j.receivedAt.toISOString()),
      ],
    );
    return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
  }

  /** What the given clicks (not impressions) attribute conversions to, by click id. */
  private async clicksById(q: Queryable, ids: string[]): Promise<Map<string, ClickAttribution>> {
    if (!ids.length) return new Map();
    const rows = await q.query<ClickAttribution & { id: string }>(
      `SELECT id, tracker_id AS "trackerId", offer_id AS "offerId", brand_id AS "brandId", site_id AS "siteId",
              toplist_id AS "toplistId", position, program_id AS "programId"
       FROM clicks WHERE id = ANY($1::text[]) AND kind = 'click'`,
      [ids],
    );
    return new Map(rows.map(({ id, ...click }) => [id, click]));
  }

  /** The conversions already holding these programmes' transaction ids, by "program\0transaction". */
  private async conversionHolders(
    q: Queryable,
    repeats: ConversionInput[],
  ): Promise<Map<string, { id: string; attributed: boolean }>> {
    if (!repeats.length) return new Map();
    const rows = await q.query<{
      id: string;
      program_id: number;
      transaction_id: string;
      attributed: boolean;
    }>(
      `SELECT v.conversion_id AS id, v.program_id, v.transaction_id, v.attributed
       FROM conversion_keys v JOIN unnest($1::int[], $2::text[]) AS k(program_id, transaction_id)
         ON v.program_id = k.program_id AND v.transaction_id = k.transaction_id`,
      [repeats.map((c) => c.programId), repeats.map((c) => c.transactionId)],
    );
    return new Map(
      rows.map((r) => [`${r.program_id}\u0000${r.transaction_id}`, { id: r.id, attributed: r.attributed }]),
    );
  }

  /* Stats */

  /**
   * Counted clicks, impressions and conversions (per event) per day and dimension. Each row's
   * day is cut in the zone `f.tz` names: its site's, its programme's (UTC when it has none)
   * or one fixed zone. Rows come pre-paged with the total number of rows.
   */
  async stats(f: StatsFilter): Promise<{ rows: StatsRow[]; total: number }> {
    const zone = (site: string, program: string) =>
      `CASE $3 WHEN 'site' THEN coalesce(${site}.timezone, 'UTC') WHEN 'program' THEN coalesce(${program}.timezone, 'UTC') ELSE $4 END`;
    const where = (t: string) =>
      `($5::int IS NULL OR ${t}.program_id = $5) AND ($6::int IS NULL OR ${t}.site_id = $6)
       AND ($7::int IS NULL OR ${t}.toplist_id = $7) AND ($8::int IS NULL OR ${t}.brand_id = $8)`;
    // Read from the 15-minute rollups. Days are cut per row, so the scan takes a day either side
    // (every zone is within ±14 h of UTC).
    const rows = await this.db.query<StatsRow & { total: number }>(
      `WITH facts AS (
         SELECT c.site_id, c.toplist_id, c.position, c.brand_id, c.program_id, c.kind, NULL::text AS event,
                ${zone('ts', 'p')} AS tz, c.bucket, c.n
         FROM click_rollups c
         LEFT JOIN tracking_sites ts ON ts.site_id = c.site_id
         LEFT JOIN affiliate_programs p ON p.id = c.program_id
         WHERE c.bucket >= ($1::date - 1)::timestamp AT TIME ZONE 'UTC'
           AND c.bucket < ($2::date + 2)::timestamp AT TIME ZONE 'UTC' AND ${where('c')}
         UNION ALL
         SELECT v.site_id, v.toplist_id, v.position, v.brand_id, v.program_id, 'conversion', v.event,
                ${zone('ts', 'p')}, v.bucket, v.n
         FROM conversion_rollups v
         LEFT JOIN tracking_sites ts ON ts.site_id = v.site_id
         LEFT JOIN affiliate_programs p ON p.id = v.program_id
         WHERE v.bucket >= ($1::date - 1)::timestamp AT TIME ZONE 'UTC'
           AND v.bucket < ($2::date + 2)::timestamp AT TIME ZONE 'UTC' AND ${where('v')}
       ), per_event AS (
         SELECT (bucket AT TIME ZONE tz)::date AS day, tz, site_id, toplist_id, position, brand_id, program_id, kind,
                event, sum(n)::int AS n
         FROM facts
         GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
       )
       SELECT to_char(day, 'YYYY-MM-DD') AS day, tz AS timezone, site_id AS "siteId", toplist_id AS "toplistId",
              position, brand_id AS "brandId", program_id AS "programId",
              coalesce(sum(n) FILTER (WHERE kind = 'click'), 0)::int AS clicks,
              coalesce(sum(n) FILTER (WHERE kind = 'impression'), 0)::int AS impressions,
              coalesce(jsonb_object_agg(event, n) FILTER (WHERE kind = 'conversion'), '{}'::jsonb) AS events,
              count(*) OVER ()::int AS total
       FROM per_event
       WHERE day BETWEEN $1::date AND $2::date
       GROUP BY day, tz, site_id, toplist_id, position, brand_id, program_id
       ORDER BY day, site_id NULLS FIRST, toplist_id NULLS FIRST, position NULLS FIRST, brand_id NULLS FIRST,
                program_id NULLS FIRST, tz
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
        f.limit,
        f.offset,
      ],
    );
    return {
      rows: rows.map(({ total: _, ...r }) => r),
      // A page past the end holds no row to carry the total, so ask for the first one.
      total: rows[0]?.total ?? (f.offset > 0 ? (await this.stats({ ...f, limit: 1, offset: 0 })).total : 0),
    };
  }

  /* Site time zones */

  async siteTimezone(siteId: number): Promise<string | undefined> {
    const [r] = await this.db.query<{ timezone: string }>(
      'SELECT timezone FROM tracking_sites WHERE site_id = $1',
      [siteId],
    );
    return r?.timezone;
  }

  async setSiteTimezone(siteId: number, timezone: string): Promise<void> {
    await this.db.query(
      `INSERT INTO tracking_sites (site_id, timezone) VALUES ($1, $2)
       ON CONFLICT (site_id) DO UPDATE SET timezone = EXCLUDED.timezone, updated_at = now()`,
      [siteId, timezone],
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
      `SELECT l.slug, to_char((c.bucket AT TIME ZONE $4)::date, 'YYYY-MM-DD') AS day,
              coalesce(sum(c.n) FILTER (WHERE c.kind = 'click'), 0)::int AS clicks,
              coalesce(sum(c.n) FILTER (WHERE c.kind = 'impression'), 0)::int AS impressions
       FROM click_rollups c JOIN tracking_links l ON l.id = c.link_id
       WHERE l.slug = ANY($1::text[])
         AND c.bucket >= ($2::date)::timestamp AT TIME ZONE $4 AND c.bucket < ($3::date + 1)::timestamp AT TIME ZONE $4
       GROUP BY 1, 2 ORDER BY 1, 2`,
      [slugs, from, to, timezone],
    );
  }
}
