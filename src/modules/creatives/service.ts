import { createHash } from 'node:crypto';
import type { Config } from '../../config.ts';
import type { Db, Queryable } from '../../db/index.ts';
import { fromDbError } from '../../lib/db-errors.ts';
import { AppError, conflict, invalidField, notFound } from '../../lib/errors.ts';
import { ulid } from '../../lib/ids.ts';
import { storedUrl } from '../../lib/stored-url.ts';
import type { Bookings } from '../adserver/bookings.ts';
import type { ApprovedCreative } from '../adserver/types.ts';
import { CONTENT_TYPES, checkBytes, checkSize, EXTENSIONS } from './inspect.ts';
import {
  CreativeRepository,
  type CreativeRow,
  type CreativeStatus,
  type Followup,
  type LineRef,
} from './repository.ts';
import type { CreativeStore } from './storage.ts';

/** A creative as the admin API shows it: its row, its immutable URL and Content-Type. */
export interface Creative extends CreativeRow {
  url: string;
  content_type: string;
}

/** An upload: for a booking line, or for a reservation line awaiting approval (exactly one of the ids). */
export interface UploadInput {
  booking_id?: string;
  reservation_id?: string;
  line_no: number;
  landing_url: string;
  name?: string;
  /** The buyer's creative_id (the sales agent's sync_creatives). */
  buyer_creative_id?: string;
}

/** Where an upload goes: the line, its sizes, and the reservation line it came through. */
interface Target {
  ref: LineRef;
  sizes: readonly string[];
  reservation?: { id: string; line_no: number };
}

/** Pending creatives one line may hold at once: a bound on what moderation is asked to look at. */
export const PENDING_PER_LINE = 20;
/** Approved creatives a line carries at most (as the bookings API takes them). */
export const CREATIVES_PER_LINE = 10;
/** An approval in flight this long has died with its process: the creative may be approved again. */
const STALE_APPROVAL_MS = 120_000;
/** Failed follow-up pushes after which the queue stops retrying a booking (its error stays shown). */
export const FOLLOWUP_ATTEMPTS = 20;
/** Follow-ups sent per drain. */
const FOLLOWUP_BATCH = 20;

/** `<sha256>.<ext>` of a served creative. */
const FILE = /^([0-9a-f]{64})\.(png|jpg|gif|webp)$/;

/**
 * Creatives hosted by the marketplace: uploads for a booked line (checked, stored once per
 * SHA-256), moderation (pending → approved | rejected), and the line's approved creatives. An
 * approval puts the image into the line (a replacement takes the place of the one of its size, so
 * the line's banner code and tag stay) and queues the follow-up `POST /orders` (contract rules 4
 * and 5) of a booking the ad server already has.
 */
export class CreativeService {
  readonly repo: CreativeRepository;
  private draining: Promise<number> | undefined;
  /** A kick arrived while a drain ran: it may have missed the new row, so one more drain follows. */
  private again = false;

  constructor(
    private readonly db: Db,
    private readonly store: CreativeStore,
    private readonly bookings: Bookings,
    private readonly config: Pick<Config, 'creativeMaxBytes' | 'creativeBaseUrl'>,
    private readonly log: (msg: string, err?: unknown) => void = () => {},
  ) {
    this.repo = new CreativeRepository(db);
  }

  /** The immutable URL of a hash in a format. */
  urlOf(c: Pick<CreativeRow, 'sha256' | 'format'>): string {
    return `${this.config.creativeBaseUrl}/${c.sha256}.${EXTENSIONS[c.format]}`;
  }

  private shown(c: CreativeRow): Creative {
    return { ...c, url: this.urlOf(c), content_type: CONTENT_TYPES[c.format] };
  }

  /**
   * Checks and stores one uploaded image for a line. The same bytes and landing page already
   * pending or approved for the line answer that creative (`created: false`); the bytes of a hash
   * are stored once whatever the number of creatives using them.
   */
  async upload(
    input: UploadInput,
    bytes: Buffer,
    actor: string,
  ): Promise<{ creative: Creative; created: boolean }> {
    const landing = storedUrl('landing_url', input.landing_url);
    if (landing.length > 2048) throw invalidField('landing_url', 'must be at most 2048 characters');
    const format = checkBytes(bytes, this.config.creativeMaxBytes);
    const target = await this.target(input);
    const seen = checkSize(bytes, format, target.sizes);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const same = await this.repo.same(target.ref, sha256, landing);
    if (same) return { creative: this.shown(same), created: false };
    if ((await this.repo.pendingOf(target.ref)) >= PENDING_PER_LINE)
      throw new AppError(
        'conflict',
        `line ${input.line_no} already has ${PENDING_PER_LINE} creatives awaiting moderation: approve or reject some first`,
      );
    const id = `crv_${ulid()}`;
    // The row and (database store) the bytes commit together; a store that fails rolls the row back.
    await this.db.tx(async (q) => {
      const repo = this.repo.with(q);
      let line =
        target.ref.booking_id !== undefined
          ? { booking_id: target.ref.booking_id, line_no: target.ref.line_no }
          : null;
      if (target.reservation) {
        // Read again under the reservation's lock: an approval that booked it since moves the
        // upload to the booking line; one that ends it refuses the upload.
        const r = await repo.reservationLine(target.reservation.id, target.reservation.line_no, true);
        line = r ? this.reservationOpen(target.reservation.id, target.reservation.line_no, r) : null;
      }
      await repo.insert({
        id,
        booking_id: line?.booking_id ?? null,
        line_no: line?.line_no ?? null,
        reservation_id: target.reservation?.id ?? null,
        reservation_line_no: target.reservation?.line_no ?? null,
        buyer_creative_id: input.buyer_creative_id ?? null,
        sha256,
        format: seen.format,
        bytes: bytes.length,
        width: seen.width,
        height: seen.height,
        name: (input.name ?? `${seen.width}x${seen.height}`).slice(0, 200),
        landing_url: landing,
        uploaded_by: actor,
      });
      await this.store.put(sha256, bytes, CONTENT_TYPES[seen.format], q);
    });
    return { creative: await this.get(id), created: true };
  }

  /** The line an upload names, with the sizes it takes. */
  private async target(input: UploadInput): Promise<Target> {
    if ((input.booking_id === undefined) === (input.reservation_id === undefined))
      throw invalidField('booking_id', 'name exactly one of booking_id and reservation_id');
    if (input.reservation_id !== undefined) {
      const info = await this.repo.reservationLine(input.reservation_id, input.line_no);
      if (!info) {
        if (!(await this.repo.reservationLine(input.reservation_id, 1)))
          throw invalidField('reservation_id', 'no such reservation');
        throw invalidField('line_no', `reservation ${input.reservation_id} has no line ${input.line_no}`);
      }
      const line = this.reservationOpen(input.reservation_id, input.line_no, info);
      return {
        ref: line ?? { reservation_id: input.reservation_id, reservation_line_no: input.line_no },
        sizes: info.sizes,
        reservation: { id: input.reservation_id, line_no: input.line_no },
      };
    }
    const booking = await this.bookings.get(input.booking_id!).catch(() => {
      throw invalidField('booking_id', 'no such booking');
    });
    const line = booking.lines.find((l) => l.line_no === input.line_no);
    if (!line) throw invalidField('line_no', `booking ${booking.id} has no line ${input.line_no}`);
    return { ref: { booking_id: booking.id, line_no: line.line_no }, sizes: line.sizes };
  }

  /**
   * A reservation line that takes creatives: its booking line once booked (reservation line N is
   * booking line N), null while it awaits approval; refused once rejected or expired.
   */
  private reservationOpen(
    id: string,
    lineNo: number,
    r: { status: string; booking_id: string | null },
  ): { booking_id: string; line_no: number } | null {
    if (r.status === 'booked' && r.booking_id) return { booking_id: r.booking_id, line_no: lineNo };
    if (r.status === 'held' || r.status === 'approving') return null;
    throw invalidField('reservation_id', `reservation ${id} is ${r.status}: it takes no more creatives`);
  }

  async get(id: string): Promise<Creative> {
    const c = await this.repo.get(id);
    if (!c) throw notFound('Creative');
    return this.shown(c);
  }

  async list(filter: {
    status?: CreativeStatus;
    booking_id?: string;
    reservation_id?: string;
    reservation_ids?: readonly string[];
    limit?: number;
  }): Promise<Creative[]> {
    return (await this.repo.list({ ...filter, limit: filter.limit ?? 100 })).map((c) => this.shown(c));
  }

  /**
   * Approves a pending creative: it becomes the line's creative of its size (taking the place of
   * the one approved before, which becomes `replaced`), the line's frame shows it at once, and a
   * booking already on the ad server gets its follow-up push queued and started.
   */
  async approve(id: string, actor: string): Promise<Creative> {
    if (await this.approveHeld(id, actor)) return this.get(id);
    const c = await this.claim(id);
    let booking: Awaited<ReturnType<Bookings['get']>>;
    try {
      booking = await this.bookings.get(c.booking_id!);
      const line = booking.lines.find((l) => l.line_no === c.line_no)!;
      const entry: ApprovedCreative = {
        image_url: this.urlOf(c),
        landing_url: c.landing_url,
        width: c.width,
        height: c.height,
      };
      const at = line.approved_creatives.findIndex((a) => a.width === c.width && a.height === c.height);
      if (at < 0 && line.approved_creatives.length >= CREATIVES_PER_LINE)
        throw conflict(
          `Line ${line.line_no} already carries ${CREATIVES_PER_LINE} approved creatives: approve one of a size it has`,
        );
      const next =
        at < 0
          ? [...line.approved_creatives, entry]
          : line.approved_creatives.map((a, i) => (i === at ? entry : a));
      await this.bookings.updateLine(booking.id, line.line_no, { creatives: next });
    } catch (err) {
      await this.repo.unclaim(id);
      throw err;
    }
    await this.db.tx(async (q) => {
      const repo = this.repo.with(q);
      const before = await repo.approvedAt(
        { booking_id: c.booking_id!, line_no: c.line_no! },
        c.width,
        c.height,
      );
      if (before) await repo.decide(before.id, 'replaced', actor, null);
      await repo.decide(id, 'approved', actor, null);
      if (booking.order_id) await repo.queueFollowup(booking.id);
    });
    if (booking.order_id) this.kick();
    return this.get(id);
  }

  /**
   * Approves a pending creative of a reservation line awaiting approval (no booking line to write
   * yet): it becomes the line's creative of its size, carried to the booking on the reservation's
   * approval. False when the creative is on a booking line (the booking path approves it).
   */
  private async approveHeld(id: string, actor: string): Promise<boolean> {
    return this.db.tx(async (q) => {
      const repo = this.repo.with(q);
      const c = await repo.get(id, true);
      if (!c) throw notFound('Creative');
      if (c.booking_id !== null) return false;
      if (c.status !== 'pending') throw conflict(`Creative ${id} is ${c.status}, not pending`);
      const ref = { reservation_id: c.reservation_id!, reservation_line_no: c.reservation_line_no! };
      const r = await repo.reservationLine(ref.reservation_id, ref.reservation_line_no, true);
      if (r?.status !== 'held')
        throw conflict(
          `Creative ${id}: reservation ${ref.reservation_id} is ${r?.status ?? 'gone'}; ${r?.status === 'approving' ? 'try again once it is booked' : 'it takes no approvals'}`,
        );
      const before = await repo.approvedAt(ref, c.width, c.height);
      if (before) await repo.decide(before.id, 'replaced', actor, null);
      await repo.decide(id, 'approved', actor, null);
      return true;
    });
  }

  /**
   * What each line of a reservation must carry when it becomes a booking: its approved
   * creatives, by reservation line number (at most {@link CREATIVES_PER_LINE} a line, newest kept).
   */
  async approvedForReservation(reservationId: string): Promise<Map<number, ApprovedCreative[]>> {
    const byLine = new Map<number, ApprovedCreative[]>();
    for (const c of await this.repo.approvedHeld(reservationId)) {
      const list = byLine.get(c.reservation_line_no!) ?? [];
      list.push({ image_url: this.urlOf(c), landing_url: c.landing_url, width: c.width, height: c.height });
      byLine.set(c.reservation_line_no!, list.slice(-CREATIVES_PER_LINE));
    }
    return byLine;
  }

  /** Attaches a booked reservation's creatives to its booking's lines, in the caller's transaction. */
  async attachToBooking(reservationId: string, bookingId: string, q: Queryable): Promise<void> {
    await this.repo.with(q).attach(reservationId, bookingId);
  }

  /**
   * Moves a pending creative to `approving`: the one approval of its line in flight, so two never
   * interleave their line writes. One left `approving` longer than {@link STALE_APPROVAL_MS} (its
   * process died) may be approved again.
   */
  private async claim(id: string): Promise<CreativeRow> {
    try {
      return await this.db.tx(async (q) => {
        const repo = this.repo.with(q);
        const c = await repo.get(id, true);
        if (!c) throw notFound('Creative');
        const stale = c.status === 'approving' && Date.now() - Date.parse(c.updated_at) > STALE_APPROVAL_MS;
        if (c.status !== 'pending' && !stale) throw conflict(`Creative ${id} is ${c.status}, not pending`);
        await repo.claim(id);
        return c;
      });
    } catch (err) {
      if (fromDbError(err))
        throw conflict(`Creative ${id}: another creative of its line is being approved; try again`);
      throw err;
    }
  }

  /** Rejects a pending creative with the reason the advertiser is shown. */
  async reject(id: string, reason: string, actor: string): Promise<Creative> {
    await this.db.tx(async (q) => {
      const repo = this.repo.with(q);
      const c = await repo.get(id, true);
      if (!c) throw notFound('Creative');
      if (c.status !== 'pending') throw conflict(`Creative ${id} is ${c.status}, not pending`);
      await repo.decide(id, 'rejected', actor, reason);
    });
    return this.get(id);
  }

  /** The bytes and Content-Type of `<sha256>.<ext>`, or 404 (unknown, rejected, or the wrong extension). */
  async file(name: string): Promise<{ sha256: string; bytes: Buffer; contentType: string }> {
    const m = FILE.exec(name);
    if (!m) throw notFound('Creative');
    const [, sha256, ext] = m as unknown as [string, string, string];
    const format = await this.repo.servable(sha256);
    if (!format || EXTENSIONS[format] !== ext) throw notFound('Creative');
    const bytes = await this.store.get(sha256);
    if (!bytes) throw notFound('Creative');
    return { sha256, bytes, contentType: CONTENT_TYPES[format] };
  }

  /** The follow-up pushes not sent yet, oldest first (at most 200), each with its attempts and last error. */
  followups(): Promise<Followup[]> {
    return this.repo.listFollowups(200);
  }

  /** A booking's queued follow-up push, if one is waiting or failed. */
  followupOf(bookingId: string): Promise<Followup | undefined> {
    return this.repo.followupOf(bookingId);
  }

  /** Starts a drain unless one runs in this process; its failures stay on the queue rows. */
  kick(): void {
    if (this.draining) {
      this.again = true;
      return;
    }
    void this.drainFollowups().catch((err) => this.log('creatives: follow-up drain failed', err));
  }

  /** Sends the queued follow-up pushes (the job runs this every minute); returns how many were sent. */
  drainFollowups(signal?: AbortSignal): Promise<number> {
    this.draining ??= this.drain(signal).finally(() => {
      this.draining = undefined;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
    return this.draining;
  }

  private async drain(signal?: AbortSignal): Promise<number> {
    let sent = 0;
    for (const f of await this.repo.dueFollowups(FOLLOWUP_BATCH, FOLLOWUP_ATTEMPTS)) {
      if (signal?.aborted) break;
      try {
        await this.bookings.push(f.booking_id, signal);
        await this.repo.followupSent(f.booking_id, f.queued_at);
        sent++;
      } catch (err) {
        await this.repo.followupFailed(f.booking_id, (err as Error).message);
      }
    }
    return sent;
  }
}
