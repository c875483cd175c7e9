import { onlyValue } from '../../db/first-value.ts';
import type { Queryable } from '../../db/index.ts';
import type { StoredSecret } from '../../lib/seal.ts';
import { isoOrNull as iso } from '../../lib/time.ts';
import type { Capability, Environment, Placement, ProbeState, Slot, StoredConnection } from './types.ts';

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

/** Ad-server SQL for connections, inventory and placements (bookings and delivery have their own repositories). */
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

  /** Every connection's sealed API key (the connection id is its associated data). */
  async sealedKeys(): Promise<StoredSecret[]> {
    return this.db.query<StoredSecret>(
      'SELECT id AS record, id AS aad, api_key_sealed AS sealed FROM adserver_connections ORDER BY id',
    );
  }

  /** Replaces a sealed key only if it is still `old`; false when it changed meanwhile. */
  async replaceSealedKey(id: string, old: string, sealed: string): Promise<boolean> {
    const rows = await this.db.query(
      'UPDATE adserver_connections SET api_key_sealed = $3 WHERE id = $1 AND api_key_sealed = $2 RETURNING id',
      [id, old, sealed],
    );
    return rows.length === 1;
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

  async insertPlacement(
    publisher: string,
    name: string,
    sizes: string[],
    siteId: number | null,
  ): Promise<number> {
    return onlyValue<number>(
      this.db,
      'INSERT INTO adserver_placements (publisher, name, sizes, site_id) VALUES ($1, $2, $3, $4) RETURNING id',
      [publisher, name, sizes, siteId],
    );
  }

  async getPlacement(id: number): Promise<Placement | undefined> {
    return (await this.placements('p.id = $1', [id]))[0];
  }

  /** Placements, of one publisher when given, only of `siteIds` when given (site-less ones excluded). */
  async listPlacements(publisher?: string, siteIds?: readonly number[]): Promise<Placement[]> {
    return this.placements(
      '($1::text IS NULL OR p.publisher = $1) AND ($2::int[] IS NULL OR p.site_id = ANY($2::int[]))',
      [publisher ?? null, siteIds ? [...siteIds] : null],
    );
  }

  private async placements(where: string, params: unknown[]): Promise<Placement[]> {
    const rows = await this.db.query<{
      id: number;
      publisher: string;
      site_id: number | null;
      name: string;
      sizes: string[];
      slots: Record<string, string> | null;
    }>(
      `SELECT p.id, p.publisher, p.site_id, p.name, p.sizes,
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
}
