import type { Db } from '../../db/index.ts';
import { fromDbError } from '../../lib/db-errors.ts';
import { AppError, invalidField, notFound } from '../../lib/errors.ts';
import type { OutboundClient } from '../../lib/outbound.ts';
import { withRetries } from '../../lib/retry.ts';
import type { Sealer } from '../../lib/seal.ts';
import { Bookings } from './bookings.ts';
import { Connections } from './connections.ts';
import { type ForecastResult, readForecast } from './forecast.ts';
import { INVENTORY_PAGE_LIMIT, walkInventory } from './inventory.ts';
import { AdserverRepository } from './repository.ts';
import type { Placement, Slot } from './types.ts';

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
  readonly connections: Connections;
  readonly bookings: Bookings;

  constructor(
    readonly db: Db,
    sealer: Sealer,
    readonly http: OutboundClient,
    readonly now: () => Date = () => new Date(),
  ) {
    this.repo = new AdserverRepository(db);
    this.connections = new Connections(this.repo, sealer, http);
    this.bookings = new Bookings(db, this.repo, this.connections, (p, c) => this.slotOf(p, c), now);
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

  async createPlacement(input: { publisher: string; name: string; sizes: string[] }): Promise<Placement> {
    try {
      const id = await this.repo.insertPlacement(input.publisher, input.name, input.sizes);
      return this.getPlacement(id);
    } catch (err) {
      throw fromDbError(err, { adserver_placements_publisher_name_key: 'name' }) ?? err;
    }
  }

  async getPlacement(id: number): Promise<Placement> {
    const p = await this.repo.getPlacement(id);
    if (!p) throw notFound('Placement');
    return p;
  }

  listPlacements(publisher?: string): Promise<Placement[]> {
    return this.repo.listPlacements(publisher);
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
    const placement = await this.getPlacement(placementId);
    const inventoryId = placement.slots[connectionId];
    if (!inventoryId)
      throw new AppError('validation_failed', `placement ${placementId} is not mapped on ${connectionId}`, {
        field: 'placement_id',
      });
    const slot = await this.repo.getSlot(connectionId, inventoryId);
    if (!slot) throw notFound('Slot');
    return slot;
  }
}
