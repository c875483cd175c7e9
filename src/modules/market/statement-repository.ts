import type { Queryable } from '../../db/index.ts';
import { isoOrNull as iso } from '../../lib/time.ts';
import type { Pricing } from './types.ts';

/** One line of a statement: the ad server's figures for the month and the amount they make. */
export interface StatementLine {
  line_no: number;
  product_id: string;
  geo: string;
  line_item_id: string | null;
  pricing: Pricing;
  price: string;
  impressions: number;
  clicks: number;
  days_ran: number;
  days_in_month: number;
  amount: string;
}

export interface StatementAdjustment {
  line_no: number;
  at: string;
  impressions_delta: number;
  clicks_delta: number;
  days_ran_delta: number;
  amount_delta: string;
  reason: string;
}

export interface Statement {
  id: string;
  reservation_id: string;
  advertiser_id: string;
  month: string;
  currency: string;
  /** As issued (frozen). */
  total: string;
  /** Sum of the adjustments since, and the total with them. */
  adjustments_total: string;
  adjusted_total: string;
  issued_at: string;
  issued_by: string;
  lines: StatementLine[];
  adjustments: StatementAdjustment[];
}

export type StatementSummary = Omit<Statement, 'lines' | 'adjustments'>;

/** A statement as the list of all statements shows it: with its campaign and advertiser names. */
export type StatementListed = StatementSummary & { campaign_name: string; advertiser_name: string };

const lineRow = (r: Record<string, unknown>): StatementLine => ({
  line_no: r.line_no as number,
  product_id: r.product_id as string,
  geo: r.geo as string,
  line_item_id: (r.line_item_id as string | null) ?? null,
  pricing: r.pricing as Pricing,
  price: r.price as string,
  impressions: Number(r.impressions),
  clicks: Number(r.clicks),
  days_ran: Number(r.days_ran),
  days_in_month: Number(r.days_in_month),
  amount: r.amount as string,
});

const SUMMARY_SELECT = `SELECT s.id, s.reservation_id, s.advertiser_id, s.month, s.currency, s.total::text AS total,
         coalesce((SELECT sum(a.amount_delta) FROM market_statement_adjustments a WHERE a.statement_id = s.id), 0)::numeric(18,2)::text AS adjustments_total,
         (s.total + coalesce((SELECT sum(a.amount_delta) FROM market_statement_adjustments a WHERE a.statement_id = s.id), 0))::numeric(18,2)::text AS adjusted_total,
         s.issued_at, s.issued_by
    FROM market_statements s`;

const summaryRow = (r: Record<string, unknown>): StatementSummary => ({
  id: r.id as string,
  reservation_id: r.reservation_id as string,
  advertiser_id: r.advertiser_id as string,
  month: r.month as string,
  currency: r.currency as string,
  total: r.total as string,
  adjustments_total: r.adjustments_total as string,
  adjusted_total: r.adjusted_total as string,
  issued_at: iso(r.issued_at as Date)!,
  issued_by: r.issued_by as string,
});

/** Statement SQL: the computation from delivery rows, and the frozen statements with their adjustments. */
export class StatementRepository {
  constructor(private readonly db: Queryable) {}

  with(q: Queryable): StatementRepository {
    return new StatementRepository(q);
  }

  /**
   * A reservation's lines of `month` computed from the ad server's delivery rows now, in exact
   * numeric: a CPM line is price × impressions / 1000; a flat line is the monthly fee × the days it
   * ran / the days of the month, where it ran from its first to its last day with impressions
   * (none: 0 days). Each amount is rounded to 2 decimals, halves away from zero.
   */
  async compute(reservationId: string, month: string, start: string, end: string): Promise<StatementLine[]> {
    const rows = await this.db.query<Record<string, unknown>>(
      `WITH delivered AS (
         SELECT l.line_no, l.product_id, l.geo, bl.line_item_id, l.pricing, l.price,
                coalesce(sum(d.impressions), 0)::bigint AS impressions,
                coalesce(sum(d.clicks), 0)::bigint AS clicks,
                coalesce(max(d.day) FILTER (WHERE d.impressions > 0) - min(d.day) FILTER (WHERE d.impressions > 0) + 1, 0) AS days_ran,
                ($4::date - $3::date + 1) AS days_in_month
           FROM market_reservation_lines l
           JOIN market_reservations r ON r.id = l.reservation_id
           LEFT JOIN adserver_booking_lines bl ON bl.booking_id = r.booking_id AND bl.line_no = l.line_no
           LEFT JOIN adserver_delivery d ON d.connection_id = r.connection_id AND d.line_item_id = bl.line_item_id
                AND d.day BETWEEN $3::date AND $4::date
          WHERE l.reservation_id = $1 AND l.month = $2
          GROUP BY l.line_no, l.product_id, l.geo, bl.line_item_id, l.pricing, l.price)
       SELECT line_no, product_id, geo, line_item_id, pricing, price::text AS price, impressions, clicks, days_ran, days_in_month,
              round(CASE WHEN pricing = 'cpm' THEN price * impressions / 1000
                         ELSE price * days_ran / days_in_month END, 2)::text AS amount
         FROM delivered ORDER BY line_no`,
      [reservationId, month, start, end],
    );
    return rows.map(lineRow);
  }

  async insert(
    s: {
      id: string;
      reservation_id: string;
      advertiser_id: string;
      month: string;
      currency: string;
      issued_at: Date;
      issued_by: string;
    },
    lines: StatementLine[],
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO market_statements (id, reservation_id, advertiser_id, month, currency, total, issued_at, issued_by)
       VALUES ($1, $2, $3, $4, $5, $6::numeric, $7, $8)`,
      [
        s.id,
        s.reservation_id,
        s.advertiser_id,
        s.month,
        s.currency,
        sumText(lines.map((l) => l.amount)),
        s.issued_at,
        s.issued_by,
      ],
    );
    for (const l of lines)
      await this.db.query(
        `INSERT INTO market_statement_lines (statement_id, line_no, product_id, geo, line_item_id, pricing, price, impressions,
           clicks, days_ran, days_in_month, amount)
         VALUES ($1, $2, $3, $4, $5, $6, $7::numeric, $8, $9, $10, $11, $12::numeric)`,
        [
          s.id,
          l.line_no,
          l.product_id,
          l.geo,
          l.line_item_id,
          l.pricing,
          l.price,
          l.impressions,
          l.clicks,
          l.days_ran,
          l.days_in_month,
          l.amount,
        ],
      );
  }

  async get(id: string): Promise<Statement | undefined> {
    const [r] = await this.db.query<Record<string, unknown>>(`${SUMMARY_SELECT} WHERE s.id = $1`, [id]);
    if (!r) return undefined;
    const lines = await this.db.query<Record<string, unknown>>(
      `SELECT line_no, product_id, geo, line_item_id, pricing, price::text AS price, impressions, clicks, days_ran, days_in_month,
              amount::text AS amount FROM market_statement_lines WHERE statement_id = $1 ORDER BY line_no`,
      [id],
    );
    const adjustments = await this.db.query<Record<string, unknown>>(
      `SELECT line_no, at, impressions_delta, clicks_delta, days_ran_delta, amount_delta::text AS amount_delta, reason
         FROM market_statement_adjustments WHERE statement_id = $1 ORDER BY id LIMIT 10000`,
      [id],
    );
    return {
      ...summaryRow(r),
      lines: lines.map(lineRow),
      adjustments: adjustments.map((a) => ({
        line_no: a.line_no as number,
        at: iso(a.at as Date)!,
        impressions_delta: Number(a.impressions_delta),
        clicks_delta: Number(a.clicks_delta),
        days_ran_delta: Number(a.days_ran_delta),
        amount_delta: a.amount_delta as string,
        reason: a.reason as string,
      })),
    };
  }

  async listOf(reservationId: string): Promise<StatementSummary[]> {
    const rows = await this.db.query<Record<string, unknown>>(
      `${SUMMARY_SELECT} WHERE s.reservation_id = $1 ORDER BY s.month LIMIT 200`,
      [reservationId],
    );
    return rows.map(summaryRow);
  }

  /** Statements newest first, optionally of one advertiser or one month. */
  async list(filter: { advertiser_id?: string; month?: string }, limit: number): Promise<StatementListed[]> {
    const rows = await this.db.query<Record<string, unknown>>(
      `SELECT q.*, r.campaign_name, a.name AS advertiser_name
         FROM (${SUMMARY_SELECT}
                WHERE ($1::text IS NULL OR s.advertiser_id = $1) AND ($2::text IS NULL OR s.month = $2)
                ORDER BY s.issued_at DESC, s.id DESC LIMIT $3) q
         JOIN market_reservations r ON r.id = q.reservation_id
         JOIN market_advertisers a ON a.id = q.advertiser_id
        ORDER BY q.issued_at DESC, q.id DESC`,
      [filter.advertiser_id ?? null, filter.month ?? null, limit],
    );
    return rows.map((r) => ({
      ...summaryRow(r),
      campaign_name: r.campaign_name as string,
      advertiser_name: r.advertiser_name as string,
    }));
  }

  /** Statements issued since `since` (newest first): what the reconcile job looks at. */
  async issuedSince(since: Date, limit: number): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      'SELECT id FROM market_statements WHERE issued_at >= $1 ORDER BY issued_at DESC LIMIT $2',
      [since, limit],
    );
    return rows.map((r) => r.id);
  }

  async addAdjustment(statementId: string, at: Date, a: Omit<StatementAdjustment, 'at'>): Promise<void> {
    await this.db.query(
      `INSERT INTO market_statement_adjustments (statement_id, line_no, at, impressions_delta, clicks_delta, days_ran_delta,
         amount_delta, reason) VALUES ($1, $2, $3, $4, $5, $6, $7::numeric, $8)`,
      [
        statementId,
        a.line_no,
        at,
        a.impressions_delta,
        a.clicks_delta,
        a.days_ran_delta,
        a.amount_delta,
        a.reason,
      ],
    );
  }

  /** Locks a statement (one reconciliation at a time). */
  async lock(id: string): Promise<void> {
    await this.db.query('SELECT id FROM market_statements WHERE id = $1 FOR UPDATE', [id]);
  }
}

/** Sum of decimal strings with 2 decimals, exact (integer cents in BigInt). */
export function sumText(amounts: readonly string[]): string {
  const cents = amounts.reduce((n, a) => n + toCents(a), 0n);
  return fromCents(cents);
}

/** Difference `a − b` of 2-decimal strings, exact. */
export function diffText(a: string, b: string): string {
  return fromCents(toCents(a) - toCents(b));
}

function toCents(a: string): bigint {
  const neg = a.startsWith('-');
  const [whole = '0', frac = ''] = (neg ? a.slice(1) : a).split('.');
  const v = BigInt(whole) * 100n + BigInt(`${frac}00`.slice(0, 2));
  return neg ? -v : v;
}

function fromCents(c: bigint): string {
  const neg = c < 0n;
  const abs = neg ? -c : c;
  return `${neg ? '-' : ''}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
}
