import type { Queryable } from '../../db/index.ts';
import { dayText as dateText, isoOrNull as iso } from '../../lib/time.ts';
import type { Booking, BookingLine, BookingSummary } from './orders.ts';
import type { Push } from './types.ts';

/** A line's values for the columns an update may change: geo, goal, creatives, codes and approved creatives. */
function editableValues(l: BookingLine): unknown[] {
  return [
    l.geo,
    l.goal_impressions,
    JSON.stringify(l.creatives),
    l.click_codes,
    l.impression_codes,
    JSON.stringify(l.approved_creatives),
  ];
}

/** Ad-server SQL for bookings, their lines and the pushes that create them on the ad server. */
export class BookingRepository {
  constructor(private readonly db: Queryable) {}

  with(q: Queryable): BookingRepository {
    return new BookingRepository(q);
  }

  async insertBooking(
    b: Omit<
      Booking,
      'revision' | 'pushed_revision' | 'order_id' | 'last_push_error' | 'created_at' | 'updated_at'
    >,
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO adserver_bookings (id, connection_id, external_ref, advertiser_name, advertiser_ref, campaign_name, currency)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        b.id,
        b.connection_id,
        b.external_ref,
        b.advertiser_name,
        b.advertiser_ref,
        b.campaign_name,
        b.currency,
      ],
    );
    for (const l of b.lines) await this.insertLine(b.id, b.connection_id, l);
  }

  async insertLine(bookingId: string, connectionId: string, l: BookingLine): Promise<void> {
    await this.db.query(
      `INSERT INTO adserver_booking_lines (booking_id, line_no, connection_id, external_ref, placement_id, inventory_id,
         month, start_date, end_date, sizes, geo, goal_impressions, creatives, click_codes, impression_codes,
         approved_creatives)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
      [
        bookingId,
        l.line_no,
        connectionId,
        l.external_ref,
        l.placement_id,
        l.inventory_id,
        l.month,
        l.start_date,
        l.end_date,
        l.sizes,
        ...editableValues(l),
      ],
    );
  }

  async updateLine(bookingId: string, l: BookingLine): Promise<void> {
    await this.db.query(
      `UPDATE adserver_booking_lines SET geo = $3, goal_impressions = $4, creatives = $5, click_codes = $6,
         impression_codes = $7, approved_creatives = $8 WHERE booking_id = $1 AND line_no = $2`,
      [bookingId, l.line_no, ...editableValues(l)],
    );
  }

  /** Moves the booking to its next revision (a change the ad server has not seen yet). */
  async bumpRevision(bookingId: string): Promise<void> {
    await this.db.query(
      'UPDATE adserver_bookings SET revision = revision + 1, updated_at = now() WHERE id = $1',
      [bookingId],
    );
  }

  /**
   * Every booking, newest first, without its lines (the console's list); one connection's when
   * given. With `siteIds`, only bookings whose every line is on a placement of those sites: one
   * that also books another site's (or a site-less) placement spans sites, and so does one
   * without lines.
   */
  async listBookings(connectionId?: string, siteIds?: readonly number[]): Promise<BookingSummary[]> {
    const rows = await this.db.query<
      Omit<BookingSummary, 'created_at'> & { created_at: Date; lines: number }
    >(
      `SELECT b.id, b.connection_id, c.publisher, b.external_ref, b.advertiser_name, b.campaign_name, b.currency,
              b.revision, b.pushed_revision, b.order_id, b.last_push_error, b.created_at, s.lines, s.site_ids
         FROM adserver_bookings b JOIN adserver_connections c ON c.id = b.connection_id
        CROSS JOIN LATERAL (
          SELECT count(*)::int AS lines,
                 coalesce(array_agg(DISTINCT p.site_id ORDER BY p.site_id) FILTER (WHERE p.site_id IS NOT NULL),
                          '{}') AS site_ids,
                 bool_and(p.site_id IS NOT NULL AND p.site_id = ANY($2::int[])) AS within
            FROM adserver_booking_lines l JOIN adserver_placements p ON p.id = l.placement_id
           WHERE l.booking_id = b.id
        ) s
        WHERE ($1::text IS NULL OR b.connection_id = $1) AND ($2::int[] IS NULL OR s.within)
        ORDER BY b.created_at DESC, b.id DESC`,
      [connectionId ?? null, siteIds ? [...siteIds] : null],
    );
    return rows.map((r) => ({
      ...r,
      lines: Number(r.lines),
      site_ids: r.site_ids.map(Number),
      created_at: iso(r.created_at)!,
    }));
  }

  /** Whether the connection already has a booking with this campaign external_ref. */
  async bookingRefTaken(connectionId: string, externalRef: string): Promise<boolean> {
    const rows = await this.db.query(
      'SELECT 1 FROM adserver_bookings WHERE connection_id = $1 AND external_ref = $2',
      [connectionId, externalRef],
    );
    return rows.length > 0;
  }

  async getBooking(id: string, lock = false): Promise<Booking | undefined> {
    const [b] = await this.db.query<
      Omit<Booking, 'lines' | 'created_at' | 'updated_at'> & { created_at: Date; updated_at: Date }
    >(`SELECT * FROM adserver_bookings WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
    if (!b) return undefined;
    const lines = await this.db.query<BookingLine & { start_date: Date | string; end_date: Date | string }>(
      'SELECT * FROM adserver_booking_lines WHERE booking_id = $1 ORDER BY line_no',
      [id],
    );
    return {
      ...b,
      created_at: iso(b.created_at)!,
      updated_at: iso(b.updated_at)!,
      lines: lines.map((l) => ({
        line_no: l.line_no,
        external_ref: l.external_ref,
        placement_id: l.placement_id,
        inventory_id: l.inventory_id,
        month: l.month,
        start_date: dateText(l.start_date),
        end_date: dateText(l.end_date),
        geo: l.geo,
        goal_impressions: Number(l.goal_impressions),
        sizes: l.sizes,
        approved_creatives: l.approved_creatives,
        creatives: l.creatives,
        click_codes: l.click_codes,
        impression_codes: l.impression_codes,
        line_item_id: l.line_item_id,
      })),
    };
  }

  /** The push to resend for this revision (same key, same bytes), unless it succeeded or conflicted. */
  async openPush(bookingId: string, revision: number): Promise<Push | undefined> {
    const [p] = await this.db.query<Push>(
      `SELECT * FROM adserver_pushes WHERE booking_id = $1 AND revision = $2 AND status IN ('pending', 'failed')
       ORDER BY created_at DESC LIMIT 1`,
      [bookingId, revision],
    );
    return p;
  }

  async insertPush(key: string, bookingId: string, revision: number, body: string): Promise<void> {
    await this.db.query(
      `INSERT INTO adserver_pushes (idempotency_key, booking_id, revision, body, status) VALUES ($1, $2, $3, $4, 'pending')`,
      [key, bookingId, revision, body],
    );
  }

  async finishPush(
    key: string,
    status: Push['status'],
    httpStatus: number | null,
    calls: number,
    error: string | null,
  ): Promise<void> {
    await this.db.query(
      `UPDATE adserver_pushes SET status = $2, http_status = $3, calls = calls + $4, error = $5, finished_at = now()
       WHERE idempotency_key = $1`,
      [key, status, httpStatus, calls, error],
    );
  }

  async listPushes(bookingId: string): Promise<Push[]> {
    return this.db.query<Push>('SELECT * FROM adserver_pushes WHERE booking_id = $1 ORDER BY created_at', [
      bookingId,
    ]);
  }

  /** Stores the ids the ad server issued and marks `revision` as pushed. */
  async recordPushed(
    bookingId: string,
    revision: number,
    orderId: string,
    lineIds: Map<string, string>,
  ): Promise<void> {
    await this.db.query(
      `UPDATE adserver_bookings SET order_id = $2, pushed_revision = $3, last_push_error = NULL, updated_at = now() WHERE id = $1`,
      [bookingId, orderId, revision],
    );
    await this.db.query(
      `UPDATE adserver_booking_lines l SET line_item_id = m.line_item_id
       FROM jsonb_each_text($2::jsonb) AS m(external_ref, line_item_id)
       WHERE l.booking_id = $1 AND l.external_ref = m.external_ref`,
      [bookingId, JSON.stringify(Object.fromEntries(lineIds))],
    );
  }

  async recordPushError(bookingId: string, error: string): Promise<void> {
    await this.db.query(
      'UPDATE adserver_bookings SET last_push_error = $2, updated_at = now() WHERE id = $1',
      [bookingId, error],
    );
  }
}
