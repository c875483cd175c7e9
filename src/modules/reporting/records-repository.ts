import type { Queryable } from '../../db/index.ts';
import { type Paged, type PageWindow, pagedRows } from '../../db/paged.ts';
import type { ConversionInput } from '../tracking/types.ts';

/** A conversion as the admin API lists it; `subId` comes from the attributed click. */
export type ConversionRecord = Omit<ConversionInput, 'playerRef'> & {
  attributed: boolean;
  subId: string | null;
  siteId: number | null;
  toplistId: number | null;
  position: number | null;
  brandId: number | null;
  offerId: number | null;
  trackerId: number | null;
  logId: string;
  receivedAt: string;
};

/** What both lists filter by first: a page of the rows received in [since, until), always bounded. */
interface ReceivedFilter extends PageWindow {
  since: Date;
  until: Date;
  programId?: number | undefined;
  transactionId?: string | undefined;
}

/** Filters of the conversions list. */
export interface ConversionFilter extends ReceivedFilter {
  event?: string | undefined;
  attributed?: boolean | undefined;
  clickId?: string | undefined;
  subId?: string | undefined;
  /** Only conversions of these sites (a person limited to some sites); unattributed ones have none. */
  siteIds?: readonly number[] | undefined;
}

/** One decision on a logged postback: the original one, or a replay's. */
export interface StoredOutcome {
  status: number;
  code: string;
  conversionId: string | null;
  duplicate: boolean;
  decidedAt: string;
  replay: boolean;
  /** A refusal's message as the operator was told it (null for an acceptance, or one logged before reasons were kept). */
  message: string | null;
  /** The parameter a refusal names, by the programme's name for it. */
  field: string | null;
}

/** A raw postback log row with its outcomes, oldest first. */
export interface StoredPostback {
  id: number;
  receivedAt: Date;
  program: string;
  programId: number | null;
  /** The programme's current parameter mapping (null without a programme of that slug). */
  paramMap: Record<string, string> | null;
  method: string;
  contentType: string | null;
  query: Record<string, unknown>;
  body: string | null;
  outcomes: StoredOutcome[];
}

/** Filters of the postback log. */
export interface PostbackFilter extends ReceivedFilter {
  /** Of the current (latest) outcome. */
  outcome?: 'accepted' | 'duplicate' | 'rejected' | undefined;
  code?: string | undefined;
  /** Words of the current outcome's reason (case-insensitive). */
  reason?: string | undefined;
}

/** $1 to $3 of both lists' queries: the received_at window and the programme, if any. */
const receivedParams = (f: ReceivedFilter) => [
  f.since.toISOString(),
  f.until.toISOString(),
  f.programId ?? null,
];

const iso = (d: Date | string) => new Date(d).toISOString();

// Clocks of processes and the database differ a little: a click is looked for up to a day after
// its conversion, an outcome from a day before its log row (bounds that prune partitions).
const SLACK = "interval '1 day'";

/**
 * SQL of the affiliate manager's lists: conversions (with the sub id of their click) and the raw
 * postback log with every outcome. Both tables are partitioned by time: every query is bounded
 * by a received_at window so only its months are read.
 */
export class RecordsRepository {
  constructor(private readonly db: Queryable) {}

  /** One page of conversions, newest first, with the number of matching rows. */
  async conversions(f: ConversionFilter): Promise<Paged<ConversionRecord>> {
    const page = await pagedRows<ConversionRecord>(f, (w) =>
      this.db.query<ConversionRecord & { total: number }>(
        `SELECT v.id, v.program_id AS "programId", v.transaction_id AS "transactionId", v.event,
              v.amount::text AS amount, v.currency, v.click_id AS "clickId", v.attributed, c.sub_id AS "subId",
              v.site_id AS "siteId", v.toplist_id AS "toplistId", v.position, v.brand_id AS "brandId",
              v.offer_id AS "offerId", v.tracker_id AS "trackerId", v.log_id::text AS "logId",
              v.received_at AS "receivedAt", count(*) OVER ()::int AS total
       FROM conversions v
       LEFT JOIN LATERAL (
         SELECT k.sub_id FROM clicks k
         WHERE k.id = v.click_id AND k.kind = 'click' AND k.at < v.received_at + ${SLACK}
         LIMIT 1
       ) c ON v.attributed
       WHERE v.received_at >= $1 AND v.received_at < $2
         AND ($3::int IS NULL OR v.program_id = $3) AND ($4::text IS NULL OR v.event = $4)
         AND ($5::bool IS NULL OR v.attributed = $5) AND ($6::text IS NULL OR v.click_id = $6)
         AND ($7::text IS NULL OR v.transaction_id = $7) AND ($8::text IS NULL OR c.sub_id = $8)
         AND ($11::int[] IS NULL OR v.site_id = ANY($11::int[]))
       ORDER BY v.received_at DESC, v.id DESC
       LIMIT $9 OFFSET $10`,
        [
          ...receivedParams(f),
          f.event ?? null,
          f.attributed ?? null,
          f.clickId ?? null,
          f.transactionId ?? null,
          f.subId ?? null,
          w.limit,
          w.offset,
          f.siteIds ? [...f.siteIds] : null,
        ],
      ),
    );
    return { ...page, rows: page.rows.map((r) => ({ ...r, receivedAt: iso(r.receivedAt) })) };
  }

  /** One page of the postback log, newest first, each row with its outcomes. */
  async postbacks(f: PostbackFilter): Promise<Paged<StoredPostback>> {
    const page = await pagedRows<StoredPostback>(f, (w) =>
      this.db.query<StoredPostback & { total: number }>(
        `SELECT l.id, l.received_at AS "receivedAt", l.program, p.id AS "programId", p.param_map AS "paramMap", l.method,
              l.content_type AS "contentType", l.query, l.body, o.outcomes, count(*) OVER ()::int AS total
       FROM postback_log l
       LEFT JOIN affiliate_programs p ON p.slug = l.program
       CROSS JOIN LATERAL (${OUTCOMES}) o
       WHERE l.received_at >= $1 AND l.received_at < $2
         AND ($3::int IS NULL OR l.program = (SELECT slug FROM affiliate_programs WHERE id = $3))
         AND CASE $4::text WHEN 'accepted' THEN o.last_status = 200 AND NOT o.last_duplicate
                           WHEN 'duplicate' THEN o.last_status = 200 AND o.last_duplicate
                           WHEN 'rejected' THEN o.last_status >= 400 ELSE true END
         AND ($5::text IS NULL OR o.last_code = $5)
         AND ($6::text IS NULL OR EXISTS (
               SELECT 1 FROM (VALUES ('transaction_id'), (p.param_map->>'transaction_id')) AS n(name)
               WHERE l.query->>n.name = $6 OR strpos(l.body, '"' || n.name || '":' || to_json($6::text)::text) > 0))
         AND ($7::text IS NULL OR strpos(lower(o.last_message), lower($7)) > 0)
       ORDER BY l.received_at DESC, l.id DESC
       LIMIT $8 OFFSET $9`,
        [
          ...receivedParams(f),
          f.outcome ?? null,
          f.code ?? null,
          f.transactionId ?? null,
          f.reason ?? null,
          w.limit,
          w.offset,
        ],
      ),
    );
    return { ...page, rows: page.rows.map(postbackRow) };
  }

  /** One logged postback with its outcomes. */
  async postback(id: number): Promise<StoredPostback | undefined> {
    const [r] = await this.db.query<StoredPostback>(
      `SELECT l.id, l.received_at AS "receivedAt", l.program, p.id AS "programId", p.param_map AS "paramMap", l.method,
              l.content_type AS "contentType", l.query, l.body, o.outcomes
       FROM postback_log l
       LEFT JOIN affiliate_programs p ON p.slug = l.program
       CROSS JOIN LATERAL (${OUTCOMES}) o
       WHERE l.id = $1`,
      [id],
    );
    return r && postbackRow(r);
  }
}

/** The outcomes of log row `l`, oldest first, and the latest one's status, code and duplicate flag. */
const OUTCOMES = `SELECT coalesce(jsonb_agg(jsonb_build_object('status', x.status, 'code', x.code,
                    'conversionId', x.conversion_id, 'duplicate', x.duplicate, 'decidedAt', x.decided_at,
                    'replay', x.replay, 'message', x.message, 'field', x.field) ORDER BY x.decided_at),
                    '[]'::jsonb) AS outcomes,
                  (array_agg(x.status ORDER BY x.decided_at DESC))[1] AS last_status,
                  (array_agg(x.code ORDER BY x.decided_at DESC))[1] AS last_code,
                  (array_agg(x.duplicate ORDER BY x.decided_at DESC))[1] AS last_duplicate,
                  (array_agg(x.message ORDER BY x.decided_at DESC))[1] AS last_message
                FROM postback_outcomes x
                WHERE x.log_id = l.id AND x.decided_at >= l.received_at - ${SLACK}`;

function postbackRow(r: StoredPostback): StoredPostback {
  return {
    ...r,
    id: Number(r.id),
    receivedAt: new Date(r.receivedAt),
    outcomes: r.outcomes.map((o) => ({ ...o, decidedAt: iso(o.decidedAt) })),
  };
}
