import type { Queryable } from '../../db/index.ts';
import type { Booking, BookingLine, BookingSummary } from './orders.ts';
import type {
  Capability,
  Environment,
  Placement,
  ProbeState,
  Push,
  Slot,
  StoredConnection,
} from './types.ts';

const dateText = (d: Date | string): string =>
  typeof d === 'string' ? d.slice(0, 10) : d.toISOString().slice(0, 10);

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

interface ConnectionRow {
  id: string;
  publisher: string;
  environment: Environment;
  base_url: string;
  api_key_sealed: string;
  account_id: string | null;
  account_name: string | null;
  timezone: string | null;
  currency: string | null;
  forecast_declared: boolean | null;
  cap_inventory_read: 'confirmed' | 'not_verified';
  cap_forecast: 'confirmed' | 'not_verified';
  cap_reporting: 'confirmed' | 'not_verified';
  cap_draft_booking: 'confirmed' | 'not_verified';
  status: 'connected' | 'error';
  state: ProbeState;
  last_error: string | null;
  verified_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

function toConnection(r: ConnectionRow): StoredConnection {
  return {
    id: r.id,
    publisher: r.publisher,
    environment: r.environment,
    base_url: r.base_url,
    account_id: r.account_id,
    account_name: r.account_name,
    timezone: r.timezone,
    currency: r.currency,
    forecast_declared: r.forecast_declared,
    capabilities: {
      inventory_read: r.cap_inventory_read,
      forecast: r.cap_forecast,
      reporting: r.cap_reporting,
      draft_booking: r.cap_draft_booking,
    },
    status: r.status,
    state: r.state,
    last_error: r.last_error,
    verified_at: iso(r.verified_at),
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
    apiKeySealed: r.api_key_sealed,
  };
}

/** What a verify probe found, written in one statement. */
export interface ProbeRecord {
  state: ProbeState;
  status: 'connected' | 'error';
  lastError: string | null;
  account?: {
    account_id: string;
    account_name: string | null;
    timezone: string;
    currency: string;
    forecast: boolean;
  };
  inventoryRead?: 'confirmed' | 'not_verified';
}

/** The only place with ad-server SQL (connections, inventory, placements). */
export class AdserverRepository {
  constructor(private readonly db: Queryable) {}

  with(q: Queryable): AdserverRepository {
    return new AdserverRepository(q);
  }

  /* Connections */

  async insertConnection(c: {
    id: string;
    publisher: string;
    environment: Environment;
    baseUrl: string;
    sealed: string;
  }): Promise<void> {
    await this.db.query(
      `INSERT INTO adserver_connections (id, publisher, environment, base_url, api_key_sealed)
       VALUES ($1, $2, $3, $4, $5)`,
      [c.id, c.publisher, c.environment, c.baseUrl, c.sealed],
    );
  }

  async getConnection(id: string): Promise<StoredConnection | undefined> {
    const [r] = await this.db.query<ConnectionRow>('SELECT * FROM adserver_connections WHERE id = $1', [id]);
    return r && toConnection(r);
  }

  async listConnections(publisher?: string): Promise<StoredConnection[]> {
    const rows = await this.db.query<ConnectionRow>(
      `SELECT * FROM adserver_connections WHERE ($1::text IS NULL OR publisher = $1)
       ORDER BY publisher, environment`,
      [publisher ?? null],
    );
    return rows.map(toConnection);
  }

  async updateEndpoint(id: string, baseUrl: string | undefined, sealed: string | undefined): Promise<void> {
    await this.db.query(
      `UPDATE adserver_connections SET base_url = COALESCE($2, base_url),
         api_key_sealed = COALESCE($3, api_key_sealed), updated_at = now() WHERE id = $1`,
      [id, baseUrl ?? null, sealed ?? null],
    );
  }

  async setSealedKey(id: string, sealed: string): Promise<void> {
    await this.db.query('UPDATE adserver_connections SET api_key_sealed = $2 WHERE id = $1', [id, sealed]);
  }

  async recordProbe(id: string, p: ProbeRecord): Promise<void> {
    const a = p.account;
    await this.db.query(
      `UPDATE adserver_connections SET state = $2, status = $3, last_error = $4, verified_at = now(), updated_at = now(),
         account_id = COALESCE($5, account_id), account_name = CASE WHEN $5::text IS NULL THEN account_name ELSE $6 END,
         timezone = COALESCE($7, timezone), currency = COALESCE($8, currency),
         forecast_declared = COALESCE($9, forecast_declared),
         cap_inventory_read = COALESCE($10, cap_inventory_read)
       WHERE id = $1`,
      [
        id,
        p.state,
        p.status,
        p.lastError,
        a?.account_id ?? null,
        a?.account_name ?? null,
        a?.timezone ?? null,
        a?.currency ?? null,
        a?.forecast ?? null,
        p.inventoryRead ?? null,
      ],
    );
  }

  /** A later call was refused (401/403): the connection is in error until re-verified. */
  /** Puts the connection in error with the state the operator sees (auth failures, failing pulls). */
  async markError(id: string, state: ProbeState, lastError: string): Promise<void> {
    await this.db.query(
      `UPDATE adserver_connections SET status = 'error', state = $2, last_error = $3, updated_at = now() WHERE id = $1`,
      [id, state, lastError],
    );
  }

  async confirmCapability(id: string, cap: Capability): Promise<void> {
    const column = {
      inventory_read: 'cap_inventory_read',
      forecast: 'cap_forecast',
      reporting: 'cap_reporting',
      draft_booking: 'cap_draft_booking',
    }[cap];
    await this.db.query(
      `UPDATE adserver_connections SET ${column} = 'confirmed', updated_at = now() WHERE id = $1 AND ${column} <> 'confirmed'`,
      [id],
    );
  }

  /* Inventory */

  async upsertSlots(
    connectionId: string,
    slots: Omit<Slot, 'seen_at'>[],
    seenAt: Date,
  ): Promise<{ added: number }> {
    if (!slots.length) return { added: 0 };
    const rows = await this.db.query<{ inserted: boolean }>(
      `INSERT INTO adserver_inventory (connection_id, inventory_id, name, sizes, format, status, seen_at)
       SELECT $1, s.inventory_id, s.name, ARRAY(SELECT jsonb_array_elements_text(s.sizes)), s.format, s.status, $3
       FROM jsonb_to_recordset($2::jsonb) AS s(inventory_id text, name text, sizes jsonb, format text, status text)
       ON CONFLICT (connection_id, inventory_id) DO UPDATE SET name = EXCLUDED.name, sizes = EXCLUDED.sizes,
         format = EXCLUDED.format, status = EXCLUDED.status, seen_at = EXCLUDED.seen_at
       RETURNING (xmax = 0) AS inserted`,
      [connectionId, JSON.stringify(slots), seenAt],
    );
    return { added: rows.filter((r) => r.inserted).length };
  }

  async recordSync(
    connectionId: string,
    ok: boolean,
    pages: number,
    slots: number,
    problems: string[],
  ): Promise<void> {
    await this.db.query(
      'INSERT INTO adserver_syncs (connection_id, ok, pages, slots, problems) VALUES ($1, $2, $3, $4, $5)',
      [connectionId, ok, pages, slots, JSON.stringify(problems)],
    );
  }

  async listSlots(connectionId: string): Promise<Slot[]> {
    const rows = await this.db.query<Slot & { seen_at: Date }>(
      `SELECT inventory_id, name, sizes, format, status, seen_at FROM adserver_inventory
       WHERE connection_id = $1 ORDER BY inventory_id`,
      [connectionId],
    );
    return rows.map((r) => ({ ...r, seen_at: iso(r.seen_at)! }));
  }

  async getSlot(connectionId: string, inventoryId: string): Promise<Slot | undefined> {
    const [r] = await this.db.query<Slot & { seen_at: Date }>(
      `SELECT inventory_id, name, sizes, format, status, seen_at FROM adserver_inventory
       WHERE connection_id = $1 AND inventory_id = $2`,
      [connectionId, inventoryId],
    );
    return r && { ...r, seen_at: iso(r.seen_at)! };
  }

  /* Placements */

  async insertPlacement(publisher: string, name: string, sizes: string[]): Promise<number> {
    const [r] = await this.db.query<{ id: number }>(
      'INSERT INTO adserver_placements (publisher, name, sizes) VALUES ($1, $2, $3) RETURNING id',
      [publisher, name, sizes],
    );
    return r!.id;
  }

  async getPlacement(id: number): Promise<Placement | undefined> {
    return (await this.placements('p.id = $1', [id]))[0];
  }

  async listPlacements(publisher?: string): Promise<Placement[]> {
    return this.placements('($1::text IS NULL OR p.publisher = $1)', [publisher ?? null]);
  }

  private async placements(where: string, params: unknown[]): Promise<Placement[]> {
    const rows = await this.db.query<{
      id: number;
      publisher: string;
      name: string;
      sizes: string[];
      slots: Record<string, string> | null;
    }>(
      `SELECT p.id, p.publisher, p.name, p.sizes,
         (SELECT jsonb_object_agg(s.connection_id, s.inventory_id) FROM adserver_placement_slots s
          WHERE s.placement_id = p.id) AS slots
       FROM adserver_placements p WHERE ${where} ORDER BY p.id`,
      params,
    );
    return rows.map((r) => ({ ...r, slots: r.slots ?? {} }));
  }

  async mapPlacement(placementId: number, connectionId: string, inventoryId: string): Promise<void> {
    await this.db.query(
      `INSERT INTO adserver_placement_slots (placement_id, connection_id, inventory_id) VALUES ($1, $2, $3)
       ON CONFLICT (placement_id, connection_id) DO UPDATE SET inventory_id = EXCLUDED.inventory_id, mapped_at = now()`,
      [placementId, connectionId, inventoryId],
    );
  }

  async unmapPlacement(placementId: number, connectionId: string): Promise<boolean> {
    const rows = await this.db.query(
      'DELETE FROM adserver_placement_slots WHERE placement_id = $1 AND connection_id = $2 RETURNING placement_id',
      [placementId, connectionId],
    );
    return rows.length > 0;
  }

  /* Bookings */

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
         month, start_date, end_date, geo, goal_impressions, sizes, creatives, click_codes, impression_codes)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
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
        l.geo,
        l.goal_impressions,
        l.sizes,
        JSON.stringify(l.creatives),
        l.click_codes,
        l.impression_codes,
      ],
    );
  }

  async updateLine(bookingId: string, l: BookingLine): Promise<void> {
    await this.db.query(
      `UPDATE adserver_booking_lines SET geo = $3, goal_impressions = $4, creatives = $5, click_codes = $6,
         impression_codes = $7 WHERE booking_id = $1 AND line_no = $2`,
      [
        bookingId,
        l.line_no,
        l.geo,
        l.goal_impressions,
        JSON.stringify(l.creatives),
        l.click_codes,
        l.impression_codes,
      ],
    );
  }

  /** Moves the booking to its next revision (a change the ad server has not seen yet). */
  async bumpRevision(bookingId: string): Promise<void> {
    await this.db.query(
      'UPDATE adserver_bookings SET revision = revision + 1, updated_at = now() WHERE id = $1',
      [bookingId],
    );
  }

  /** Every booking, newest first, without its lines (the console's list); one connection's when given. */
  async listBookings(connectionId?: string): Promise<BookingSummary[]> {
    const rows = await this.db.query<
      Omit<BookingSummary, 'created_at'> & { created_at: Date; lines: number }
    >(
      `SELECT b.id, b.connection_id, c.publisher, b.external_ref, b.advertiser_name, b.campaign_name, b.currency,
              b.revision, b.pushed_revision, b.order_id, b.last_push_error, b.created_at,
              (SELECT count(*)::int FROM adserver_booking_lines l WHERE l.booking_id = b.id) AS lines
         FROM adserver_bookings b JOIN adserver_connections c ON c.id = b.connection_id
        WHERE $1::text IS NULL OR b.connection_id = $1
        ORDER BY b.created_at DESC, b.id DESC`,
      [connectionId ?? null],
    );
    return rows.map((r) => ({ ...r, lines: Number(r.lines), created_at: iso(r.created_at)! }));
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

  /* Delivery */

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
