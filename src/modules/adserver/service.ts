import type { Db } from '../../db/index.ts';
import { fromDbError } from '../../lib/db-errors.ts';
import { AppError, invalidField, notFound } from '../../lib/errors.ts';
import type { OutboundClient } from '../../lib/outbound.ts';
import { withRetries } from '../../lib/retry.ts';
import type { Sealer } from '../../lib/seal.ts';
import { BookingRepository } from './booking-repository.ts';
import { Bookings } from './bookings.ts';
import { Connections } from './connections.ts';
import { type ForecastResult, readForecast } from './forecast.ts';
import { INVENTORY_PAGE_LIMIT, walkInventory } from './inventory.ts';
import { ReportRepository } from './report-repository.ts';
import { type ReportOptions, Reports } from './reports.ts';
import { AdserverRepository } from './repository.ts';
import type { BannerCodes, BookingDelivery, Placement, Slot } from './types.ts';

/** Podium's own counted /go clicks and /imp impressions per code and day (from the tracking module). */
export type CodeCounts = (
  codes: readonly string[],
  from: string,
  to: string,
  timezone: string,
) => Promise<{ slug: string; day: string; clicks: number; impressions: number }[]>;

export interface AdserverOptions extends ReportOptions {
  counts: CodeCounts;
  /** Banner codes of line creatives (the tracking module's). */
  bannerCode: BannerCodes;
}

const DEFAULT_OPTIONS: AdserverOptions = {
  trailingDays: 3,
  counts: async () => [],
  bannerCode: async () => {
    throw new AppError('service_unavailable', 'banner tracking is not wired in this process');
  },
};

/** (ad server − Podium) / ad server, in percent with two decimals; null when the ad server counted nothing. */
export function discrepancyPct(adserver: number, podium: number): string | null {
  return adserver ? (((adserver - podium) / adserver) * 100).toFixed(2) : null;
}

export interface SyncSummary {
  ok: boolean;
  pages: number;
  slots: number;
  added: number;
  problems: string[];
}

/**
 * The marketplace side of the Ad Server Integration API: connections and their verify probe,
 * inventory sync, and the placement ↔ slot mapping.
 */
export class AdserverService {
  readonly repo: AdserverRepository;
  private readonly delivered: ReportRepository;
  readonly connections: Connections;
  readonly bookings: Bookings;
  readonly reports: Reports;
  private readonly counts: CodeCounts;

  constructor(
    readonly db: Db,
    sealer: Sealer,
    readonly http: OutboundClient,
    readonly now: () => Date = () => new Date(),
    options: AdserverOptions = DEFAULT_OPTIONS,
  ) {
    this.repo = new AdserverRepository(db);
    this.delivered = new ReportRepository(db);
    this.connections = new Connections(this.repo, sealer, http);
    this.bookings = new Bookings(
      db,
      new BookingRepository(db),
      this.repo,
      this.connections,
      { slotOf: (p, c) => this.placementSlot(p, c), bannerCode: options.bannerCode },
      now,
    );
    this.reports = new Reports(this.delivered, this.repo, this.connections, now, options);
    this.counts = options.counts;
  }

  /* Delivery */

  /** Pulls one connection's delivery now (the operator's button; the job does the same on schedule). */
  async pullReports(connectionId: string) {
    const conn = await this.connections.get(connectionId);
    return this.reports.pull(conn, Date.now() + 60_000);
  }

  async pullHistory(connectionId: string) {
    await this.connections.get(connectionId);
    return this.delivered.listPulls(connectionId);
  }

  async unmatchedDelivery(connectionId: string) {
    await this.connections.get(connectionId);
    return this.delivered.unmatchedOf(connectionId);
  }

  /**
   * A booking's delivery per line and day as the ad server reports it, beside Podium's own /imp
   * and /go counts for the line's creative codes (days in the account time zone), with the
   * discrepancy in percent.
   */
  async delivery(bookingId: string): Promise<BookingDelivery> {
    const booking = await this.bookings.get(bookingId);
    const conn = await this.connections.get(booking.connection_id);
    const timezone = conn.timezone ?? 'UTC';
    const pushed = booking.lines.filter((l) => l.line_item_id);
    const rows = await this.delivered.deliveryOf(
      conn.id,
      pushed.map((l) => l.line_item_id!),
    );
    const lines: BookingDelivery['lines'] = [];
    for (const l of booking.lines) {
      const mine = rows.filter((r) => r.line_item_id === l.line_item_id);
      const codes = [...new Set([...l.click_codes, ...l.impression_codes])];
      const own = await this.counts(codes, l.start_date, l.end_date, timezone);
      const ownOn = (day: string) => {
        const on = own.filter((o) => o.day === day);
        return {
          podium_impressions: on
            .filter((o) => l.impression_codes.includes(o.slug))
            .reduce((n, o) => n + o.impressions, 0),
          podium_clicks: on.filter((o) => l.click_codes.includes(o.slug)).reduce((n, o) => n + o.clicks, 0),
        };
      };
      // Every day either side counted: Podium's hits on a day the ad server has not reported yet show too.
      const dates = [...new Set([...mine.map((r) => r.date), ...own.map((o) => o.day)])].sort();
      const days = dates.map((date) => {
        const r = mine.find((x) => x.date === date);
        return { date, impressions: r?.impressions ?? 0, clicks: r?.clicks ?? 0, ...ownOn(date) };
      });
      const sum = (k: 'impressions' | 'clicks' | 'podium_impressions' | 'podium_clicks') =>
        days.reduce((n, d) => n + d[k], 0);
      const totals = {
        impressions: sum('impressions'),
        clicks: sum('clicks'),
        podium_impressions: sum('podium_impressions'),
        podium_clicks: sum('podium_clicks'),
      };
      lines.push({
        line_no: l.line_no,
        external_ref: l.external_ref,
        line_item_id: l.line_item_id,
        month: l.month,
        days,
        totals: {
          ...totals,
          impression_discrepancy_pct: discrepancyPct(totals.impressions, totals.podium_impressions),
          click_discrepancy_pct: discrepancyPct(totals.clicks, totals.podium_clicks),
        },
      });
    }
    return { booking_id: booking.id, order_id: booking.order_id, timezone, lines };
  }

  /* Forecast */

  /**
   * `POST /forecast` for a placement's slot, only when `/health` declared `capabilities.forecast`;
   * never an invented number: anything but a conforming answer is "no forecast".
   */
  async forecast(
    connectionId: string,
    input: { placement_id: number; start_date: string; end_date: string; geo?: string[]; sizes?: string[] },
  ): Promise<ForecastResult> {
    const conn = await this.connections.get(connectionId);
    const slot = await this.slotOf(input.placement_id, conn.id);
    if (input.end_date < input.start_date) throw invalidField('end_date', 'is before start_date');
    if (conn.forecast_declared !== true)
      return {
        inventory_id: slot.inventory_id,
        forecast: null,
        reason: 'forecast_disabled',
        message: 'The ad server declares no forecast capability',
      };
    const body = JSON.stringify({
      inventory_id: slot.inventory_id,
      flight: { start_date: input.start_date, end_date: input.end_date },
      ...(input.geo?.length ? { targeting: { geo: input.geo } } : {}),
      ...(input.sizes?.length ? { sizes: input.sizes } : {}),
    });
    const { outcome } = await withRetries(
      () => this.connections.call(conn, { method: 'POST', path: '/forecast', body }),
      {
        attempts: 2,
        budgetMs: 5_000,
        baseMs: 300,
      },
    );
    const result = readForecast(outcome, slot.inventory_id);
    if (result.forecast) await this.repo.confirmCapability(conn.id, 'forecast');
    return result;
  }

  /* Inventory */

  /** Full cursor walk of the connection's inventory; stores every valid slot seen. */
  async syncInventory(connectionId: string): Promise<SyncSummary> {
    const conn = await this.connections.get(connectionId);
    const walk = await walkInventory((cursor) =>
      this.connections.call(conn, {
        method: 'GET',
        path: '/inventory',
        query: cursor
          ? { limit: String(INVENTORY_PAGE_LIMIT), cursor }
          : { limit: String(INVENTORY_PAGE_LIMIT) },
      }),
    );
    const { added } = await this.repo.upsertSlots(conn.id, walk.slots, this.now());
    const problems = walk.problems.slice(0, 100);
    await this.repo.recordSync(conn.id, walk.complete, walk.pages, walk.slots.length, problems);
    if (walk.pages > 0 && walk.failure === undefined)
      await this.repo.confirmCapability(conn.id, 'inventory_read');
    return { ok: walk.complete, pages: walk.pages, slots: walk.slots.length, added, problems };
  }

  async listSlots(connectionId: string): Promise<Slot[]> {
    await this.connections.get(connectionId);
    return this.repo.listSlots(connectionId);
  }

  /* Placements */

  async createPlacement(input: {
    publisher: string;
    name: string;
    sizes: string[];
    site_id?: number;
  }): Promise<Placement> {
    try {
      const id = await this.repo.insertPlacement(
        input.publisher,
        input.name,
        input.sizes,
        input.site_id ?? null,
      );
      return this.getPlacement(id);
    } catch (err) {
      throw (
        fromDbError(err, {
          adserver_placements_publisher_name_key: 'name',
          adserver_placements_site_id_fkey: 'site_id',
        }) ?? err
      );
    }
  }

  async getPlacement(id: number): Promise<Placement> {
    const p = await this.repo.getPlacement(id);
    if (!p) throw notFound('Placement');
    return p;
  }

  listPlacements(publisher?: string, siteIds?: readonly number[]): Promise<Placement[]> {
    return this.repo.listPlacements(publisher, siteIds);
  }

  /** Maps a placement to a synced, active slot of one of its publisher's connections whose sizes cover it. */
  async mapPlacement(placementId: number, connectionId: string, inventoryId: string): Promise<Placement> {
    const placement = await this.getPlacement(placementId);
    const conn = await this.connections.get(connectionId);
    if (conn.publisher !== placement.publisher)
      throw invalidField(
        'connection_id',
        `belongs to publisher ${conn.publisher}, not ${placement.publisher}`,
      );
    const slot = await this.repo.getSlot(connectionId, inventoryId);
    if (!slot)
      throw invalidField('inventory_id', 'is not in the synced inventory of this connection (sync first)');
    if (slot.status !== 'active') throw invalidField('inventory_id', 'is archived');
    const missing = placement.sizes.filter((s) => !slot.sizes.includes(s));
    if (missing.length) throw invalidField('inventory_id', `does not accept size ${missing.join(', ')}`);
    await this.repo.mapPlacement(placementId, connectionId, inventoryId);
    return this.getPlacement(placementId);
  }

  async unmapPlacement(placementId: number, connectionId: string): Promise<void> {
    if (!(await this.repo.unmapPlacement(placementId, connectionId))) throw notFound('Placement mapping');
  }

  /** The slot a placement is mapped to on a connection (bookings and forecasts go through it). */
  async slotOf(placementId: number, connectionId: string): Promise<Slot> {
    return (await this.placementSlot(placementId, connectionId)).slot;
  }

  /** The placement and the slot it is mapped to on a connection. */
  private async placementSlot(
    placementId: number,
    connectionId: string,
  ): Promise<{ slot: Slot; placement: Placement }> {
    const placement = await this.getPlacement(placementId);
    const inventoryId = placement.slots[connectionId];
    if (!inventoryId)
      throw new AppError('validation_failed', `placement ${placementId} is not mapped on ${connectionId}`, {
        field: 'placement_id',
      });
    const slot = await this.repo.getSlot(connectionId, inventoryId);
    if (!slot) throw notFound('Slot');
    return { slot, placement };
  }
}
