import type { Queryable } from '../../db/index.ts';
import { dayText as dateText } from '../../lib/time.ts';

/** A pushed line as the report job sees it. */
export interface PushedLine {
  line_item_id: string;
  start_date: string;
  end_date: string;
  /** Whether any delivery was stored for it already (then only the trailing days are pulled again). */
  pulled: boolean;
}

/** One report row as stored: `date` is the day in the account's time zone. */
export interface DeliveryRow {
  line_item_id: string;
  date: string;
  impressions: number;
  clicks: number;
}

export interface PullRecord {
  connection_id: string;
  started_at: Date;
  state: string;
  date_from: string | null;
  date_to: string | null;
  calls: number;
  matched: number;
  unmatched: number;
  error: string | null;
}

/** Ad-server SQL for delivery reports: pushed lines to pull, stored report rows and the pull log. */
export class ReportRepository {
  constructor(private readonly db: Queryable) {}

  /** Pushed lines of a connection with the first and last day already pulled (null before any pull). */
  async pushedLines(connectionId: string): Promise<PushedLine[]> {
    const rows = await this.db.query<PushedLine & { start_date: Date | string; end_date: Date | string }>(
      `SELECT l.line_item_id, l.start_date, l.end_date,
              EXISTS (SELECT 1 FROM adserver_delivery d WHERE d.connection_id = l.connection_id
                      AND d.line_item_id = l.line_item_id) AS pulled
       FROM adserver_booking_lines l WHERE l.connection_id = $1 AND l.line_item_id IS NOT NULL
       ORDER BY l.start_date, l.line_item_id`,
      [connectionId],
    );
    return rows.map((r) => ({ ...r, start_date: dateText(r.start_date), end_date: dateText(r.end_date) }));
  }

  /** Connections that have at least one pushed line (the report job's work list). */
  async connectionsWithPushedLines(): Promise<string[]> {
    const rows = await this.db.query<{ connection_id: string }>(
      `SELECT DISTINCT connection_id FROM adserver_booking_lines WHERE line_item_id IS NOT NULL ORDER BY 1`,
    );
    return rows.map((r) => r.connection_id);
  }

  /** Stores report rows (newer figures replace older ones: ad servers revise recent days). */
  async upsertDelivery(
    table: 'matched' | 'unmatched',
    connectionId: string,
    rows: DeliveryRow[],
    at: Date,
  ): Promise<void> {
    if (!rows.length) return;
    const name = table === 'matched' ? 'adserver_delivery' : 'adserver_unmatched_delivery';
    await this.db.query(
      `INSERT INTO ${name} (connection_id, line_item_id, day, impressions, clicks, pulled_at)
       SELECT $1, r.line_item_id, r.date::date, r.impressions, r.clicks, $3
       FROM jsonb_to_recordset($2::jsonb) AS r(line_item_id text, date text, impressions bigint, clicks bigint)
       ON CONFLICT (connection_id, line_item_id, day) DO UPDATE SET impressions = EXCLUDED.impressions,
         clicks = EXCLUDED.clicks, pulled_at = EXCLUDED.pulled_at`,
      [connectionId, JSON.stringify(rows), at],
    );
  }

  async recordPull(p: PullRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO adserver_report_pulls (connection_id, started_at, state, date_from, date_to, calls, matched, unmatched, error)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        p.connection_id,
        p.started_at,
        p.state,
        p.date_from,
        p.date_to,
        p.calls,
        p.matched,
        p.unmatched,
        p.error,
      ],
    );
  }

  /** How many of the connection's latest pulls failed in a row (up to `window`). */
  async failedPullStreak(connectionId: string, window: number): Promise<number> {
    const rows = await this.db.query<{ state: string }>(
      'SELECT state FROM adserver_report_pulls WHERE connection_id = $1 ORDER BY id DESC LIMIT $2',
      [connectionId, window],
    );
    const ok = rows.findIndex((r) => r.state === 'ok');
    return ok < 0 ? rows.length : ok;
  }

  async listPulls(connectionId: string, limit = 20): Promise<PullRecord[]> {
    const rows = await this.db.query<
      PullRecord & { started_at: Date; date_from: Date | null; date_to: Date | null }
    >(
      `SELECT connection_id, started_at, state, date_from, date_to, calls, matched, unmatched, error
       FROM adserver_report_pulls WHERE connection_id = $1 ORDER BY id DESC LIMIT $2`,
      [connectionId, limit],
    );
    return rows.map((r) => ({
      ...r,
      started_at: new Date(r.started_at),
      date_from: r.date_from && dateText(r.date_from),
      date_to: r.date_to && dateText(r.date_to),
    }));
  }

  async deliveryOf(connectionId: string, lineItemIds: readonly string[]): Promise<DeliveryRow[]> {
    return this.db.query<DeliveryRow>(
      `SELECT line_item_id, to_char(day, 'YYYY-MM-DD') AS date, impressions::int AS impressions, clicks::int AS clicks
       FROM adserver_delivery WHERE connection_id = $1 AND line_item_id = ANY($2::text[]) ORDER BY line_item_id, day`,
      [connectionId, lineItemIds],
    );
  }

  async unmatchedOf(connectionId: string): Promise<DeliveryRow[]> {
    return this.db.query<DeliveryRow>(
      `SELECT line_item_id, to_char(day, 'YYYY-MM-DD') AS date, impressions::int AS impressions, clicks::int AS clicks
       FROM adserver_unmatched_delivery WHERE connection_id = $1 ORDER BY line_item_id, day LIMIT 10000`,
      [connectionId],
    );
  }
}
