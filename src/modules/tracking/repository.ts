import { type ExpressionBuilder, type Insertable, type Selectable, sql, type Updateable } from 'kysely';
import { JsonParam, type Queryable } from '../../db/index.ts';
import { kysely, runNamed } from '../../db/kysely.ts';
import type { AffiliatePrograms, DB } from '../../db/schema.ts';
import { fieldsOf } from '../../lib/camel.ts';
import { containsPattern } from '../../lib/schema-parts.ts';
import type { ClickRow, ConversionInput, PostbackLogEntry, Program } from './types.ts';

/** A programme row as read: `param_map` is always an object of strings (the service writes it so). */
type ProgramDbRow = Omit<Selectable<AffiliatePrograms>, 'param_map'> & {
  param_map: Record<string, string>;
  tracker_ids: number[] | null;
};

/** One postback of a group-committed batch: its log row, and the conversion or the rejection. */
export interface PostbackJob {
  log: PostbackLogEntry;
  receivedAt: Date;
  /** Set for a replay: the logged postback processed again (no new log row; its outcome is marked). */
  logId?: number;
  /** Set when the postback is valid. */
  conversion?: ConversionInput;
  /** Set when it was refused: the answer's status, code, message and named field, recorded as its outcome. */
  rejected?: Rejection;
}

/** Why a postback was refused, as its answer said. */
export interface Rejection {
  status: number;
  code: string;
  message: string;
  /** The parameter the answer names (`details.field`), if any. */
  field: string | null;
}

/** What writing a postback with a conversion recorded: the conversion holding its transaction id. */
export interface PostbackWritten {
  conversionId: string;
  /** Another postback of the programme already holds the transaction id. */
  duplicate: boolean;
  attributed: boolean;
}

/** A programme as stored, with its token hash (never leaves the service). */
export interface StoredProgram extends Program {
  tokenHash: Buffer;
}

/** Programmes with their trackers' ids, in id order (null when they have none). */
const programs = (q: Queryable) =>
  kysely(q)
    .selectFrom('affiliate_programs as p')
    .selectAll('p')
    .select((eb) =>
      eb
        .selectFrom('program_trackers as pt')
        .select(sql<number[] | null>`array_agg(pt.tracker_id ORDER BY pt.tracker_id)`.as('ids'))
        .whereRef('pt.program_id', '=', 'p.id')
        .as('tracker_ids'),
    )
    .$castTo<ProgramDbRow>();

/** Column of each programme field a create or patch may set; rows are read back through it too. */
const PROGRAM_COLUMNS = {
  slug: 'slug',
  name: 'name',
  affiliateId: 'affiliate_id',
  landingParams: 'landing_params',
  paramMap: 'param_map',
  timezone: 'timezone',
  currency: 'currency',
} as const satisfies Record<string, keyof AffiliatePrograms>;

/** The columns of the fields given (the rest left as they are), values as the table takes them. */
function programColumns(fields: ProgramFields): Updateable<AffiliatePrograms> {
  const set: Record<string, unknown> = {};
  for (const [field, column] of Object.entries(PROGRAM_COLUMNS)) {
    const v = fields[field as keyof ProgramFields];
    if (v !== undefined) set[column] = field === 'paramMap' ? JSON.stringify(v) : v;
  }
  return set as Updateable<AffiliatePrograms>;
}

function toProgram(r: ProgramDbRow): StoredProgram {
  return {
    id: r.id,
    ...fieldsOf(r, PROGRAM_COLUMNS),
    trackerIds: r.tracker_ids ?? [],
    postbackTokenHint: r.postback_token_hint,
    createdAt: new Date(r.created_at).toISOString(),
    updatedAt: new Date(r.updated_at).toISOString(),
    tokenHash: Buffer.from(r.postback_token_hash),
  };
}

export type ProgramFields = Partial<Record<keyof typeof PROGRAM_COLUMNS, unknown>>;

/** The 15-minute bucket of a time column (UTC-aligned, as the rollups key it). */
export const BUCKET = (column: string) =>
  `date_bin('15 minutes', ${column}, timestamptz '2000-01-01 00:00:00+00')`;
// Rollup rows are upserted in key order, each table's as one sorted set, so concurrent batches
// lock them in the same order and never wait on each other crosswise.
export const ROLLUP_ORDER = 'ORDER BY 1, 2, 3, 4, 5, 6, 7, 8';

/** A bound integer as JSON text: the database reads a JSON number as `numeric` before the cast. */
const intText = (n: number | null) => (n == null ? null : String(n));

/**
 * A batch of clicks as one JSON array of rows, each the `clicks` columns in table order, read by
 * `clickRows`: one parameter costs both databases less to send and read than 16 column arrays.
 * Numbers go as JSON strings (the time as epoch milliseconds): PostgreSQL stores a JSON number as
 * `numeric` and each `::int` then turns it into text and parses that, where a string is parsed once;
 * a Date made JSON.stringify call its toJSON per row and the database parse ISO text.
 */
export function clickRowsParam(rows: readonly ClickRow[]): JsonParam {
  return new JsonParam(
    rows.map((r) => [
      r.id,
      r.kind,
      String(r.at.getTime()),
      String(r.linkId),
      intText(r.trackerId),
      intText(r.offerId),
      intText(r.brandId),
      intText(r.siteId),
      intText(r.toplistId),
      intText(r.position),
      intText(r.programId),
      r.subId,
      r.referrer,
      r.userAgent,
      r.country,
      r.flag,
    ]),
  );
}

/** The rows of a `clickRowsParam` bound as `$n`, as the `clicks` columns in table order. */
export const clickRows = (n: number) =>
  `SELECT e->>0, e->>1, timestamptz 'epoch' + (e->>2)::bigint * interval '1 millisecond', (e->>3)::int, (e->>4)::int, (e->>5)::int, (e->>6)::int,
          (e->>7)::int, (e->>8)::int, (e->>9)::int, (e->>10)::int, e->>11, e->>12, e->>13, e->>14, e->>15
   FROM jsonb_array_elements($${n}::jsonb) AS e`;

const QUARTER_MS = 15 * 60_000;

/**
 * The start, in epoch milliseconds, of the 15-minute bucket holding `ms`, as `BUCKET` cuts them:
 * its origin, 2000-01-01 UTC, is a whole number of buckets after the epoch.
 */
export const quarterStart = (ms: number) => Math.floor(ms / QUARTER_MS) * QUARTER_MS;

/**
 * The counted clicks of a batch (those without a flag) per rollup key, as `countedRows` reads them:
 * counted here rather than by a GROUP BY over the inserted rows, which would keep, sort and group
 * the RETURNING rows inside the database for every batch.
 */
export function clickCountsParam(rows: readonly ClickRow[]): JsonParam {
  const counts = new Map<string, { key: (string | null)[]; n: number }>();
  for (const r of rows) {
    if (r.flag != null) continue;
    const key = [
      String(quarterStart(r.at.getTime())),
      r.kind,
      intText(r.siteId),
      intText(r.toplistId),
      intText(r.position),
      intText(r.brandId),
      intText(r.programId),
      String(r.linkId),
    ];
    // A null joins as '', which no number or kind is: null and 0 stay apart, as in the rollup key.
    const name = key.join('|');
    const known = counts.get(name);
    if (known) known.n += 1;
    else counts.set(name, { key, n: 1 });
  }
  return new JsonParam([...counts.values()].map((c) => [...c.key, String(c.n)]));
}

/** The counts of a `clickCountsParam` bound as `$n`, as the rollup key columns and `n`. */
const countedRows = (n: number) =>
  `SELECT timestamptz 'epoch' + (g->>0)::bigint * interval '1 millisecond' AS bucket, g->>1 AS kind,
          (g->>2)::int AS site_id, (g->>3)::int AS toplist_id, (g->>4)::int AS position, (g->>5)::int AS brand_id,
          (g->>6)::int AS program_id, (g->>7)::int AS link_id, (g->>8)::bigint AS n
   FROM jsonb_array_elements($${n}::jsonb) AS g`;

/** The click batch statement. */
const INSERT_CLICKS = `WITH ins AS (
         INSERT INTO clicks (id, kind, at, link_id, tracker_id, offer_id, brand_id, site_id, toplist_id, position,
                             program_id, sub_id, referrer, user_agent, country, flag)
         ${clickRows(1)}
       ), counted AS (
         ${countedRows(3)}
       ), deltas AS (
         INSERT INTO click_rollup_deltas (bucket, kind, site_id, toplist_id, position, brand_id, program_id, link_id, n)
         SELECT * FROM counted
       )
       INSERT INTO click_daily_rollups (zone, day, kind, site_id, toplist_id, position, brand_id, program_id, n, lane)
       SELECT z.zone, (c.bucket AT TIME ZONE z.zone)::date, kind, site_id, toplist_id, position, brand_id,
              program_id, sum(n), $2::smallint
       FROM counted c JOIN rollup_zones z ON c.bucket < z.clicks_folded_to
       GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
       ${ROLLUP_ORDER}
       ON CONFLICT ON CONSTRAINT click_daily_rollups_key DO UPDATE SET n = click_daily_rollups.n + EXCLUDED.n`;

/** Tracking SQL of programmes, clicks and postbacks (stats read through `StatsRepository`). */
export class TrackingRepository {
  constructor(private readonly db: Queryable) {}

  with(q: Queryable): TrackingRepository {
    return new TrackingRepository(q);
  }

  /* Programmes */

  /** Inserts a programme; `fields` must hold its required ones (the service checked them). */
  async insertProgram(fields: ProgramFields, tokenHash: Buffer, tokenHint: string): Promise<number> {
    const row = await kysely(this.db)
      .insertInto('affiliate_programs')
      .values({
        ...(programColumns(fields) as Insertable<AffiliatePrograms>),
        postback_token_hash: tokenHash,
        postback_token_hint: tokenHint,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  async updateProgram(id: number, fields: ProgramFields): Promise<boolean> {
    const row = await kysely(this.db)
      .updateTable('affiliate_programs')
      .set({ ...programColumns(fields), updated_at: sql`now()` })
      .where('id', '=', id)
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  async setProgramToken(id: number, tokenHash: Buffer, tokenHint: string): Promise<boolean> {
    const row = await kysely(this.db)
      .updateTable('affiliate_programs')
      .set({ postback_token_hash: tokenHash, postback_token_hint: tokenHint, updated_at: sql`now()` })
      .where('id', '=', id)
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Makes `trackerIds` exactly the programme's trackers (taking them from any other programme). */
  async setProgramTrackers(id: number, trackerIds: readonly number[]): Promise<void> {
    const db = kysely(this.db);
    await db
      .deleteFrom('program_trackers')
      .where('program_id', '=', id)
      .where(sql<boolean>`NOT tracker_id = ANY(${trackerIds}::int[])`)
      .execute();
    if (!trackerIds.length) return;
    await db
      .insertInto('program_trackers')
      .values(trackerIds.map((tracker_id) => ({ tracker_id, program_id: id })))
      .onConflict((c) => c.column('tracker_id').doUpdateSet({ program_id: id }))
      .execute();
  }

  async getProgram(id: number): Promise<StoredProgram | undefined> {
    const r = await programs(this.db).where('p.id', '=', id).executeTakeFirst();
    return r && toProgram(r);
  }

  async getProgramBySlug(slug: string): Promise<StoredProgram | undefined> {
    const r = await programs(this.db).where('p.slug', '=', slug).executeTakeFirst();
    return r && toProgram(r);
  }

  /** A page of programmes by id; `search` matches part of the name or slug, case-insensitively. */
  async listPrograms(
    limit: number,
    offset: number,
    search?: string,
  ): Promise<{ rows: StoredProgram[]; total: number }> {
    const like = search === undefined ? undefined : containsPattern(search);
    const matching = (eb: ExpressionBuilder<DB & { p: AffiliatePrograms }, 'p'>) =>
      like === undefined ? eb.lit(true) : eb.or([eb('p.name', 'ilike', like), eb('p.slug', 'ilike', like)]);
    const rows = await programs(this.db)
      .where(matching)
      .orderBy('p.id')
      .limit(limit)
      .offset(offset)
      .execute();
    const c = await kysely(this.db)
      .selectFrom('affiliate_programs as p')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where(matching)
      .executeTakeFirst();
    return { rows: rows.map(toProgram), total: Number(c?.n ?? 0) };
  }

  /** The programme a tracker's traffic belongs to, if any. */
  async programOfTracker(trackerId: number): Promise<StoredProgram | undefined> {
    const query = programs(this.db)
      .innerJoin('program_trackers as pt', 'pt.program_id', 'p.id')
      .where('pt.tracker_id', '=', trackerId);
    const [r] = await runNamed(this.db, query, 'program_of_tracker');
    return r && toProgram(r);
  }

  /** A generated key by name, created with `fresh` on first use (the first writer wins). */
  async ensureKey(name: string, fresh: Buffer): Promise<Buffer> {
    const db = kysely(this.db);
    await db
      .insertInto('tracking_keys')
      .values({ name, value: fresh })
      .onConflict((c) => c.column('name').doNothing())
      .execute();
    const r = await db
      .selectFrom('tracking_keys')
      .select('value')
      .where('name', '=', name)
      .executeTakeFirstOrThrow();
    return Buffer.from(r.value);
  }

  /* Clicks and impressions */

  /**
   * One statement for a whole group-commit batch: the rows, and their counted ones (per key:
   * `clickCountsParam`) appended to the 15-minute rollups' deltas (migration 0085; read through
   * the click_rollups view at once, moved into the rollup rows by `ClickDeltaRepository.move`), so reports
   * never see a batch half-counted. Rows older than a zone's folded instant (late clicks;
   * migration 0084) are added to that zone's daily rollups too, to `lane`'s row of each key (one
   * lane per batch in flight, migration 0083); the others reach them when the rollup-zones job
   * folds their quarter hour. Returns how many deltas it appended.
   */
  async insertClicks(rows: readonly ClickRow[], lane = 0): Promise<number> {
    const counts = clickCountsParam(rows);
    await this.db.query(INSERT_CLICKS, [clickRowsParam(rows), lane, counts], 'insert_clicks');
    return (counts.value as unknown[]).length;
  }

  /* Postbacks */

  /**
   * Writes a batch of postbacks in one statement (atomic on its own: one round trip per batch):
   * their log rows, the conversions of the accepted ones (one per programme and transaction id;
   * a repeat, in this batch or an earlier one, gets the holder's id and attribution), their
   * 15-minute rollups and the daily rollups of every maintained zone, and every outcome. Returns, for
   * each job in order, its conversion's outcome, or null for a job without a conversion (refused).
   *
   * The key table decides which postback holds each transaction id. Keys are taken in key order,
   * so two batches never wait on each other crosswise; the earliest of equal keys in a batch is
   * the one inserted. `DO UPDATE` (a no-op) rather than `DO NOTHING`: it locks and returns a key
   * another transaction committed while this statement waited on it, which this statement's
   * snapshot would not show. Log ids follow the insert order (one sequence, rows inserted by
   * `ord`), which is how each job finds its own.
   *
   * Planned on every run, not prepared by name like the click batch: the generic plan a prepared
   * statement settles on after five runs is several times slower for this statement's shape.
   */
  async writePostbacks(jobs: readonly PostbackJob[]): Promise<(PostbackWritten | null)[]> {
    const rows = await this.db.query<{
      log_id: string | number;
      conversion_id: string | null;
      created: boolean | null;
      attributed: boolean | null;
    }>(
      `WITH j AS (
         SELECT r.*, e.ord
         FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS e(doc, ord),
              jsonb_to_record(e.doc) AS r(program text, method text, content_type text, query jsonb, body text,
                                          remote_ip text, received_at timestamptz, log_id bigint, rej_status int,
                                          rej_code text, rej_message text, rej_field text, conversion_id text, program_id int, transaction_id text,
                                          event text, amount numeric, currency text, player_ref text,
                                          click_id text)
       ), logs AS (
         INSERT INTO postback_log (program, method, content_type, query, body, remote_ip, received_at)
         SELECT program, method, content_type, query, body, remote_ip, received_at
         FROM j WHERE log_id IS NULL ORDER BY ord
         RETURNING id
       ), log_ids AS (
         SELECT j.ord, coalesce(j.log_id, l.id) AS log_id
         FROM (SELECT ord, log_id, CASE WHEN log_id IS NULL THEN row_number() OVER (PARTITION BY log_id IS NULL ORDER BY ord) END AS rn
               FROM j) j
         LEFT JOIN (SELECT id, row_number() OVER (ORDER BY id) AS rn FROM logs) l ON l.rn = j.rn
       ), clk AS (
         SELECT id, tracker_id, offer_id, brand_id, site_id, toplist_id, position, program_id
         FROM clicks WHERE id IN (SELECT click_id FROM j WHERE click_id IS NOT NULL) AND kind = 'click'
       ), acc AS (
         -- A click of another programme's tracker is not this programme's conversion.
         SELECT j.*, c.id IS NOT NULL AS attributed, c.tracker_id, c.offer_id, c.brand_id, c.site_id, c.toplist_id,
                c.position
         FROM j LEFT JOIN clk c ON c.id = j.click_id AND (c.program_id IS NULL OR c.program_id = j.program_id)
         WHERE j.conversion_id IS NOT NULL
       ), firsts AS (
         SELECT DISTINCT ON (program_id, transaction_id) * FROM acc ORDER BY program_id, transaction_id, ord
       ), keys AS (
         INSERT INTO conversion_keys (program_id, transaction_id, conversion_id, attributed, received_at)
         SELECT program_id, transaction_id, conversion_id, attributed, received_at
         FROM firsts ORDER BY program_id, transaction_id
         ON CONFLICT (program_id, transaction_id) DO UPDATE SET attributed = conversion_keys.attributed
         RETURNING program_id, transaction_id, conversion_id, attributed
       ), ins AS (
         INSERT INTO conversions (id, program_id, transaction_id, event, amount, currency, player_ref, click_id,
                                  attributed, tracker_id, offer_id, brand_id, site_id, toplist_id, position, log_id,
                                  received_at)
         SELECT f.conversion_id, f.program_id, f.transaction_id, f.event, f.amount, f.currency, f.player_ref,
                f.click_id, f.attributed, f.tracker_id, f.offer_id, f.brand_id, f.site_id, f.toplist_id, f.position,
                l.log_id, f.received_at
         FROM firsts f JOIN keys k ON k.conversion_id = f.conversion_id JOIN log_ids l ON l.ord = f.ord
         RETURNING received_at, event, currency, site_id, toplist_id, position, brand_id, program_id, amount
       ), counted AS (
         SELECT ${BUCKET('received_at')} AS bucket, event, currency, site_id, toplist_id, position, brand_id,
                program_id, count(*) AS n, coalesce(sum(amount), 0) AS amount
         FROM ins GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
       ), quarters AS (
         INSERT INTO conversion_rollups (bucket, event, currency, site_id, toplist_id, position, brand_id,
                                         program_id, n, amount)
         SELECT * FROM counted
         ${ROLLUP_ORDER}
         ON CONFLICT ON CONSTRAINT conversion_rollups_key
         DO UPDATE SET n = conversion_rollups.n + EXCLUDED.n, amount = conversion_rollups.amount + EXCLUDED.amount
       ), dailies AS (
         INSERT INTO conversion_daily_rollups (zone, day, event, currency, site_id, toplist_id, position, brand_id,
                                               program_id, n, amount)
         SELECT z.zone, (c.bucket AT TIME ZONE z.zone)::date, event, currency, site_id, toplist_id, position,
                brand_id, program_id, sum(n), sum(amount)
         FROM counted c CROSS JOIN rollup_zones z
         GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
         ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9
         ON CONFLICT ON CONSTRAINT conversion_daily_rollups_key
         DO UPDATE SET n = conversion_daily_rollups.n + EXCLUDED.n,
                       amount = conversion_daily_rollups.amount + EXCLUDED.amount
       ), decided AS (
         SELECT j.ord, l.log_id, j.rej_status, j.rej_code, j.rej_message, j.rej_field,
                j.log_id IS NOT NULL AS replay, k.conversion_id,
                k.conversion_id = j.conversion_id AS created, k.attributed
         FROM j JOIN log_ids l ON l.ord = j.ord
         LEFT JOIN keys k ON k.program_id = j.program_id AND k.transaction_id = j.transaction_id
       ), outcomes AS (
         INSERT INTO postback_outcomes (log_id, status, code, conversion_id, duplicate, replay, message, field)
         SELECT log_id, coalesce(rej_status, 200),
                coalesce(rej_code, CASE WHEN created THEN 'accepted' ELSE 'duplicate' END), conversion_id,
                coalesce(NOT created, false), replay, rej_message, rej_field
         FROM decided ORDER BY ord
       )
       SELECT log_id, conversion_id, created, attributed FROM decided ORDER BY ord`,
      [
        new JsonParam(
          jobs.map((j) => ({
            program: j.log.program,
            method: j.log.method,
            content_type: j.log.contentType,
            query: j.log.query,
            body: j.log.body,
            remote_ip: j.log.remoteIp,
            received_at: j.receivedAt.toISOString(),
            log_id: j.logId ?? null,
            rej_status: j.rejected?.status ?? null,
            rej_code: j.rejected?.code ?? null,
            rej_message: j.rejected?.message ?? null,
            rej_field: j.rejected?.field ?? null,
            conversion_id: j.conversion?.id ?? null,
            program_id: j.conversion?.programId ?? null,
            transaction_id: j.conversion?.transactionId ?? null,
            event: j.conversion?.event ?? null,
            amount: j.conversion?.amount ?? null,
            currency: j.conversion?.currency ?? null,
            player_ref: j.conversion?.playerRef ?? null,
            click_id: j.conversion?.clickId ?? null,
          })),
        ),
      ],
    );
    return jobs.map((job, i) => {
      const r = rows[i];
      if (!job.conversion) return null;
      if (!r || r.conversion_id === null) throw new Error('conversion neither inserted nor found');
      return { conversionId: r.conversion_id, duplicate: !r.created, attributed: r.attributed === true };
    });
  }

  /** Counted clicks and impressions per link code (toplist slug or banner code) and day (in `timezone`). */
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
       FROM click_rollups c
       JOIN (SELECT id, slug FROM tracking_links WHERE slug = ANY($1::text[])
             UNION ALL SELECT id, code FROM banner_links WHERE code = ANY($1::text[])) l ON l.id = c.link_id
       WHERE c.bucket >= ($2::date)::timestamp AT TIME ZONE $4 AND c.bucket < ($3::date + 1)::timestamp AT TIME ZONE $4
       GROUP BY 1, 2 ORDER BY 1, 2`,
      [slugs, from, to, timezone],
    );
  }
}
