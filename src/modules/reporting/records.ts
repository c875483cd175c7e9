import { type CsvColumn, csvColumns, toCsv } from '../../lib/csv.ts';
import { conflict, invalidField, notFound } from '../../lib/errors.ts';
import { type Page, pageMeta } from '../../lib/paging.ts';
import { addDays, daysBetween, isDay } from '../../lib/time.ts';
import { replayProblem } from '../tracking/postback.ts';
import type { LoggedPostback, ReplayOutcome } from '../tracking/postback-intake.ts';
import type {
  ConversionFilter,
  ConversionRecord,
  PostbackFilter,
  RecordsRepository,
  StoredOutcome,
  StoredPostback,
} from './records-repository.ts';

export const RECORDS_DEFAULT_PER_PAGE = 50;
export const RECORDS_MAX_PER_PAGE = 200;
/** Without `from`, lists cover this many days up to `to` (default today, UTC). */
export const RECORDS_DEFAULT_DAYS = 30;
/** The widest window a list or export may scan (both tables are partitioned by month). */
export const RECORDS_MAX_DAYS = 92;
/** A CSV export holds at most this many conversions; a wider one asks for a narrower query. */
export const CONVERSIONS_MAX_EXPORT_ROWS = 50_000;
/** Outcomes whose token was checked when the postback arrived (401 and 404 were never authorised). */
const AUTHORISED = new Set([200, 400, 415]);

/** A list query: inclusive UTC days (defaulted and bounded) and a page. */
interface Listing {
  from?: string | undefined;
  to?: string | undefined;
  page?: number | undefined;
  perPage?: number | undefined;
}
type Window = Pick<Listing, 'from' | 'to'>;

export type ConversionQuery = Listing & Omit<ConversionFilter, 'since' | 'until' | 'limit' | 'offset'>;
export type PostbackQuery = Listing & Omit<PostbackFilter, 'since' | 'until' | 'limit' | 'offset'>;

/** A logged postback as the admin API shows it. */
export interface PostbackEntry {
  id: string;
  receivedAt: string;
  program: string;
  programId: number | null;
  method: string;
  contentType: string | null;
  /** Query and body parameters merged (the body wins), as logged: secret-looking names redacted. */
  params: Record<string, unknown>;
  /** A body the log could not read as parameters (unparseable), as logged; otherwise null. */
  rawBody: string | null;
  outcomes: StoredOutcome[];
  replayable: boolean;
}

export interface ReplayResult extends ReplayOutcome {
  logId: string;
}

const CSV_COLUMNS: CsvColumn<ConversionRecord>[] = csvColumns(
  [
    'id',
    'receivedAt',
    'programId',
    'transactionId',
    'event',
    'amount',
    'currency',
    'clickId',
    'attributed',
    'subId',
    'siteId',
    'toplistId',
    'position',
    'brandId',
    'offerId',
    'trackerId',
    'logId',
  ],
  { attributed: (r) => String(r.attributed) },
);

/** The parameters and any unreadable body of a log row, as the replay would read them. */
function paramsOf(p: StoredPostback): { params: Record<string, unknown>; rawBody: string | null } {
  if (p.body === null || p.body === '{}') return { params: p.query, rawBody: null };
  const type = (p.contentType ?? '').split(';')[0]?.trim().toLowerCase();
  if (type === 'application/json' || type === 'application/x-www-form-urlencoded') {
    try {
      const body: unknown = JSON.parse(p.body);
      if (body && typeof body === 'object' && !Array.isArray(body))
        return { params: { ...p.query, ...(body as Record<string, unknown>) }, rawBody: null };
    } catch {
      // Logged as text: the body was not valid JSON when it arrived.
    }
  }
  return { params: p.query, rawBody: p.body };
}

/** Why a log row cannot be replayed, or null. */
function whyNotReplayable(p: StoredPostback): string | null {
  const first = p.outcomes[0];
  if (!first || !AUTHORISED.has(first.status))
    return 'its postback token was never accepted (unknown programme or wrong token)';
  if (p.paramMap === null) return `no programme has the slug ${p.program} any more`;
  const { params, rawBody } = paramsOf(p);
  return replayProblem(params, rawBody, p.paramMap);
}

/**
 * The affiliate manager's records: conversions (paged and CSV) and the raw postback log with
 * replay of a logged postback through the intake with the programme's current mapping.
 */
export class TrackingRecords {
  constructor(
    /** Lists read here (the read replica when there is one). */
    private readonly reads: RecordsRepository,
    /** A replay reads its log row here, on the primary. */
    private readonly primary: RecordsRepository,
    private readonly replayer: (entry: LoggedPostback) => Promise<ReplayOutcome>,
    private readonly now: () => Date,
  ) {}

  /** The UTC window [since, until) of inclusive days from–to, defaulted and bounded. */
  private window(q: Window): { since: Date; until: Date; from: string; to: string } {
    for (const f of ['from', 'to'] as const)
      if (q[f] !== undefined && !isDay(q[f])) throw invalidField(f, 'must be a date YYYY-MM-DD');
    const to = q.to ?? q.from ?? this.now().toISOString().slice(0, 10);
    const from = q.from ?? addDays(to, 1 - RECORDS_DEFAULT_DAYS);
    const days = daysBetween(from, to);
    if (days < 0) throw invalidField('to', 'must not be before from');
    if (days >= RECORDS_MAX_DAYS) throw invalidField('to', `the range is at most ${RECORDS_MAX_DAYS} days`);
    return {
      since: new Date(`${from}T00:00:00Z`),
      until: new Date(`${addDays(to, 1)}T00:00:00Z`),
      from,
      to,
    };
  }

  private conversionFilter(q: ConversionQuery) {
    const { since, until } = this.window(q);
    return {
      since,
      until,
      programId: q.programId,
      event: q.event?.toLowerCase(),
      attributed: q.attributed,
      clickId: q.clickId,
      transactionId: q.transactionId,
      subId: q.subId,
      siteIds: q.siteIds,
    };
  }

  /** One page of conversions, newest first. */
  async conversions(q: ConversionQuery): Promise<Page<ConversionRecord>> {
    const page = q.page ?? 1;
    const perPage = q.perPage ?? RECORDS_DEFAULT_PER_PAGE;
    const { rows, total } = await this.reads.conversions({
      ...this.conversionFilter(q),
      limit: perPage,
      offset: (page - 1) * perPage,
    });
    return { data: rows, meta: pageMeta(total, page, perPage) };
  }

  /** Every conversion of the query as CSV (newest first); 422 beyond the export limit. */
  async conversionsCsv(q: ConversionQuery): Promise<{ csv: string; from: string; to: string }> {
    const { from, to } = this.window(q);
    const { rows } = await this.reads.conversions({
      ...this.conversionFilter(q),
      limit: CONVERSIONS_MAX_EXPORT_ROWS + 1,
      offset: 0,
    });
    if (rows.length > CONVERSIONS_MAX_EXPORT_ROWS)
      throw invalidField(
        'to',
        `more than ${CONVERSIONS_MAX_EXPORT_ROWS} conversions: narrow the range or filter by program or event`,
      );
    const csv = toCsv(
      CSV_COLUMNS.map(([name]) => name),
      rows.map((r) => CSV_COLUMNS.map(([, get]) => get(r))),
    );
    return { csv, from, to };
  }

  /** One page of the raw postback log, newest first, each with every outcome. */
  async postbacks(q: PostbackQuery): Promise<Page<PostbackEntry>> {
    const page = q.page ?? 1;
    const perPage = q.perPage ?? RECORDS_DEFAULT_PER_PAGE;
    const { since, until } = this.window(q);
    const { rows, total } = await this.reads.postbacks({
      since,
      until,
      programId: q.programId,
      outcome: q.outcome,
      code: q.code,
      transactionId: q.transactionId,
      reason: q.reason,
      limit: perPage,
      offset: (page - 1) * perPage,
    });
    return { data: rows.map(entry), meta: pageMeta(total, page, perPage) };
  }

  /**
   * Processes a logged postback again with its programme's current mapping; the new outcome is
   * recorded as a replay beside the original. 404 for an unknown id, 409 when it cannot be replayed.
   */
  async replay(id: number): Promise<{ result: ReplayResult; before: StoredOutcome | undefined }> {
    const p = await this.primary.postback(id);
    if (!p) throw notFound('Postback');
    const why = whyNotReplayable(p);
    if (why) throw conflict(`This postback cannot be replayed: ${why}`, { logId: String(id) });
    const outcome = await this.replayer({
      id: p.id,
      receivedAt: p.receivedAt,
      program: p.program,
      method: p.method,
      contentType: p.contentType,
      query: p.query,
      body: p.body,
    });
    return { result: { logId: String(id), ...outcome }, before: p.outcomes.at(-1) };
  }
}

function entry(p: StoredPostback): PostbackEntry {
  const { params, rawBody } = paramsOf(p);
  return {
    id: String(p.id),
    receivedAt: p.receivedAt.toISOString(),
    program: p.program,
    programId: p.programId,
    method: p.method,
    contentType: p.contentType,
    params,
    rawBody,
    outcomes: p.outcomes,
    replayable: whyNotReplayable(p) === null,
  };
}
