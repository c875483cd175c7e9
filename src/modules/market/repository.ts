import type { Queryable } from '../../db/index.ts';
import { isoOrNull as iso } from '../../lib/time.ts';
import type {
  Advertiser,
  Availability,
  CapacitySource,
  Contact,
  NoticeKind,
  NoticeOutcome,
  NoticeRow,
  Pricing,
  Product,
  Reservation,
  ReservationEvent,
  ReservationLine,
  ReservationStatus,
  ReservationSummary,
} from './types.ts';

/** A product x geo x month: the key of one capacity row. */
export interface CapacityKey {
  product_id: string;
  geo: string;
  month: string;
}

/** A figure to store on a capacity row (from a forecast, the listed figure, or "no forecast"). */
export interface Figure {
  source: Exclude<CapacitySource, 'pending'>;
  available: number | null;
  forecasted: number | null;
}

export interface NewLine extends CapacityKey {
  line_no: number;
  impressions: number;
  pricing: Pricing;
  price: string;
}

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

const PRODUCT_SELECT = `SELECT p.id, p.connection_id, c.publisher, p.placement_id, s.inventory_id, pl.site_id, p.name,
         pl.sizes, p.geos, p.first_month, p.last_month, p.pricing, p.price::text AS price, p.currency, p.status,
         p.created_at, p.updated_at
    FROM market_products p
    JOIN adserver_connections c ON c.id = p.connection_id
    JOIN adserver_placements pl ON pl.id = p.placement_id
    LEFT JOIN adserver_placement_slots s ON s.placement_id = p.placement_id AND s.connection_id = p.connection_id`;

function productRow(r: Record<string, unknown>): Product {
  return {
    ...(r as unknown as Product),
    inventory_id: (r.inventory_id as string | null) ?? '',
    created_at: iso(r.created_at as Date)!,
    updated_at: iso(r.updated_at as Date)!,
  };
}

function advertiserRow(r: Record<string, unknown>): Advertiser {
  return {
    id: r.id as string,
    publisher: r.publisher as string,
    name: r.name as string,
    currency: r.currency as string,
    contacts: r.contacts as Contact[],
    created_at: iso(r.created_at as Date)!,
    updated_at: iso(r.updated_at as Date)!,
  };
}

/** Capacity rows as the API shows them, with their remaining figure and age at `now`. */
function availabilityRow(r: Record<string, unknown>, now: Date): Availability {
  const available = num(r.available);
  const held = Number(r.held);
  const booked = Number(r.booked);
  const remaining = available === null ? null : available - held - booked;
  const fetched = r.fetched_at ? new Date(r.fetched_at as Date) : null;
  return {
    product_id: r.product_id as string,
    geo: r.geo as string,
    month: r.month as string,
    source: r.source as CapacitySource,
    available,
    forecasted: num(r.forecasted),
    listed: num(r.listed),
    held,
    booked,
    remaining,
    at_risk: remaining !== null && remaining < 0,
    fetched_at: iso(fetched),
    age_seconds: fetched ? Math.max(0, Math.floor((now.getTime() - fetched.getTime()) / 1000)) : null,
    last_error: (r.last_error as string | null) ?? null,
  };
}

/** Marketplace SQL: advertisers, products, capacity rows, reservations and their timeline. */
/** The columns of a `market_reservations` row as a reservation shows them. */
const reservationColumns = (r: Record<string, unknown>) => ({
  id: r.id as string,
  advertiser_id: r.advertiser_id as string,
  connection_id: r.connection_id as string,
  campaign_name: r.campaign_name as string,
  currency: r.currency as string,
  status: r.status as ReservationStatus,
  expires_at: iso(r.expires_at as Date)!,
  booking_id: (r.booking_id as string | null) ?? null,
  reason: (r.reason as string | null) ?? null,
  last_error: (r.last_error as string | null) ?? null,
  created_at: iso(r.created_at as Date)!,
  updated_at: iso(r.updated_at as Date)!,
});

export class MarketRepository {
  constructor(private readonly db: Queryable) {}

  with(q: Queryable): MarketRepository {
    return new MarketRepository(q);
  }

  /* Advertisers */

  async insertAdvertiser(
    a: Pick<Advertiser, 'id' | 'publisher' | 'name' | 'currency' | 'contacts'>,
  ): Promise<void> {
    await this.db.query(
      'INSERT INTO market_advertisers (id, publisher, name, currency, contacts) VALUES ($1, $2, $3, $4, $5)',
      [a.id, a.publisher, a.name, a.currency, JSON.stringify(a.contacts)],
    );
  }

  async updateAdvertiser(id: string, patch: { name?: string; contacts?: Contact[] }): Promise<void> {
    await this.db.query(
      `UPDATE market_advertisers SET name = coalesce($2, name), contacts = coalesce($3::jsonb, contacts), updated_at = now()
       WHERE id = $1`,
      [id, patch.name ?? null, patch.contacts ? JSON.stringify(patch.contacts) : null],
    );
  }

  async getAdvertiser(id: string): Promise<Advertiser | undefined> {
    const [r] = await this.db.query<Record<string, unknown>>(
      'SELECT * FROM market_advertisers WHERE id = $1',
      [id],
    );
    return r ? advertiserRow(r) : undefined;
  }

  /** Advertisers by name; one publisher's when given. At most `limit`. */
  async listAdvertisers(publisher: string | undefined, limit: number): Promise<Advertiser[]> {
    const rows = await this.db.query<Record<string, unknown>>(
      `SELECT * FROM market_advertisers WHERE $1::text IS NULL OR publisher = $1 ORDER BY name, id LIMIT $2`,
      [publisher ?? null, limit],
    );
    return rows.map(advertiserRow);
  }

  /** The currency of the publisher's connections that have reported one (production first). */
  async publisherCurrency(publisher: string): Promise<string | undefined> {
    const [r] = await this.db.query<{ currency: string }>(
      `SELECT currency FROM adserver_connections WHERE publisher = $1 AND currency IS NOT NULL
        ORDER BY environment = 'production' DESC LIMIT 1`,
      [publisher],
    );
    return r?.currency;
  }

  /* Products */

  async insertProduct(p: {
    id: string;
    connection_id: string;
    placement_id: number;
    name: string;
    geos: string[];
    first_month: string;
    last_month: string;
    pricing: Pricing;
    price: string;
    currency: string;
  }): Promise<void> {
    await this.db.query(
      `INSERT INTO market_products (id, connection_id, placement_id, name, geos, first_month, last_month, pricing, price, currency)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::numeric, $10)`,
      [
        p.id,
        p.connection_id,
        p.placement_id,
        p.name,
        p.geos,
        p.first_month,
        p.last_month,
        p.pricing,
        p.price,
        p.currency,
      ],
    );
  }

  async updateProduct(
    id: string,
    p: Pick<Product, 'name' | 'geos' | 'first_month' | 'last_month' | 'pricing' | 'price' | 'status'>,
  ): Promise<void> {
    await this.db.query(
      `UPDATE market_products SET name = $2, geos = $3, first_month = $4, last_month = $5, pricing = $6, price = $7::numeric,
         status = $8, updated_at = now() WHERE id = $1`,
      [id, p.name, p.geos, p.first_month, p.last_month, p.pricing, p.price, p.status],
    );
  }

  async getProduct(id: string): Promise<Product | undefined> {
    const [r] = await this.db.query<Record<string, unknown>>(`${PRODUCT_SELECT} WHERE p.id = $1`, [id]);
    return r ? productRow(r) : undefined;
  }

  async listProducts(connectionId: string | undefined, limit: number): Promise<Product[]> {
    const rows = await this.db.query<Record<string, unknown>>(
      `${PRODUCT_SELECT} WHERE $1::text IS NULL OR p.connection_id = $1 ORDER BY p.name, p.id LIMIT $2`,
      [connectionId ?? null, limit],
    );
    return rows.map(productRow);
  }

  /* Capacity */

  /** Creates the row of a key that has none yet (pending, nothing held). */
  async ensureCapacity(k: CapacityKey): Promise<void> {
    await this.db.query(
      'INSERT INTO market_capacity (product_id, geo, month) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
      [k.product_id, k.geo, k.month],
    );
  }

  async getCapacity(k: CapacityKey, now: Date, lock = false): Promise<Availability | undefined> {
    const [r] = await this.db.query<Record<string, unknown>>(
      `SELECT * FROM market_capacity WHERE product_id = $1 AND geo = $2 AND month = $3${lock ? ' FOR UPDATE' : ''}`,
      [k.product_id, k.geo, k.month],
    );
    return r ? availabilityRow(r, now) : undefined;
  }

  /** A product's capacity rows, optionally of one month and/or geo. */
  async listCapacity(productId: string, now: Date, month?: string, geo?: string): Promise<Availability[]> {
    const rows = await this.db.query<Record<string, unknown>>(
      `SELECT * FROM market_capacity WHERE product_id = $1 AND ($2::text IS NULL OR month = $2)
         AND ($3::text IS NULL OR geo = $3) ORDER BY month, geo`,
      [productId, month ?? null, geo ?? null],
    );
    return rows.map((r) => availabilityRow(r, now));
  }

  /**
   * Stores a new figure. A forecast counts the lines the ad server already holds, so what was
   * booked before it is no longer subtracted on top (`booked` restarts); a listed figure is a
   * total, so bookings keep counting against it.
   */
  async setFigure(k: CapacityKey, f: Figure, at: Date): Promise<void> {
    await this.db.query(
      `UPDATE market_capacity SET source = $4, available = $5, forecasted = $6, fetched_at = $7, last_error = NULL,
         booked = CASE WHEN $4 = 'forecast' THEN 0 ELSE booked END
       WHERE product_id = $1 AND geo = $2 AND month = $3`,
      [k.product_id, k.geo, k.month, f.source, f.available, f.forecasted, at],
    );
  }

  /** Records a failed fetch; the last figure, if any, stays in use with its age. */
  async setFigureError(k: CapacityKey, error: string): Promise<void> {
    await this.db.query(
      'UPDATE market_capacity SET last_error = $4 WHERE product_id = $1 AND geo = $2 AND month = $3',
      [k.product_id, k.geo, k.month, error.slice(0, 2000)],
    );
  }

  async setListed(k: CapacityKey, impressions: number): Promise<void> {
    await this.db.query(
      'UPDATE market_capacity SET listed = $4 WHERE product_id = $1 AND geo = $2 AND month = $3',
      [k.product_id, k.geo, k.month, impressions],
    );
  }

  /**
   * Holds `n` impressions in one statement: the row is locked by the UPDATE, and its condition is
   * evaluated again on the committed row after any wait, so concurrent holds (from any process)
   * never take more than the figure. Returns false when the figure has no room (or is not known).
   */
  async hold(k: CapacityKey, n: number): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE market_capacity SET held = held + $4
        WHERE product_id = $1 AND geo = $2 AND month = $3
          AND (source = 'none' OR (available IS NOT NULL AND source <> 'pending' AND available - held - booked >= $4))
       RETURNING 1`,
      [k.product_id, k.geo, k.month, n],
    );
    return rows.length === 1;
  }

  /** Sets the impressions of one reservation line (its hold is changed by the caller, same transaction). */
  async setLineImpressions(reservationId: string, lineNo: number, impressions: number): Promise<void> {
    await this.db.query(
      'UPDATE market_reservation_lines SET impressions = $3 WHERE reservation_id = $1 AND line_no = $2',
      [reservationId, lineNo, impressions],
    );
  }

  /** Gives held impressions back; `toBooked` moves them to booked instead. */
  async release(k: CapacityKey, n: number, toBooked: boolean): Promise<void> {
    await this.db.query(
      `UPDATE market_capacity SET held = held - $4, booked = booked + CASE WHEN $5 THEN $4 ELSE 0 END
        WHERE product_id = $1 AND geo = $2 AND month = $3`,
      [k.product_id, k.geo, k.month, n, toBooked],
    );
  }

  /** Forecast rows of months not over whose figure is older than `before` (oldest first), for the refresh job. */
  async staleForecasts(before: Date, fromMonth: string, limit: number): Promise<CapacityKey[]> {
    return this.db.query<CapacityKey>(
      `SELECT m.product_id, m.geo, m.month FROM market_capacity m
         JOIN market_products p ON p.id = m.product_id
        WHERE m.source IN ('forecast', 'pending') AND m.month >= $2 AND p.status = 'active'
          AND (m.fetched_at IS NULL OR m.fetched_at < $1)
        ORDER BY m.fetched_at NULLS FIRST LIMIT $3`,
      [before, fromMonth, limit],
    );
  }

  /** Reservations holding impressions on a key (their lines are at risk when the figure drops). */
  async holdersOf(k: CapacityKey): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      `SELECT DISTINCT r.id FROM market_reservations r JOIN market_reservation_lines l ON l.reservation_id = r.id
        WHERE l.product_id = $1 AND l.geo = $2 AND l.month = $3 AND r.status IN ('held', 'approving')`,
      [k.product_id, k.geo, k.month],
    );
    return rows.map((r) => r.id);
  }

  /* Reservations */

  async insertReservation(r: {
    id: string;
    advertiser_id: string;
    connection_id: string;
    campaign_name: string;
    currency: string;
    expires_at: Date;
    at: Date;
    lines: NewLine[];
  }): Promise<void> {
    await this.db.query(
      `INSERT INTO market_reservations (id, advertiser_id, connection_id, campaign_name, currency, status, expires_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, 'held', $6, $7, $7)`,
      [r.id, r.advertiser_id, r.connection_id, r.campaign_name, r.currency, r.expires_at, r.at],
    );
    for (const l of r.lines)
      await this.db.query(
        `INSERT INTO market_reservation_lines (reservation_id, line_no, product_id, geo, month, impressions, pricing, price)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::numeric)`,
        [r.id, l.line_no, l.product_id, l.geo, l.month, l.impressions, l.pricing, l.price],
      );
  }

  async getReservationRow(
    id: string,
    lock = false,
  ): Promise<
    (Omit<Reservation, 'lines' | 'events' | 'order_id'> & { approving_since: string | null }) | undefined
  > {
    const [r] = await this.db.query<Record<string, unknown>>(
      `SELECT * FROM market_reservations WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
      [id],
    );
    if (!r) return undefined;
    return { ...reservationColumns(r), approving_since: iso(r.approving_since as Date | null) };
  }

  /** A reservation's lines with their at-risk flag and, once booked, the ad server's line item id. */
  async linesOf(id: string): Promise<ReservationLine[]> {
    const rows = await this.db.query<Record<string, unknown>>(
      `SELECT l.line_no, l.product_id, l.geo, l.month, l.impressions, l.pricing, l.price::text AS price,
              (c.available IS NOT NULL AND c.available - c.held - c.booked < 0 AND r.status IN ('held', 'approving')) AS at_risk,
              bl.line_item_id
         FROM market_reservation_lines l
         JOIN market_reservations r ON r.id = l.reservation_id
         JOIN market_capacity c ON c.product_id = l.product_id AND c.geo = l.geo AND c.month = l.month
         LEFT JOIN adserver_booking_lines bl ON bl.booking_id = r.booking_id AND bl.line_no = l.line_no
        WHERE l.reservation_id = $1 ORDER BY l.line_no`,
      [id],
    );
    return rows.map((r) => ({
      line_no: r.line_no as number,
      product_id: r.product_id as string,
      geo: r.geo as string,
      month: r.month as string,
      impressions: Number(r.impressions),
      pricing: r.pricing as Pricing,
      price: r.price as string,
      at_risk: r.at_risk === true,
      line_item_id: (r.line_item_id as string | null) ?? null,
    }));
  }

  async eventsOf(id: string): Promise<ReservationEvent[]> {
    const rows = await this.db.query<Record<string, unknown>>(
      'SELECT at, kind, actor, detail FROM market_reservation_events WHERE reservation_id = $1 ORDER BY id LIMIT 1000',
      [id],
    );
    return rows.map((r) => ({
      at: iso(r.at as Date)!,
      kind: r.kind as string,
      actor: r.actor as string,
      detail: r.detail as Record<string, unknown>,
    }));
  }

  async orderIdOf(bookingId: string | null): Promise<string | null> {
    if (!bookingId) return null;
    const [r] = await this.db.query<{ order_id: string | null }>(
      'SELECT order_id FROM adserver_bookings WHERE id = $1',
      [bookingId],
    );
    return r?.order_id ?? null;
  }

  /** The booking made for a reservation (its campaign external_ref is the reservation id), if one exists. */
  async bookingMadeFor(connectionId: string, reservationId: string): Promise<string | undefined> {
    const [r] = await this.db.query<{ id: string }>(
      'SELECT id FROM adserver_bookings WHERE connection_id = $1 AND external_ref = $2',
      [connectionId, reservationId],
    );
    return r?.id;
  }

  async listReservations(
    filter: { status?: ReservationStatus; advertiser_id?: string },
    limit: number,
  ): Promise<ReservationSummary[]> {
    const rows = await this.db.query<Record<string, unknown>>(
      `SELECT r.*, b.order_id,
              (SELECT count(*)::int FROM market_reservation_lines l WHERE l.reservation_id = r.id) AS line_count,
              (SELECT coalesce(sum(l.impressions), 0)::bigint FROM market_reservation_lines l WHERE l.reservation_id = r.id) AS impressions
         FROM market_reservations r LEFT JOIN adserver_bookings b ON b.id = r.booking_id
        WHERE ($1::text IS NULL OR r.status = $1) AND ($2::text IS NULL OR r.advertiser_id = $2)
        ORDER BY r.created_at DESC, r.id DESC LIMIT $3`,
      [filter.status ?? null, filter.advertiser_id ?? null, limit],
    );
    return rows.map((r) => ({
      ...reservationColumns(r),
      order_id: (r.order_id as string | null) ?? null,
      lines: Number(r.line_count),
      impressions: Number(r.impressions),
    }));
  }

  async setStatus(
    id: string,
    status: ReservationStatus,
    at: Date,
    extra: {
      reason?: string;
      last_error?: string | null;
      approving_since?: Date | null;
      booking_id?: string;
    } = {},
  ): Promise<void> {
    await this.db.query(
      `UPDATE market_reservations SET status = $2, updated_at = $3,
         reason = coalesce($4, reason),
         last_error = CASE WHEN $5::boolean THEN $6 ELSE last_error END,
         approving_since = CASE WHEN $7::boolean THEN $8::timestamptz ELSE approving_since END,
         booking_id = coalesce($9, booking_id)
       WHERE id = $1`,
      [
        id,
        status,
        at,
        extra.reason ?? null,
        extra.last_error !== undefined,
        extra.last_error ?? null,
        extra.approving_since !== undefined,
        extra.approving_since ?? null,
        extra.booking_id ?? null,
      ],
    );
  }

  async setBooking(id: string, bookingId: string): Promise<void> {
    await this.db.query('UPDATE market_reservations SET booking_id = $2 WHERE id = $1', [id, bookingId]);
  }

  /** Held reservations whose hold ended at `now`, locked and skipped by other expiring processes. */
  async dueHolds(now: Date, limit: number): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      `SELECT id FROM market_reservations WHERE status = 'held' AND expires_at <= $1
        ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [now, limit],
    );
    return rows.map((r) => r.id);
  }

  async addEvent(
    id: string,
    at: Date,
    kind: string,
    actor: string,
    detail: Record<string, unknown> = {},
  ): Promise<void> {
    await this.db.query(
      'INSERT INTO market_reservation_events (reservation_id, at, kind, actor, detail) VALUES ($1, $2, $3, $4, $5)',
      [id, at, kind, actor, JSON.stringify(detail)],
    );
  }
  /* Notices to the advertiser */

  /** The sites a reservation books (its products' placements); null for a placement of no site. */
  async sitesOf(id: string): Promise<(number | null)[]> {
    const rows = await this.db.query<{ site_id: number | null }>(
      `SELECT DISTINCT p.site_id FROM market_reservation_lines l
         JOIN market_products mp ON mp.id = l.product_id
         JOIN adserver_placements p ON p.id = mp.placement_id
        WHERE l.reservation_id = $1 ORDER BY p.site_id`,
      [id],
    );
    return rows.map((r) => r.site_id);
  }

  /** Owes the advertiser a notice of `kind` (once per reservation and kind), due at once. */
  async insertNotice(id: string, kind: NoticeKind, at: Date): Promise<void> {
    await this.db.query(
      `INSERT INTO market_notices (reservation_id, kind, created_at, due_at) VALUES ($1, $2, $3, $3)
       ON CONFLICT (reservation_id, kind) DO NOTHING`,
      [id, kind, at],
    );
  }

  /**
   * Takes up to `limit` due notices for this sender: each is leased until `leaseUntil` (another
   * process skips it until then) and its attempt counted before anything is sent.
   */
  async claimNotices(at: Date, leaseUntil: Date, limit: number): Promise<NoticeRow[]> {
    return this.db.query<NoticeRow>(
      `UPDATE market_notices SET due_at = $2, attempts = attempts + 1
        WHERE id IN (SELECT id FROM market_notices WHERE done_at IS NULL AND due_at <= $1
                      ORDER BY due_at, id LIMIT $3 FOR UPDATE SKIP LOCKED)
        RETURNING id::int AS id, reservation_id, kind, attempts`,
      [at, leaseUntil, limit],
    );
  }

  /** Closes a notice with its outcome. */
  async finishNotice(id: number, at: Date, outcome: NoticeOutcome, error: string | null): Promise<void> {
    await this.db.query(
      'UPDATE market_notices SET done_at = $2, outcome = $3, last_error = $4 WHERE id = $1',
      [id, at, outcome, error],
    );
  }

  /** Leaves a notice to be tried again at `dueAt`, keeping the error. */
  async retryNotice(id: number, dueAt: Date, error: string): Promise<void> {
    await this.db.query('UPDATE market_notices SET due_at = $2, last_error = $3 WHERE id = $1', [
      id,
      dueAt,
      error,
    ]);
  }
}
