import type { Db } from '../../db/index.ts';
import { toCsv } from '../../lib/csv.ts';
import { fromDbError } from '../../lib/db-errors.ts';
import { conflict, invalidField, notFound } from '../../lib/errors.ts';
import { ulid } from '../../lib/ids.ts';
import type { Connections } from '../adserver/connections.ts';
import { monthFlight, todayIn } from '../adserver/orders.ts';
import type { MarketRepository } from './repository.ts';
import {
  diffText,
  type Statement,
  type StatementLine,
  type StatementListed,
  StatementRepository,
  type StatementSummary,
  sumText,
} from './statement-repository.ts';

/** How far back the reconcile job looks at issued statements, and how many it takes per run. */
export const RECONCILE_DAYS = 90;
export const RECONCILE_BATCH = 200;

/**
 * Statements of booked reservations, per month, from the ad server's delivery figures: issued once
 * the month is over in the account's time zone, frozen, and corrected only by adjustments when a
 * later report pull changes the figures.
 */
export class MarketStatements {
  private readonly repo: StatementRepository;

  constructor(
    private readonly db: Db,
    private readonly market: MarketRepository,
    private readonly connections: Connections,
    private readonly now: () => Date,
  ) {
    this.repo = new StatementRepository(db);
  }

  /** Issues the statement of a booked reservation for one of its months (after that month ended). */
  async issue(reservationId: string, month: string, actor: string): Promise<Statement> {
    const r = await this.market.getReservationRow(reservationId);
    if (!r) throw notFound('Reservation');
    if (r.status !== 'booked')
      throw conflict(`Reservation ${reservationId} is ${r.status}: only a booked one has a statement`);
    const lines = await this.market.linesOf(reservationId);
    if (!lines.some((l) => l.month === month))
      throw invalidField('month', `the reservation has no line in ${month}`);
    const conn = await this.connections.get(r.connection_id);
    const timezone = conn.timezone ?? 'UTC';
    const flight = monthFlight(month);
    if (todayIn(timezone, this.now()) <= flight.end_date)
      throw invalidField('month', `${month} is not over yet in the account time zone ${timezone}`);
    const id = `stm_${ulid()}`;
    const at = this.now();
    const exists = await this.db
      .tx(async (q) => {
        const repo = this.repo.with(q);
        if ((await repo.listOf(reservationId)).some((s) => s.month === month)) return true;
        const computed = await repo.compute(reservationId, month, flight.start_date, flight.end_date);
        await repo.insert(
          {
            id,
            reservation_id: r.id,
            advertiser_id: r.advertiser_id,
            month,
            currency: r.currency,
            issued_at: at,
            issued_by: actor,
          },
          computed,
        );
        await this.market
          .with(q)
          .addEvent(reservationId, at, 'statement_issued', actor, { statement_id: id, month });
        return false;
      })
      .catch((err) => {
        throw fromDbError(err, { market_statements_reservation_id_month_key: 'month' }) ?? err;
      });
    if (exists)
      throw conflict(`The statement of ${reservationId} for ${month} is already issued: it is frozen`, {
        field: 'month',
      });
    return (await this.repo.get(id))!;
  }

  async get(id: string): Promise<Statement> {
    const s = await this.repo.get(id);
    if (!s) throw notFound('Statement');
    return s;
  }

  /** Every statement, newest first (at most `limit`), optionally of one advertiser or month. */
  list(filter: { advertiser_id?: string; month?: string; limit?: number }): Promise<StatementListed[]> {
    return this.repo.list(filter, filter.limit ?? 50);
  }

  async listOf(reservationId: string): Promise<StatementSummary[]> {
    if (!(await this.market.getReservationRow(reservationId))) throw notFound('Reservation');
    return this.repo.listOf(reservationId);
  }

  /**
   * Compares a statement with the delivery figures now: each line whose figures moved since it was
   * issued (and adjusted) gets one adjustment with the differences. Returns the statement.
   */
  async reconcile(id: string): Promise<Statement> {
    const at = this.now();
    await this.db.tx(async (q) => {
      const repo = this.repo.with(q);
      await repo.lock(id);
      const s = await repo.get(id);
      if (!s) throw notFound('Statement');
      const flight = monthFlight(s.month);
      const now = await repo.compute(s.reservation_id, s.month, flight.start_date, flight.end_date);
      for (const line of now) {
        const was = standing(s, line.line_no);
        if (!was) continue;
        const change = {
          line_no: line.line_no,
          impressions_delta: line.impressions - was.impressions,
          clicks_delta: line.clicks - was.clicks,
          days_ran_delta: line.days_ran - was.days_ran,
          amount_delta: diffText(line.amount, was.amount),
          reason: 'the ad server reported other figures after the statement was issued',
        };
        if (
          change.impressions_delta ||
          change.clicks_delta ||
          change.days_ran_delta ||
          change.amount_delta !== '0.00'
        )
          await repo.addAdjustment(id, at, change);
      }
    });
    return this.get(id);
  }

  /** The job: reconciles the statements issued in the last {@link RECONCILE_DAYS} days. */
  async reconcileRecent(signal?: AbortSignal): Promise<number> {
    const since = new Date(this.now().getTime() - RECONCILE_DAYS * 86_400_000);
    const ids = await this.repo.issuedSince(since, RECONCILE_BATCH);
    let n = 0;
    for (const id of ids) {
      if (signal?.aborted) break;
      await this.reconcile(id);
      n++;
    }
    return n;
  }

  /** The statement as CSV: one row per line as issued, then one per adjustment, then the totals. */
  async csv(id: string): Promise<{ filename: string; body: string }> {
    const s = await this.get(id);
    const header = [
      'kind',
      'line_no',
      'product_id',
      'geo',
      'line_item_id',
      'pricing',
      'price',
      'impressions',
      'clicks',
      'days_ran',
      'days_in_month',
      'amount',
      'currency',
      'at',
      'reason',
    ];
    const rows = [
      ...s.lines.map((l) => [
        'line',
        l.line_no,
        l.product_id,
        l.geo,
        l.line_item_id ?? '',
        l.pricing,
        l.price,
        l.impressions,
        l.clicks,
        l.days_ran,
        l.days_in_month,
        l.amount,
        s.currency,
        s.issued_at,
        '',
      ]),
      ...s.adjustments.map((a) => [
        'adjustment',
        a.line_no,
        '',
        '',
        '',
        '',
        '',
        a.impressions_delta,
        a.clicks_delta,
        a.days_ran_delta,
        '',
        a.amount_delta,
        s.currency,
        a.at,
        a.reason,
      ]),
      ['total', '', '', '', '', '', '', '', '', '', '', s.total, s.currency, s.issued_at, 'as issued'],
      [
        'adjusted_total',
        '',
        '',
        '',
        '',
        '',
        '',
        '',
        '',
        '',
        '',
        s.adjusted_total,
        s.currency,
        '',
        'with the adjustments',
      ],
    ];
    return { filename: `podium-statement-${s.reservation_id}-${s.month}.csv`, body: toCsv(header, rows) };
  }
}

/** A line's figures as issued plus every adjustment since. */
function standing(
  s: Statement,
  lineNo: number,
): Pick<StatementLine, 'impressions' | 'clicks' | 'days_ran' | 'amount'> | undefined {
  const issued = s.lines.find((l) => l.line_no === lineNo);
  if (!issued) return undefined;
  return s.adjustments
    .filter((a) => a.line_no === lineNo)
    .reduce(
      (v, a) => ({
        impressions: v.impressions + a.impressions_delta,
        clicks: v.clicks + a.clicks_delta,
        days_ran: v.days_ran + a.days_ran_delta,
        amount: sumText([v.amount, a.amount_delta]),
      }),
      {
        impressions: issued.impressions,
        clicks: issued.clicks,
        days_ran: issued.days_ran,
        amount: issued.amount,
      },
    );
}
