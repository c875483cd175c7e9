import type { CreativeFormat } from '../../config.ts';
import type { Queryable } from '../../db/index.ts';
import { isoOrNull as iso } from '../../lib/time.ts';

export type CreativeStatus = 'pending' | 'approving' | 'approved' | 'rejected' | 'replaced';

/** A creative row as stored (the service adds its URL). */
export interface CreativeRow {
  id: string;
  booking_id: string;
  line_no: number;
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
  limit: number;
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
      `INSERT INTO creatives (id, booking_id, line_no, sha256, format, bytes, width, height, name, landing_url, uploaded_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        c.id,
        c.booking_id,
        c.line_no,
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
  async same(
    bookingId: string,
    lineNo: number,
    sha256: string,
    landingUrl: string,
  ): Promise<CreativeRow | undefined> {
    const [r] = await this.db.query<Raw>(
      `SELECT * FROM creatives WHERE booking_id = $1 AND line_no = $2 AND sha256 = $3 AND landing_url = $4
         AND status IN ('pending', 'approved') ORDER BY created_at LIMIT 1`,
      [bookingId, lineNo, sha256, landingUrl],
    );
    return r && row(r);
  }

  /** How many creatives of a line await moderation. */
  async pendingOf(bookingId: string, lineNo: number): Promise<number> {
    const [r] = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM creatives WHERE booking_id = $1 AND line_no = $2 AND status = 'pending'`,
      [bookingId, lineNo],
    );
    return Number(r?.n ?? 0);
  }

  /** Newest first, filtered by status and booking. */
  async list(f: CreativeFilter): Promise<CreativeRow[]> {
    const rows = await this.db.query<Raw>(
      `SELECT * FROM creatives WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR booking_id = $2)
       ORDER BY created_at DESC, id DESC LIMIT $3`,
      [f.status ?? null, f.booking_id ?? null, f.limit],
    );
    return rows.map(row);
  }

  /** The creative approved for a line at a size, which an approval of another one replaces. */
  async approvedAt(
    bookingId: string,
    lineNo: number,
    width: number,
    height: number,
  ): Promise<CreativeRow | undefined> {
    const [r] = await this.db.query<Raw>(
      `SELECT * FROM creatives WHERE booking_id = $1 AND line_no = $2 AND width = $3 AND height = $4 AND status = 'approved'`,
      [bookingId, lineNo, width, height],
    );
    return r && row(r);
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
