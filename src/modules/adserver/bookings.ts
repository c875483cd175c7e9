import type { Creative } from '../../../packages/adserver-kit/src/schemas.ts';
import type { Db } from '../../db/index.ts';
import { fromDbError } from '../../lib/db-errors.ts';
import { AppError, invalidField, notFound } from '../../lib/errors.ts';
import { ulid } from '../../lib/ids.ts';
import { withRetries } from '../../lib/retry.ts';
import type { BookingRepository } from './booking-repository.ts';
import type { Connections } from './connections.ts';
import {
  type Booking,
  type BookingLine,
  type BookingSummary,
  monthFlight,
  orderBody,
  readOrderResponse,
  thirdPartyTag,
  todayIn,
} from './orders.ts';
import type { AdserverRepository } from './repository.ts';
import type { ApprovedCreative, BannerCodes, Placement, Push, Slot } from './types.ts';

export interface BookingLineInput {
  placement_id: number;
  month: string;
  geo?: string[];
  goal_impressions: number;
  sizes: string[];
  creatives?: ApprovedCreative[];
}

export interface BookingInput {
  connection_id: string;
  currency: string;
  advertiser: { name: string; external_ref?: string };
  campaign: { name: string; external_ref: string };
  lines: BookingLineInput[];
}

export interface LinePatch {
  goal_impressions?: number;
  geo?: string[];
  creatives?: ApprovedCreative[];
}

/** Names a field of the request being validated (`lines.0.sizes` in a booking, `sizes` in an added line). */
type FieldOf = (field: string) => string;

/** What bookings need from the rest of the module and from tracking. */
export interface BookingDeps {
  /** The slot a placement is mapped to on a connection, and the placement. */
  slotOf(placementId: number, connectionId: string): Promise<{ slot: Slot; placement: Placement }>;
  /** The banner code and frame URL of one line creative (tracking). */
  bannerCode: BannerCodes;
}

/** Retries of one push: same key, same bytes, bounded in calls and time. */
const PUSH_POLICY = { attempts: 4, budgetMs: 60_000, baseMs: 500, capMs: 10_000 };

/**
 * Bookings → draft orders. A booking is validated against the connection's synced inventory
 * and account (currency, time zone), then pushed with `POST /orders`: one idempotency key per
 * revision, the exact same bytes on every retry, 409 never retried, ids stored; a change makes a
 * new revision pushed under a new key with the same external_refs. Nothing is ever activated.
 */
export class Bookings {
  constructor(
    private readonly db: Db,
    private readonly repo: BookingRepository,
    private readonly connectionRepo: AdserverRepository,
    private readonly connections: Connections,
    private readonly deps: BookingDeps,
    private readonly now: () => Date,
  ) {}

  async create(input: BookingInput): Promise<Booking> {
    const conn = await this.connections.get(input.connection_id).catch(() => {
      throw invalidField('connection_id', 'no such connection');
    });
    if (conn.currency && conn.currency !== input.currency)
      throw invalidField('currency', `the ad server account books in ${conn.currency}`);
    const checked: { line: BookingLine; siteId: number | null }[] = [];
    for (const [i, l] of input.lines.entries()) {
      const { slot, placement } = await this.deps.slotOf(l.placement_id, conn.id).catch((err: AppError) => {
        throw invalidField(`lines.${i}.placement_id`, err.message);
      });
      const field = (f: string) => `lines.${i}.${f}`;
      checked.push({
        line: this.line(i, l, slot, input.campaign.external_ref, conn.timezone, field),
        siteId: placement.site_id,
      });
    }
    // Checked before any banner code is made, so a refused booking leaves no codes behind.
    if (await this.repo.bookingRefTaken(conn.id, input.campaign.external_ref))
      throw new AppError('conflict', 'campaign.external_ref: this value is already taken', {
        field: 'campaign.external_ref',
      });
    const id = `bkg_${ulid()}`;
    const lines: BookingLine[] = [];
    for (const [i, { line, siteId }] of checked.entries())
      lines.push(await this.withTags(id, line, siteId, (f) => `lines.${i}.${f}`));
    try {
      await this.db.tx((q) =>
        this.repo.with(q).insertBooking({
          id,
          connection_id: conn.id,
          external_ref: input.campaign.external_ref,
          advertiser_name: input.advertiser.name,
          advertiser_ref: input.advertiser.external_ref ?? null,
          campaign_name: input.campaign.name,
          currency: input.currency,
          lines,
        }),
      );
    } catch (err) {
      throw (
        fromDbError(err, { adserver_bookings_connection_id_external_ref_key: 'campaign.external_ref' }) ?? err
      );
    }
    return this.get(id);
  }

  /** Bookings newest first, optionally of one connection, only of `siteIds` when given. */
  list(connectionId?: string, siteIds?: readonly number[]): Promise<BookingSummary[]> {
    return this.repo.listBookings(connectionId, siteIds);
  }

  async get(id: string): Promise<Booking> {
    const b = await this.repo.getBooking(id);
    if (!b) throw notFound('Booking');
    return b;
  }

  pushes(id: string): Promise<Push[]> {
    return this.repo.listPushes(id);
  }

  /** Adds a line to a booking (the next push creates only it and keeps every existing id). */
  async addLine(id: string, input: BookingLineInput): Promise<Booking> {
    const b = await this.get(id);
    const conn = await this.connections.get(b.connection_id);
    if (b.lines.length >= 200) throw invalidField('lines', 'a booking has at most 200 lines');
    const { slot, placement } = await this.deps.slotOf(input.placement_id, conn.id).catch((err: AppError) => {
      throw invalidField('placement_id', err.message);
    });
    const index = Math.max(0, ...b.lines.map((l) => l.line_no));
    const checked = this.line(index, input, slot, b.external_ref, conn.timezone, (f) => f);
    const line = await this.withTags(id, checked, placement.site_id, (f) => f);
    await this.db.tx(async (q) => {
      await this.repo.with(q).insertLine(id, conn.id, line);
      await this.repo.with(q).bumpRevision(id);
    });
    return this.get(id);
  }

  /** Changes one line (goal, geo, creatives); the booking moves to a new revision to push. */
  async updateLine(id: string, lineNo: number, patch: LinePatch): Promise<Booking> {
    const b = await this.get(id);
    const line = b.lines.find((l) => l.line_no === lineNo);
    if (!line) throw notFound('Booking line');
    const { creatives, ...rest } = patch;
    const edited: BookingLine = {
      ...line,
      ...rest,
      approved_creatives: creatives ?? line.approved_creatives,
    };
    this.checkCreatives(edited.approved_creatives, edited.sizes, (f) => f);
    const { placement } = await this.deps.slotOf(line.placement_id, b.connection_id);
    const next = await this.withTags(id, edited, placement.site_id, (f) => f);
    await this.db.tx(async (q) => {
      await this.repo.with(q).updateLine(id, next);
      await this.repo.with(q).bumpRevision(id);
    });
    return this.get(id);
  }

  /** Pushes the booking's current revision as a draft order; a revision already pushed is not sent again. */
  async push(id: string, signal?: AbortSignal): Promise<Booking> {
    const first = await this.get(id);
    const conn = await this.connections.get(first.connection_id);
    if (conn.status !== 'connected')
      throw new AppError(
        'conflict',
        `Connection ${conn.id} is in error (${conn.state}): fix it and re-verify first`,
      );
    if (conn.currency !== first.currency)
      throw invalidField(
        'currency',
        `the ad server account books in ${conn.currency ?? 'an unknown currency'}`,
      );
    // Claim under the booking's row lock: concurrent pushes of one revision share one key and body.
    const claim = await this.db.tx(async (q) => {
      const repo = this.repo.with(q);
      const b = (await repo.getBooking(id, true))!;
      if (b.pushed_revision === b.revision) return undefined;
      const open = await repo.openPush(id, b.revision);
      if (open) return open;
      const key = `pdm-${ulid()}`;
      const body = JSON.stringify(orderBody(b, key));
      await repo.insertPush(key, id, b.revision, body);
      return { idempotency_key: key, revision: b.revision, body } as Push;
    });
    // Read again: a concurrent push may have finished since `first` was read.
    if (!claim) return this.get(id);
    const sent = JSON.parse(claim.body) as { line_items: { external_ref: string }[] };
    const { outcome, calls } = await withRetries(
      () =>
        this.connections.call(conn, {
          method: 'POST',
          path: '/orders',
          body: claim.body,
          headers: { 'idempotency-key': claim.idempotency_key },
          signal,
        }),
      { ...PUSH_POLICY, signal },
    );
    const key = claim.idempotency_key;
    if (outcome.kind === 'ok') {
      const read = readOrderResponse(
        outcome.json,
        sent.line_items.map((l) => l.external_ref),
      );
      if ('problem' in read)
        return this.fail(
          id,
          key,
          'failed',
          outcome.status,
          calls,
          `POST /orders: ${read.problem}`,
          'bad_gateway',
        );
      await this.db.tx(async (q) => {
        await this.repo.with(q).recordPushed(id, claim.revision, read.order_id, read.lineIds);
        await this.repo.with(q).finishPush(key, 'succeeded', outcome.status, calls, null);
      });
      await this.connectionRepo.confirmCapability(conn.id, 'draft_booking');
      return this.get(id);
    }
    const status = 'status' in outcome ? outcome.status : null;
    if (outcome.kind === 'http_status' && outcome.status === 409)
      return this.fail(id, key, 'conflict', 409, calls, outcome.message, 'conflict');
    if (outcome.kind === 'http_status' && (outcome.status === 404 || outcome.status === 422))
      return this.fail(id, key, 'failed', outcome.status, calls, outcome.message, 'validation_failed');
    return this.fail(id, key, 'failed', status, calls, outcome.message, 'bad_gateway');
  }

  private async fail(
    id: string,
    key: string,
    status: Push['status'],
    httpStatus: number | null,
    calls: number,
    message: string,
    code: 'conflict' | 'validation_failed' | 'bad_gateway',
  ): Promise<never> {
    await this.repo.finishPush(key, status, httpStatus, calls, message);
    await this.repo.recordPushError(id, message);
    throw new AppError(code, message, { idempotency_key: key, calls });
  }

  private line(
    i: number,
    l: BookingLineInput,
    slot: Slot,
    campaignRef: string,
    timezone: string | null,
    field: FieldOf,
  ): BookingLine {
    if (slot.status !== 'active') throw invalidField(field('placement_id'), 'its slot is archived');
    const misfit = l.sizes.filter((s) => !slot.sizes.includes(s));
    if (misfit.length)
      throw invalidField(field('sizes'), `${misfit.join(', ')} does not fit slot ${slot.inventory_id}`);
    const flight = monthFlight(l.month);
    if (timezone && flight.end_date < todayIn(timezone, this.now()))
      throw invalidField(field('month'), `${l.month} has already ended in the account time zone ${timezone}`);
    const approved = l.creatives ?? [];
    this.checkCreatives(approved, l.sizes, field);
    return {
      line_no: i + 1,
      external_ref: `${campaignRef}:L${i + 1}`,
      placement_id: l.placement_id,
      inventory_id: slot.inventory_id,
      month: l.month,
      ...flight,
      geo: l.geo ?? [],
      goal_impressions: l.goal_impressions,
      sizes: l.sizes,
      approved_creatives: approved,
      creatives: [],
      click_codes: [],
      impression_codes: [],
      line_item_id: null,
    };
  }

  private checkCreatives(
    creatives: readonly ApprovedCreative[],
    sizes: readonly string[],
    field: FieldOf,
  ): void {
    creatives.forEach((c, j) => {
      if (!sizes.includes(`${c.width}x${c.height}`))
        throw invalidField(field(`creatives.${j}`), `${c.width}x${c.height} is not one of the line's sizes`);
    });
  }

  /**
   * The line with a banner code per approved creative (bound to the booking, line, creative,
   * placement and the placement's site; the same code on every edit) and the third-party tag
   * generated from it. The line's /go and /imp codes are these codes.
   */
  private async withTags(
    bookingId: string,
    line: BookingLine,
    siteId: number | null,
    field: FieldOf,
  ): Promise<BookingLine> {
    const creatives: Creative[] = [];
    const codes: string[] = [];
    for (const [j, c] of line.approved_creatives.entries()) {
      const { code, frameUrl } = await this.deps
        .bannerCode({
          owner: `${bookingId}/L${line.line_no}/C${j + 1}/P${line.placement_id}`,
          siteId,
          landingUrl: c.landing_url,
          imageUrl: c.image_url,
          width: c.width,
          height: c.height,
        })
        .catch((err: AppError) => {
          const f = (err.details as { field?: string } | undefined)?.field;
          throw f ? invalidField(field(`creatives.${j}.${f}`), err.message.slice(f.length + 2)) : err;
        });
      codes.push(code);
      creatives.push({
        type: 'third_party_tag',
        width: c.width,
        height: c.height,
        tag: thirdPartyTag(frameUrl, c.width, c.height),
      });
    }
    return { ...line, creatives, click_codes: codes, impression_codes: codes };
  }
}
