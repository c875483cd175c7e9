import type { Config } from '../../config.ts';
import { invalidField, notFound } from '../../lib/errors.ts';
import type { OutboundClient, Outcome } from '../../lib/outbound.ts';
import { type RetryPolicy, withRetries } from '../../lib/retry.ts';
import { scrub } from '../../lib/scrub.ts';
import type { ResealReport, Sealer } from '../../lib/seal.ts';
import { addDays, dayIn, daysBetween, isDay } from '../../lib/time.ts';
import type { Compared, ReconcileDay } from '../tracking/types.ts';
import type {
  AggregateRepository,
  PullRecord,
  ReconcileDbRow,
  StoredAggregate,
  StoredReport,
} from './aggregate-repository.ts';
import {
  mappingProblem,
  type OperatorRow,
  type ReportMapping,
  ReportShapeError,
  readReportPage,
} from './report-mapping.ts';

/** Path of the operator's daily report, appended to the programme's report URL. */
export const REPORT_PATH = '/api/reports/affiliate-daily';
const MAX_PAGES = 50;
export const MAX_BACKFILL_DAYS = 366;
const MAX_LISTED_PULLS = 500;

/** A programme's report settings as the admin API shows them (never the key). */
export interface ReportSettings {
  programId: number;
  url: string | null;
  keySet: boolean;
  mapping: ReportMapping;
}

export interface ReportInput {
  url: string;
  /** Omitted: keep the stored key; null: remove it. */
  key?: string | null;
  mapping?: Record<string, string>;
}

/** The outcome of pulling one programme day. */
export type PullResult = Pick<PullRecord, 'day' | 'status' | 'reason' | 'calls' | 'pages' | 'rows'> & {
  id: number;
};

/** What a report test saw: the pull's own verdict on yesterday, and its first rows. */
export interface ReportTest {
  day: string;
  outcome: PullRecord['status'];
  status: number | null;
  message: string;
  rowCount: number;
  currency: string | null;
  rows: OperatorRow[];
}
const TEST_ROWS = 10;

/** How the puller waits between retries; tests shorten it. */
export type PullRetry = Pick<RetryPolicy, 'attempts' | 'budgetMs' | 'baseMs' | 'capMs' | 'sleep'>;
const DEFAULT_RETRY: PullRetry = { attempts: 4, budgetMs: 120_000, baseMs: 1000, capMs: 30_000 };

/** A pull that ended without usable figures: the reason, the last HTTP status and the calls made. */
class PullFailed extends Error {
  constructor(
    message: string,
    readonly httpStatus: number | null,
    readonly calls: number,
  ) {
    super(message);
  }
}

function compare(ours: number, operator: number | null, thresholdPercent: number): Compared {
  if (operator === null) return { ours, operator, difference: null, differencePercent: null, flagged: false };
  const difference = ours - operator;
  if (operator === 0)
    return {
      ours,
      operator,
      difference,
      differencePercent: difference === 0 ? '0.00' : null,
      flagged: difference !== 0,
    };
  const percent = (difference / operator) * 100;
  return {
    ours,
    operator,
    difference,
    differencePercent: percent.toFixed(2),
    flagged: Math.abs(percent) > thresholdPercent,
  };
}

/**
 * Operator daily aggregates: report endpoints with sealed credentials, pulls through the guarded
 * outbound client (retries, Retry-After, pagination, per-programme mapping), the scheduled
 * trailing-window job, and reconciliation against our clicks and postbacks.
 */
export class OperatorAggregates {
  constructor(
    private readonly repo: AggregateRepository,
    private readonly sealer: Sealer,
    private readonly outbound: OutboundClient,
    private readonly config: Pick<Config, 'aggregateWindowDays' | 'reconcileThresholdPercent'>,
    private readonly now: () => Date,
    private readonly retry: PullRetry = DEFAULT_RETRY,
  ) {}

  private async stored(programId: number): Promise<StoredReport> {
    const r = await this.repo.report(programId);
    if (!r) throw notFound('Program');
    return r;
  }

  private show(r: StoredReport): ReportSettings {
    return { programId: r.programId, url: r.url, keySet: r.keySealed !== null, mapping: r.mapping };
  }

  async report(programId: number): Promise<ReportSettings> {
    return this.show(await this.stored(programId));
  }

  /** Sets a programme's report endpoint, credential (sealed, the programme id bound in) and mapping. */
  async setReport(programId: number, input: ReportInput): Promise<ReportSettings> {
    const checked = this.outbound.checkBaseUrl(input.url);
    if (!checked.ok) throw invalidField('url', checked.message.replace(/^base_url/, 'url'));
    const problem = mappingProblem(input.mapping ?? {});
    if (problem) throw invalidField(problem[0], problem[1]);
    if (typeof input.key === 'string' && !/^[\x21-\x7e]{8,500}$/.test(input.key))
      throw invalidField('key', 'must be 8 to 500 printable characters without spaces');
    await this.stored(programId);
    const sealed =
      input.key === undefined
        ? undefined
        : input.key === null
          ? null
          : this.sealer.seal(input.key, String(programId));
    await this.repo.setReport(programId, checked.url.href, sealed, input.mapping ?? {});
    return this.report(programId);
  }

  /** Removes the report endpoint and its credential; stored rows and pulls stay. */
  async clearReport(programId: number): Promise<ReportSettings> {
    await this.stored(programId);
    await this.repo.setReport(programId, null, null, {});
    return this.report(programId);
  }

  /** Re-seals every report key not sealed with the current key version (see `Sealer.reseal`). */
  async rotateKeys(): Promise<ResealReport> {
    return this.sealer.reseal(await this.repo.sealedReportKeys(), (s, sealed) =>
      this.repo.replaceSealedReportKey(Number(s.aad), s.sealed, sealed),
    );
  }

  async programIdBySlug(slug: string): Promise<number> {
    const id = await this.repo.programBySlug(slug);
    if (id === undefined) throw notFound('Program');
    return id;
  }

  /** Calls the operator once per page (with retries) and reads every page of one day. */
  private async fetchDay(
    r: StoredReport,
    day: string,
    signal: AbortSignal | undefined,
    retry: PullRetry = this.retry,
  ) {
    if (r.url === null) throw new PullFailed('the programme has no report endpoint', null, 0);
    const baseUrl = r.url;
    let apiKey: string | undefined;
    try {
      apiKey = r.keySealed === null ? undefined : this.sealer.open(r.keySealed, String(r.programId));
    } catch (err) {
      throw new PullFailed(`the report key cannot be opened: ${(err as Error).message}`, null, 0);
    }
    let cursor: string | null = null;
    let calls = 0;
    let pages = 0;
    let lastStatus: number | null = null;
    const rows: OperatorRow[] = [];
    let currency: string | null = null;
    const fail = (reason: string) => new PullFailed(reason, lastStatus, calls);
    do {
      const query: Record<string, string> = { date: day };
      if (cursor !== null) query.cursor = cursor;
      const send = (): Promise<Outcome> =>
        this.outbound.send({
          method: 'GET',
          baseUrl,
          path: REPORT_PATH,
          query,
          apiKey,
          signal,
          target: 'operator',
        });
      const { outcome, calls: made } = await withRetries(send, { ...retry, signal });
      calls += made;
      lastStatus = 'status' in outcome ? outcome.status : null;
      if (outcome.kind !== 'ok') throw fail(outcome.message.replace(/^base_url/, 'report URL'));
      let page: ReturnType<typeof readReportPage>;
      try {
        page = readReportPage(outcome.json, day, r.mapping);
      } catch (err) {
        if (!(err instanceof ReportShapeError)) throw err;
        throw fail(`malformed answer: ${err.message}`);
      }
      pages++;
      rows.push(...page.rows);
      currency = page.currency ?? currency;
      if (page.nextCursor !== null && page.nextCursor === cursor)
        throw fail('malformed answer: next_cursor repeats the cursor just sent');
      cursor = page.nextCursor;
      if (cursor !== null && pages >= MAX_PAGES) throw fail(`more than ${MAX_PAGES} pages for one day`);
    } while (cursor !== null);
    return { rows, currency, calls, pages, httpStatus: lastStatus };
  }

  /** Pulls one programme day and records the attempt: ok with its rows, or failed with the reason. */
  async pullDay(
    programId: number,
    day: string,
    trigger: 'schedule' | 'backfill',
    signal?: AbortSignal,
  ): Promise<PullResult> {
    const r = await this.stored(programId);
    const base = { programId, day, trigger, startedAt: this.now().toISOString() } as const;
    let got: Awaited<ReturnType<OperatorAggregates['fetchDay']>>;
    try {
      got = await this.fetchDay(r, day, signal);
    } catch (err) {
      const failed = err instanceof PullFailed;
      // Unexpected errors are recorded too, scrubbed of anything that looks like a secret.
      const reason = (failed ? err.message : `internal error: ${scrub((err as Error).message)}`).slice(
        0,
        1000,
      );
      const pull = {
        ...base,
        status: 'failed' as const,
        reason,
        httpStatus: failed ? err.httpStatus : null,
        calls: failed ? err.calls : 0,
        pages: 0,
        finishedAt: this.now(),
      };
      const id = await this.repo.recordPull(pull, undefined, null);
      return { id, day, status: 'failed', reason, calls: pull.calls, pages: 0, rows: 0 };
    }
    const pull = { ...base, status: 'ok' as const, reason: null, finishedAt: this.now() };
    const id = await this.repo.recordPull(
      { ...pull, httpStatus: got.httpStatus, calls: got.calls, pages: got.pages },
      got.rows,
      got.currency,
    );
    return { id, day, status: 'ok', reason: null, calls: got.calls, pages: got.pages, rows: got.rows.length };
  }

  /**
   * Yesterday (in the programme's zone) pulled once now, each page called once (no retries), and
   * judged as the scheduled pull judges it; nothing is stored or recorded.
   */
  async testDay(programId: number): Promise<ReportTest> {
    const r = await this.stored(programId);
    const day = addDays(dayIn(this.now(), r.timezone), -1);
    try {
      const got = await this.fetchDay(r, day, undefined, { ...this.retry, attempts: 1 });
      const n = got.rows.length;
      return {
        day,
        outcome: 'ok',
        status: got.httpStatus,
        message: `${n} row${n === 1 ? '' : 's'} in ${got.pages} page${got.pages === 1 ? '' : 's'}`,
        rowCount: n,
        currency: got.currency,
        rows: got.rows.slice(0, TEST_ROWS),
      };
    } catch (err) {
      if (!(err instanceof PullFailed)) throw err;
      return {
        day,
        outcome: 'failed',
        status: err.httpStatus,
        message: err.message,
        rowCount: 0,
        currency: null,
        rows: [],
      };
    }
  }

  /** Refuses a range that is malformed, backwards or longer than `max` days (422 naming the field). */
  checkRange(from: string, to: string, max: number): void {
    for (const [f, v] of [
      ['from', from],
      ['to', to],
    ] as const)
      if (!isDay(v)) throw invalidField(f, 'must be a date YYYY-MM-DD');
    const days = daysBetween(from, to);
    if (days < 0) throw invalidField('to', 'must not be before from');
    if (days >= max) throw invalidField('to', `the range is at most ${max} days`);
  }

  /** Backfill: pulls every day of [from, to] in order, reporting each as it finishes. */
  async pullRange(
    programId: number,
    from: string,
    to: string,
    onDay: (done: number, total: number, result: PullResult) => void = () => {},
    signal?: AbortSignal,
  ): Promise<PullResult[]> {
    this.checkRange(from, to, MAX_BACKFILL_DAYS);
    await this.stored(programId);
    const total = daysBetween(from, to) + 1;
    const out: PullResult[] = [];
    for (let i = 0; i < total && !signal?.aborted; i++) {
      const result = await this.pullDay(programId, addDays(from, i), 'backfill', signal);
      out.push(result);
      onDay(i + 1, total, result);
    }
    return out;
  }

  /**
   * The scheduled job: for every programme with an endpoint, pulls the trailing window of days
   * before today (in the programme's time zone), oldest first. Operators revise recent days, so
   * each run fetches the whole window again.
   */
  async pullWindow(signal?: AbortSignal): Promise<PullResult[]> {
    const out: PullResult[] = [];
    for (const id of await this.repo.programsWithReports()) {
      const r = await this.stored(id);
      const today = dayIn(this.now(), r.timezone);
      for (let back = this.config.aggregateWindowDays; back >= 1 && !signal?.aborted; back--)
        out.push(await this.pullDay(id, addDays(today, -back), 'schedule', signal));
    }
    // A run cut short by shutdown throws, so the scheduler gives its slot back to another process.
    signal?.throwIfAborted();
    return out;
  }

  async pulls(programId: number, from: string, to: string): Promise<PullRecord[]> {
    this.checkRange(from, to, MAX_BACKFILL_DAYS);
    await this.stored(programId);
    return this.repo.pulls(programId, from, to, MAX_LISTED_PULLS);
  }

  async aggregates(programId: number, from: string, to: string): Promise<StoredAggregate[]> {
    this.checkRange(from, to, MAX_BACKFILL_DAYS);
    await this.stored(programId);
    return this.repo.aggregates(programId, from, to);
  }

  /**
   * Per day: our counted clicks, postback registrations/FTDs and commission beside the operator's figures,
   * with differences flagged beyond `thresholdPercent` (default from config). Days are cut in
   * the programme's time zone, the one its report uses.
   */
  async reconcile(
    programId: number,
    from: string,
    to: string,
    thresholdPercent = this.config.reconcileThresholdPercent,
  ): Promise<{ timezone: string; thresholdPercent: number; days: ReconcileDay[] }> {
    this.checkRange(from, to, MAX_BACKFILL_DAYS);
    const r = await this.stored(programId);
    const rows = await this.repo.reconcile(programId, from, to, r.timezone);
    return {
      timezone: r.timezone,
      thresholdPercent,
      days: rows.map((row) => this.day(row, thresholdPercent)),
    };
  }

  private day(row: ReconcileDbRow, threshold: number): ReconcileDay {
    const clicks = compare(row.ourClicks, row.opClicks, threshold);
    const registrations = compare(row.ourRegistrations, row.opRegistrations, threshold);
    const ftds = compare(row.ourFtds, row.opFtds, threshold);
    const commission = {
      currency: row.currency,
      ours: row.ourCommission,
      operator: row.opCommission,
      difference: row.commissionDifference,
      differencePercent: row.commissionDifferencePercent,
      // Any difference is flagged when the operator's figure is 0, as for the counts.
      flagged:
        row.commissionDifference !== null &&
        (row.commissionDifferencePercent === null
          ? true
          : Math.abs(Number(row.commissionDifferencePercent)) > threshold),
    };
    return {
      day: row.day,
      pulled: row.opClicks !== null,
      lastPull: row.lastStatus === null ? null : { status: row.lastStatus, reason: row.lastReason },
      pulledAt: row.pulledAt,
      clicks,
      registrations,
      ftds,
      commission,
      flagged: clicks.flagged || registrations.flagged || ftds.flagged || commission.flagged,
    };
  }
}
