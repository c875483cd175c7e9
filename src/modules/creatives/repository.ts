import type { CreativeFormat } from '../../config.ts';
import type { Queryable } from '../../db/index.ts';
import { isoOrNull as iso } from '../../lib/time.ts';

export type CreativeStatus = 'pending' | 'approving' | 'approved' | 'rejected' | 'replaced';

/** A creative row as stored (the service adds its URL). */
export interface CreativeRow {
  id: string;
  /** The booking line it is for; null while its reservation line awaits approval. */
  booking_id: string | null;
  line_no: number | null;
  /** The reservation line it was uploaded for before approval (kept once attached to the booking). */
  reservation_id: string | null;
  reservation_line_no: number | null;
  /** The buyer's creative_id when the sales agent synced it. */
  buyer_creative_id: string | null;
  sha256: string;
  format: CreativeFormat;
  bytes: number;
  width: number;
  height: number;
  name: string;
  landing_url: string;
  status: CreativeStatus;
  reason: string | null;
  uploaded_by: string;
  decided_by: string | null;
  decided_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface CreativeFilter {
  status?: CreativeStatus;
  booking_id?: string;
  reservation_id?: string;
  /** Of any of these reservations (the sales agent's media buys). */
  reservation_ids?: readonly string[];
  limit: number;
}

/** The line a creative is for: a booking line, or a reservation line awaiting approval. */
export type LineRef =
  | { booking_id: string; line_no: number; reservation_id?: undefined }
  | { reservation_id: string; reservation_line_no: number; booking_id?: undefined };

/** A reservation line as creatives need it: its reservation's state and booking, and its product's sizes. */
export interface ReservationLineInfo {
  status: string;
  booking_id: string | null;
  advertiser_id: string;
  sizes: string[];
}

/** `column = $n` conditions of a line, the placeholders starting at `from`. */
function lineWhere(ref: LineRef, from: number): { sql: string; params: unknown[] } {
  return ref.booking_id !== undefined
    ? { sql: `booking_id = $${from} AND line_no = $${from + 1}`, params: [ref.booking_id, ref.line_no] }
    : {
        sql: `reservation_id = $${from} AND reservation_line_no = $${from + 1} AND booking_id IS NULL`,
        params: [ref.reservation_id, ref.reservation_line_no],
      };
}

/** A queued follow-up push of a booking whose line a creative approval changed. */
export interface Followup {
  booking_id: string;
  queued_at: string;
  attempts: number;
  last_error: string | null;
}

type Raw = Omit<CreativeRow, 'decided_at' | 'created_at' | 'updated_at'> & {
  decided_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

const row = (r: Raw): CreativeRow => ({
  ...r,
  sha256: r.sha256.trim(),
  decided_at: iso(r.decided_at),
  created_at: iso(r.created_at)!,
  updated_at: iso(r.updated_at)!,
});

/** SQL of creatives, their stored bytes (database store) and the follow-up push queue. */
export class CreativeRepository {
  constructor(private readonly db: Queryable) {}

  with(q: Queryable): CreativeRepository {
    return new CreativeRepository(q);
  }

  /** Stores the bytes of a hash once (a second upload of the same image writes nothing). */
  async putBlob(sha256: string, bytes: Buffer): Promise<void> {
    await this.db.query(
      'INSERT INTO creative_blobs (sha256, content) VALUES ($1, $2) ON CONFLICT (sha256) DO NOTHING',
      [sha256, bytes],
    );
  }

  async getBlob(sha256: string): Promise<Buffer | undefined> {
    const [r] = await this.db.query<{ content: Uint8Array }>(
      'SELECT content FROM creative_blobs WHERE sha256 = $1',
      [sha256],
    );
    return r ? Buffer.from(r.content) : undefined;
  }

  async insert(
    c: Omit<CreativeRow, 'status' | 'reason' | 'decided_by' | 'decided_at' | 'created_at' | 'updated_at'>,
  ) {
    await this.db.query(
      `INSERT INTO creatives (id, booking_id, line_no, reservation_id, reservation_line_no, buyer_creative_id,
                              sha256, format, bytes, width, height, name, landing_url, uploaded_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
      [
        c.id,
        c.booking_id,
        c.line_no,
        c.reservation_id,
        c.reservation_line_no,
        c.buyer_creative_id,
        c.sha256,
        c.format,
        c.bytes,
        c.width,
        c.height,
        c.name,
        c.landing_url,
        c.uploaded_by,
      ],
    );
  }

  async get(id: string, lock = false): Promise<CreativeRow | undefined> {
    const [r] = await this.db.query<Raw>(
      `SELECT * FROM creatives WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
      [id],
    );
    return r && row(r);
  }

  /** The line's pending or approved creative with these bytes and landing page, if any (an upload repeated). */
  async same(ref: LineRef, sha256: string, landingUrl: string): Promise<CreativeRow | undefined> {
    const w = lineWhere(ref, 3);
    const [r] = await this.db.query<Raw>(
      `SELECT * FROM creatives WHERE ${w.sql} AND sha256 = $1 AND landing_url = $2
         AND status IN ('pending', 'approved') ORDER BY created_at LIMIT 1`,
      [sha256, landingUrl, ...w.params],
    );
    return r && row(r);
  }

  /** How many creatives of a line await moderation. */
  async pendingOf(ref: LineRef): Promise<number> {
    const w = lineWhere(ref, 1);
    const [r] = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM creatives WHERE ${w.sql} AND status = 'pending'`,
      w.params,
    );
    return Number(r?.n ?? 0);
  }

  /** Newest first, filtered by status, booking and reservation. */
  async list(f: CreativeFilter): Promise<CreativeRow[]> {
    const rows = await this.db.query<Raw>(
      `SELECT * FROM creatives WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR booking_id = $2)
         AND ($3::text IS NULL OR reservation_id = $3) AND ($5::text[] IS NULL OR reservation_id = ANY($5))
       ORDER BY created_at DESC, id DESC LIMIT $4`,
      [f.status ?? null, f.booking_id ?? null, f.reservation_id ?? null, f.limit, f.reservation_ids ?? null],
    );
    return rows.map(row);
  }

  /** The creative approved for a line at a size, which an approval of another one replaces. */
  async approvedAt(ref: LineRef, width: number, height: number): Promise<CreativeRow | undefined> {
    const w = lineWhere(ref, 3);
    const [r] = await this.db.query<Raw>(
      `SELECT * FROM creatives WHERE ${w.sql} AND width = $1 AND height = $2 AND status = 'approved'`,
      [width, height, ...w.params],
    );
    return r && row(r);
  }

  /**
   * A reservation line, its reservation's state and its product's sizes. `lock` takes the
   * reservation row FOR SHARE: its approval (FOR UPDATE) waits for this transaction, so a
   * creative written here is never missed when the reservation's creatives move to its booking.
   */
  async reservationLine(
    reservationId: string,
    lineNo: number,
    lock = false,
  ): Promise<ReservationLineInfo | undefined> {
    const [r] = await this.db.query<ReservationLineInfo>(
      `SELECT r.status, r.booking_id, r.advertiser_id, pl.sizes
         FROM market_reservations r
         JOIN market_reservation_lines l ON l.reservation_id = r.id
         JOIN market_products p ON p.id = l.product_id
         JOIN adserver_placements pl ON pl.id = p.placement_id
        WHERE r.id = $1 AND l.line_no = $2${lock ? ' FOR SHARE OF r' : ''}`,
      [reservationId, lineNo],
    );
    return r;
  }

  /** Approved creatives of a reservation's lines not attached to a booking yet, by line. */
  async approvedHeld(reservationId: string): Promise<CreativeRow[]> {
    const rows = await this.db.query<Raw>(
      `SELECT * FROM creatives WHERE reservation_id = $1 AND booking_id IS NULL AND status = 'approved'
       ORDER BY reservation_line_no, created_at, id`,
      [reservationId],
    );
    return rows.map(row);
  }

  /** Attaches a booked reservation's creatives to its booking: reservation line N is booking line N. */
  async attach(reservationId: string, bookingId: string): Promise<number> {
    const rows = await this.db.query<{ id: string }>(
      `UPDATE creatives SET booking_id = $2, line_no = reservation_line_no, updated_at = now()
        WHERE reservation_id = $1 AND booking_id IS NULL RETURNING id`,
      [reservationId, bookingId],
    );
    return rows.length;
  }

  /** Marks a creative as being approved (the line's one at a time: the unique index refuses a second). */
  async claim(id: string): Promise<void> {
    await this.db.query(`UPDATE creatives SET status = 'approving', updated_at = now() WHERE id = $1`, [id]);
  }

  /** Puts a creative whose approval failed half-way back to pending. */
  async unclaim(id: string): Promise<void> {
    await this.db.query(
      `UPDATE creatives SET status = 'pending', updated_at = now() WHERE id = $1 AND status = 'approving'`,
      [id],
    );
  }

  async decide(id: string, status: CreativeStatus, actor: string, reason: string | null): Promise<void> {
    await this.db.query(
      `UPDATE creatives SET status = $2, decided_by = $3, reason = $4, decided_at = now(), updated_at = now() WHERE id = $1`,
      [id, status, actor, reason],
    );
  }

  /** The format of a hash served publicly: one of its creatives is not rejected. */
  async servable(sha256: string): Promise<CreativeFormat | undefined> {
    const [r] = await this.db.query<{ format: CreativeFormat }>(
      `SELECT format FROM creatives WHERE sha256 = $1 AND status <> 'rejected' LIMIT 1`,
      [sha256],
    );
    return r?.format;
  }

  /** Queues the follow-up push of a booking (once: a booking already queued stays queued). */
  async queueFollowup(bookingId: string): Promise<void> {
    await this.db.query(
      `INSERT INTO creative_followups (booking_id) VALUES ($1)
       ON CONFLICT (booking_id) DO UPDATE SET queued_at = now()`,
      [bookingId],
    );
  }

  /** Queued follow-ups, oldest first, at most `limit`, skipping those under `maxAttempts` failures exhausted. */
  async dueFollowups(limit: number, maxAttempts: number): Promise<Followup[]> {
    const rows = await this.db.query<Omit<Followup, 'queued_at'> & { queued_at: Date }>(
      'SELECT * FROM creative_followups WHERE attempts < $2 ORDER BY queued_at LIMIT $1',
      [limit, maxAttempts],
    );
    return rows.map((r) => ({ ...r, queued_at: iso(r.queued_at)! }));
  }

  /** Follow-ups still queued (waiting, retried or given up), oldest first. */
  async listFollowups(limit: number): Promise<Followup[]> {
    const rows = await this.db.query<Omit<Followup, 'queued_at'> & { queued_at: Date }>(
      'SELECT * FROM creative_followups ORDER BY queued_at LIMIT $1',
      [limit],
    );
    return rows.map((r) => ({ ...r, queued_at: iso(r.queued_at)! }));
  }

  async followupOf(bookingId: string): Promise<Followup | undefined> {
    const [r] = await this.db.query<Omit<Followup, 'queued_at'> & { queued_at: Date }>(
      'SELECT * FROM creative_followups WHERE booking_id = $1',
      [bookingId],
    );
    return r && { ...r, queued_at: iso(r.queued_at)! };
  }

  /** Removes a follow-up that was sent, unless it was queued again after `queuedAt` (a newer change). */
  async followupSent(bookingId: string, queuedAt: string): Promise<void> {
    await this.db.query(
      "DELETE FROM creative_followups WHERE booking_id = $1 AND date_trunc('milliseconds', queued_at) <= $2",
      [bookingId, queuedAt],
    );
  }

  async followupFailed(bookingId: string, error: string): Promise<void> {
    await this.db.query(
      'UPDATE creative_followups SET attempts = attempts + 1, last_error = $2 WHERE booking_id = $1',
      [bookingId, error.slice(0, 1000)],
    );
  }
}
