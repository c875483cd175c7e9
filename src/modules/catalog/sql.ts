import { onlyValue } from '../../db/first-value.ts';
import type { Queryable } from '../../db/index.ts';
import { type Paged, pagedRows } from '../../db/paged.ts';
import {
  type ColumnValues,
  item,
  type PageArgs,
  type Row,
  TOPLIST_SELECT,
  toplist,
  tracker,
  UPDATABLE,
  type UpdatableTable,
} from './rows.ts';
import type { Toplist, ToplistItem, Tracker } from './types.ts';

/** SQL helpers shared by the catalog repositories. Every method runs on the Queryable given (the db or an open transaction). */
export class CatalogSql {
  constructor(protected readonly db: Queryable) {}

  /** The same repository bound to a transaction. */
  with(q: Queryable): this {
    return new (this.constructor as new (q: Queryable) => this)(q);
  }

  /** Generic PATCH: sets only whitelisted columns; returns false when the row does not exist. */
  async update<T extends UpdatableTable>(table: T, id: number, values: ColumnValues<T>): Promise<boolean> {
    const columns = UPDATABLE[table] as Record<string, string>;
    const sets: string[] = [];
    const params: unknown[] = [id];
    for (const [field, value] of Object.entries(values)) {
      const column = columns[field];
      if (!column || value === undefined) continue;
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    }
    const stamp = table === 'toplists' ? 'draft_updated_at = now()' : 'updated_at = now()';
    const rows = await this.db.query(
      `UPDATE ${table} SET ${[...sets, stamp].join(', ')} WHERE id = $1 RETURNING id`,
      params,
    );
    return rows.length === 1;
  }

  async exists(
    table:
      | 'owners'
      | 'sites'
      | 'list_templates'
      | 'brands'
      | 'offers'
      | 'offer_types'
      | 'product_types'
      | 'classification_types',
    id: number,
  ): Promise<boolean> {
    const rows = await this.db.query(`SELECT 1 FROM ${table} WHERE id = $1`, [id]);
    return rows.length === 1;
  }

  protected async insertMapped(table: UpdatableTable, v: Record<string, unknown>): Promise<number> {
    const columns: Record<string, string> = {
      ...(UPDATABLE[table] as Record<string, string>),
      siteId: 'site_id',
      offerId: 'offer_id',
    };
    const cols: string[] = [];
    const params: unknown[] = [];
    for (const [field, value] of Object.entries(v)) {
      const column = columns[field];
      if (!column || value === undefined) continue;
      cols.push(column);
      params.push(value);
    }
    return onlyValue<number>(
      this.db,
      `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${params.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING id`,
      params,
    );
  }

  /** The first row a query answers, mapped; undefined when it answers none. */
  protected async first<T>(sql: string, params: unknown[], map: (r: Row) => T): Promise<T | undefined> {
    const [r] = await this.db.query(sql, params);
    return r && map(r);
  }

  protected async paged<T>(
    select: string,
    order: string,
    params: unknown[],
    p: PageArgs,
    map: (r: Row) => T,
  ): Promise<Paged<T>> {
    const n = params.length;
    const page = await pagedRows<Row>(p, (w) =>
      this.db.query<Row & { total: number }>(
        `SELECT x.*, count(*) OVER ()::int AS total FROM (${select}) x ${order.replace(/\b[a-z]\./g, 'x.')} LIMIT $${n + 1} OFFSET $${n + 2}`,
        [...params, w.limit, w.offset],
      ),
    );
    return { rows: page.rows.map(map), total: page.total };
  }

  protected async trackersOf(offerIds: number[]): Promise<Map<number, Tracker[]>> {
    const out = new Map<number, Tracker[]>();
    if (!offerIds.length) return out;
    const rows = await this.db.query('SELECT * FROM trackers WHERE offer_id = ANY($1::int[]) ORDER BY id', [
      offerIds,
    ]);
    for (const r of rows) {
      const t = tracker(r);
      out.set(t.offerId, [...(out.get(t.offerId) ?? []), t]);
    }
    return out;
  }

  async itemsOf(toplistId: number): Promise<ToplistItem[]> {
    const rows = await this.db.query('SELECT * FROM toplist_items WHERE toplist_id = $1 ORDER BY position', [
      toplistId,
    ]);
    return rows.map(item);
  }

  /** A toplist with its draft items (read by the editorial API and by publishing). */
  async getToplist(id: number): Promise<Toplist | undefined> {
    const [r] = await this.db.query(`${TOPLIST_SELECT} WHERE t.id = $1`, [id]);
    if (!r) return undefined;
    return toplist(r, await this.itemsOf(id));
  }
}
