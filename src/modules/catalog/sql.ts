import { type ExpressionBuilder, type SelectQueryBuilder, type StringReference, sql } from 'kysely';
import type { Queryable } from '../../db/index.ts';
import { kysely, type Sql } from '../../db/kysely.ts';
import { type Paged, pagedRows } from '../../db/paged.ts';
import type { DB } from '../../db/schema.ts';
import { containsPattern } from '../../lib/schema-parts.ts';
import {
  type ColumnValues,
  item,
  type PageArgs,
  toplist,
  tracker,
  UPDATABLE,
  type UpdatableTable,
} from './rows.ts';
import type { Toplist, ToplistItem, Tracker } from './types.ts';

type NamedTable = 'product_types' | 'classification_types' | 'offer_types';

/**
 * The rows whose `columns` contain the page's search text, case-insensitively (LIKE's `%`, `_`
 * and `\` match literally); every row when the page asks for no search.
 */
export function searching<D, TB extends keyof D>(
  eb: ExpressionBuilder<D, TB>,
  p: PageArgs,
  columns: readonly StringReference<D, TB>[],
) {
  if (p.search === undefined) return eb.lit(true);
  const pattern = containsPattern(p.search);
  return eb.or(columns.map((c) => sql<boolean>`${sql.ref(c)} ILIKE ${pattern}`));
}

/** SQL helpers shared by the catalog repositories. Every method runs on the Queryable given (the db or an open transaction). */
export class CatalogSql {
  protected readonly sql: Sql;

  constructor(protected readonly db: Queryable) {
    this.sql = kysely(db);
  }

  /** The same repository bound to a transaction. */
  with(q: Queryable): this {
    return new (this.constructor as new (q: Queryable) => this)(q);
  }

  /** Generic PATCH: sets only whitelisted columns; returns false when the row does not exist. */
  async update<T extends UpdatableTable>(table: T, id: number, values: ColumnValues<T>): Promise<boolean> {
    const set = this.columnsOf(table, values as Record<string, unknown>);
    set[table === 'toplists' ? 'draft_updated_at' : 'updated_at'] = sql`now()`;
    // The columns were checked where UPDATABLE names them and the values where ColumnValues types them.
    const row = await this.sql
      .updateTable(table as UpdatableTable)
      .set(set)
      .where('id', '=', id)
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  async exists(table: 'owners' | 'sites' | 'list_templates' | 'brands' | 'offers' | NamedTable, id: number) {
    const row = await this.sql
      // One of these tables, typed as one with the same columns used here (Kysely types one table at a time).
      .selectFrom(table as 'owners')
      .select(sql.lit(1).as('one'))
      .where('id', '=', id)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Inserts the given fields of a record (plus its parent's id); returns the new row's id. */
  protected async insertMapped(
    table: UpdatableTable,
    values: Record<string, unknown>,
    parent: { site_id: number } | { offer_id: number } | Record<never, never> = {},
  ): Promise<number> {
    const row = await this.sql
      // The columns were checked where UPDATABLE names them and the values where ColumnValues types them.
      .insertInto(table as 'owners')
      .values({ ...this.columnsOf(table, values), ...parent } as never)
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** Field values by column name: only the table's whitelisted fields that are set. */
  private columnsOf(table: UpdatableTable, values: Record<string, unknown>): Record<string, unknown> {
    const columns: Record<string, unknown> = {};
    for (const [field, column] of Object.entries(UPDATABLE[table] as Record<string, string>)) {
      if (values[field] !== undefined) columns[column] = values[field];
    }
    return columns;
  }

  /** One page of `query` (ordered already) with how many rows it matches in all. */
  protected async paged<O, T>(
    // biome-ignore lint/suspicious/noExplicitAny: any tables joined; the page only adds a column and a window
    query: SelectQueryBuilder<DB, any, O>,
    p: PageArgs,
    map: (r: O) => T,
  ): Promise<Paged<T>> {
    const page = await pagedRows<O>(
      p,
      (w) =>
        query
          .select(sql<number>`count(*) OVER ()::int`.as('total'))
          .limit(w.limit)
          .offset(w.offset)
          .execute() as Promise<(O & { total: number })[]>,
    );
    return { rows: page.rows.map(map), total: page.total };
  }

  protected async trackersOf(offerIds: number[]): Promise<Map<number, Tracker[]>> {
    const out = new Map<number, Tracker[]>();
    if (!offerIds.length) return out;
    const rows = await this.sql
      .selectFrom('trackers')
      .selectAll()
      .where('offer_id', '=', sql<number>`ANY(${offerIds}::int[])`)
      .orderBy('id')
      .execute();
    for (const r of rows) {
      const t = tracker(r);
      out.set(t.offerId, [...(out.get(t.offerId) ?? []), t]);
    }
    return out;
  }

  async itemsOf(toplistId: number): Promise<ToplistItem[]> {
    const rows = await this.sql
      .selectFrom('toplist_items')
      .selectAll()
      .where('toplist_id', '=', toplistId)
      .orderBy('position')
      .execute();
    return rows.map(item);
  }

  /** Offers with their type's name and their expiry date as the API shows it. */
  protected offers() {
    return this.sql
      .selectFrom('offers as o')
      .innerJoin('offer_types as ot', 'ot.id', 'o.offer_type_id')
      .selectAll('o')
      .select([
        sql<string>`to_char(o.bonus_expiry_date, 'YYYY-MM-DD')`.as('bonus_expiry_text'),
        'ot.name as offer_type_name',
      ]);
  }

  /** Templates with the names of their product and classification types. */
  protected templates() {
    return this.sql
      .selectFrom('list_templates as t')
      .innerJoin('product_types as pt', 'pt.id', 't.product_type_id')
      .innerJoin('classification_types as ct', 'ct.id', 't.classification_type_id')
      .selectAll('t')
      .select(['pt.name as product_type', 'ct.name as classification_type']);
  }

  /** Toplists with the version of their live edition. */
  protected toplists() {
    return this.sql
      .selectFrom('toplists as t')
      .leftJoin('editions as e', 'e.id', 't.live_edition_id')
      .selectAll('t')
      .select('e.version as live_version');
  }

  /** A toplist with its draft items (read by the editorial API and by publishing). */
  async getToplist(id: number): Promise<Toplist | undefined> {
    const r = await this.toplists().where('t.id', '=', id).executeTakeFirst();
    if (!r) return undefined;
    return toplist(r, await this.itemsOf(id));
  }
}
