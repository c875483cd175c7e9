import { onlyValue } from '../../db/first-value.ts';
import type { Paged } from '../../db/paged.ts';
import { containsPattern } from '../../lib/schema-parts.ts';
import {
  brand,
  OFFER_SELECT,
  offer,
  owner,
  type PageArgs,
  site,
  TEMPLATE_SELECT,
  TOPLIST_SELECT,
  template,
  toplist,
  type UPDATABLE,
} from './rows.ts';
import { CatalogSql } from './sql.ts';
import type { Brand, NamedType, Offer, Owner, Site, Template, Toplist } from './types.ts';

/**
 * The WHERE of a list: `conds` (each with `?` for its value) and, when the page asks for a search,
 * any of `searchable` containing it, case-insensitively (LIKE's `%`, `_` and `\` match literally).
 */
function whereOf(
  p: PageArgs,
  searchable: readonly string[],
  conds: [sql: string, value: unknown][] = [],
): { where: string; params: unknown[] } {
  const params: unknown[] = [];
  const parts = conds.map(([sql, v]) => {
    params.push(v);
    return sql.replace('?', `$${params.length}`);
  });
  if (p.search !== undefined) {
    params.push(containsPattern(p.search));
    parts.push(`(${searchable.map((c) => `${c} ILIKE $${params.length}`).join(' OR ')})`);
  }
  return { where: parts.length ? `WHERE ${parts.join(' AND ')}` : '', params };
}

/** SQL of the editorial catalog: owners, sites, named types, templates, brands, offers with trackers, toplist settings. */
export class EditorialRepository extends CatalogSql {
  async insertOwner(v: { name: string; externalId: string | null }): Promise<number> {
    return onlyValue<number>(this.db, 'INSERT INTO owners (name, external_id) VALUES ($1, $2) RETURNING id', [
      v.name,
      v.externalId,
    ]);
  }

  async getOwner(id: number): Promise<Owner | undefined> {
    return this.first('SELECT * FROM owners WHERE id = $1', [id], owner);
  }

  async listOwners(p: PageArgs): Promise<Paged<Owner>> {
    const { where, params } = whereOf(p, ['name']);
    return this.paged(`SELECT * FROM owners ${where}`, 'ORDER BY id', params, p, owner);
  }

  async insertSite(v: { domain: string; name: string }): Promise<number> {
    return onlyValue<number>(this.db, 'INSERT INTO sites (domain, name) VALUES ($1, $2) RETURNING id', [
      v.domain,
      v.name,
    ]);
  }

  async getSite(id: number): Promise<Site | undefined> {
    return this.first('SELECT * FROM sites WHERE id = $1', [id], site);
  }

  async findSiteByDomain(domain: string): Promise<Site | undefined> {
    return this.first('SELECT * FROM sites WHERE domain = $1', [domain], site);
  }

  async listSites(p: PageArgs): Promise<Paged<Site>> {
    const { where, params } = whereOf(p, ['name', 'domain']);
    return this.paged(`SELECT * FROM sites ${where}`, 'ORDER BY id', params, p, site);
  }

  async insertNamedType(
    table: 'product_types' | 'classification_types' | 'offer_types',
    name: string,
  ): Promise<NamedType> {
    const [r] = await this.db.query<NamedType>(`INSERT INTO ${table} (name) VALUES ($1) RETURNING id, name`, [
      name,
    ]);
    return r!;
  }

  async listNamedTypes(
    table: 'product_types' | 'classification_types' | 'offer_types',
  ): Promise<NamedType[]> {
    return this.db.query<NamedType>(`SELECT id, name FROM ${table} ORDER BY id`);
  }

  async insertTemplate(v: {
    name: string;
    externalId: string | null;
    productTypeId: number;
    classificationTypeId: number;
  }): Promise<number> {
    return onlyValue<number>(
      this.db,
      'INSERT INTO list_templates (name, external_id, product_type_id, classification_type_id) VALUES ($1, $2, $3, $4) RETURNING id',
      [v.name, v.externalId, v.productTypeId, v.classificationTypeId],
    );
  }

  async getTemplate(id: number): Promise<Template | undefined> {
    return this.first(`${TEMPLATE_SELECT} WHERE t.id = $1`, [id], template);
  }

  async listTemplates(p: PageArgs): Promise<Paged<Template>> {
    const { where, params } = whereOf(p, ['t.name']);
    return this.paged(`${TEMPLATE_SELECT} ${where}`, 'ORDER BY t.id', params, p, template);
  }

  async insertBrand(v: Record<keyof (typeof UPDATABLE)['brands'], unknown>): Promise<number> {
    return this.insertMapped('brands', v);
  }

  async getBrand(id: number): Promise<Brand | undefined> {
    return this.first('SELECT * FROM brands WHERE id = $1', [id], brand);
  }

  async listBrands(p: PageArgs): Promise<Paged<Brand>> {
    const { where, params } = whereOf(p, ['name', 'slug']);
    return this.paged(`SELECT * FROM brands ${where}`, 'ORDER BY id', params, p, brand);
  }

  async insertOffer(v: Record<keyof (typeof UPDATABLE)['offers'], unknown>): Promise<number> {
    return this.insertMapped('offers', v);
  }

  async insertTracker(
    offerId: number,
    v: Record<keyof (typeof UPDATABLE)['trackers'], unknown>,
  ): Promise<number> {
    return this.insertMapped('trackers', { ...v, offerId });
  }

  async deleteTracker(offerId: number, trackerId: number): Promise<boolean> {
    const rows = await this.db.query('DELETE FROM trackers WHERE id = $1 AND offer_id = $2 RETURNING id', [
      trackerId,
      offerId,
    ]);
    return rows.length === 1;
  }

  async trackerBelongsTo(offerId: number, trackerId: number): Promise<boolean> {
    const rows = await this.db.query('SELECT 1 FROM trackers WHERE id = $1 AND offer_id = $2', [
      trackerId,
      offerId,
    ]);
    return rows.length === 1;
  }

  async getOffer(id: number): Promise<Offer | undefined> {
    const [r] = await this.db.query(`${OFFER_SELECT} WHERE o.id = $1`, [id]);
    if (!r) return undefined;
    return offer(r, await this.trackersOf([id]).then((m) => m.get(id) ?? []));
  }

  async listOffers(p: PageArgs, brandId?: number): Promise<Paged<Offer>> {
    // An offer has no name: its text and external id are what an editor searches by.
    const { where, params } = whereOf(
      p,
      ['o.offer_text', 'o.external_id'],
      brandId === undefined ? [] : [['o.brand_id = ?', brandId]],
    );
    const page = await this.paged(`${OFFER_SELECT} ${where}`, 'ORDER BY o.id', params, p, (r) => r);
    const trackers = await this.trackersOf(page.rows.map((r) => r.id as number));
    return { total: page.total, rows: page.rows.map((r) => offer(r, trackers.get(r.id as number) ?? [])) };
  }

  /** Which of these tracker ids exist. */
  async existingTrackerIds(ids: readonly number[]): Promise<number[]> {
    const rows = await this.db.query<{ id: number }>('SELECT id FROM trackers WHERE id = ANY($1::int[])', [
      ids,
    ]);
    return rows.map((r) => r.id);
  }

  async insertToplist(v: Record<keyof (typeof UPDATABLE)['toplists'] | 'siteId', unknown>): Promise<number> {
    return this.insertMapped('toplists', v);
  }

  async listToplists(
    p: PageArgs,
    f: { siteId?: number; templateId?: number; geoType?: string; geoCode?: string },
  ): Promise<Paged<Toplist>> {
    const conds: [string, unknown][] = [
      ['t.site_id = ?', f.siteId],
      ['t.template_id = ?', f.templateId],
      ['t.geo_type = ?', f.geoType],
      ['t.geo_code = ?', f.geoCode],
    ];
    const { where, params } = whereOf(
      p,
      ['t.name', 't.slug'],
      conds.filter(([, v]) => v !== undefined),
    );
    const page = await this.paged(`${TOPLIST_SELECT} ${where}`, 'ORDER BY t.id', params, p, (r) => r);
    return { total: page.total, rows: page.rows.map((r) => toplist(r, [])) };
  }
}
