import { sql } from 'kysely';
import type { Paged } from '../../db/paged.ts';
import { brand, type ColumnValues, offer, owner, type PageArgs, site, template, toplist } from './rows.ts';
import { CatalogSql, searching } from './sql.ts';
import type { Brand, NamedType, Offer, Owner, Site, Template, Toplist } from './types.ts';

type NamedTable = 'product_types' | 'classification_types' | 'offer_types';

/** SQL of the editorial catalog: owners, sites, named types, templates, brands, offers with trackers, toplist settings. */
export class EditorialRepository extends CatalogSql {
  async insertOwner(v: { name: string; externalId: string | null }): Promise<number> {
    const row = await this.sql
      .insertInto('owners')
      .values({ name: v.name, external_id: v.externalId })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  async getOwner(id: number): Promise<Owner | undefined> {
    const r = await this.sql.selectFrom('owners').selectAll().where('id', '=', id).executeTakeFirst();
    return r && owner(r);
  }

  async listOwners(p: PageArgs): Promise<Paged<Owner>> {
    const query = this.sql
      .selectFrom('owners')
      .selectAll()
      .where((eb) => searching(eb, p, ['name']))
      .orderBy('id');
    return this.paged(query, p, owner);
  }

  async insertSite(v: {
    domain: string;
    name: string;
    complianceFallbackUrl: string | null;
  }): Promise<number> {
    const row = await this.sql
      .insertInto('sites')
      .values({ domain: v.domain, name: v.name, compliance_fallback_url: v.complianceFallbackUrl })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  async getSite(id: number): Promise<Site | undefined> {
    const r = await this.sql.selectFrom('sites').selectAll().where('id', '=', id).executeTakeFirst();
    return r && site(r);
  }

  async findSiteByDomain(domain: string): Promise<Site | undefined> {
    const r = await this.sql.selectFrom('sites').selectAll().where('domain', '=', domain).executeTakeFirst();
    return r && site(r);
  }

  /** A page of sites, only those of `siteIds` when given (a person limited to some sites). */
  async listSites(p: PageArgs, siteIds?: readonly number[]): Promise<Paged<Site>> {
    const query = this.sql
      .selectFrom('sites')
      .selectAll()
      .$if(siteIds !== undefined, (q) => q.where('id', '=', sql<number>`ANY(${siteIds}::int[])`))
      .where((eb) => searching(eb, p, ['name', 'domain']))
      .orderBy('id');
    return this.paged(query, p, site);
  }

  async insertNamedType(table: NamedTable, name: string): Promise<NamedType> {
    return (
      this.sql
        // One of these tables, typed as one with the same columns used here (Kysely types one table at a time).
        .insertInto(table as 'offer_types')
        .values({ name })
        .returning(['id', 'name'])
        .executeTakeFirstOrThrow()
    );
  }

  async listNamedTypes(table: NamedTable): Promise<NamedType[]> {
    return (
      this.sql
        // One of these tables, typed as one with the same columns used here (Kysely types one table at a time).
        .selectFrom(table as 'offer_types')
        .select(['id', 'name'])
        .orderBy('id')
        .execute()
    );
  }

  async insertTemplate(v: {
    name: string;
    externalId: string | null;
    productTypeId: number;
    classificationTypeId: number;
  }): Promise<number> {
    const row = await this.sql
      .insertInto('list_templates')
      .values({
        name: v.name,
        external_id: v.externalId,
        product_type_id: v.productTypeId,
        classification_type_id: v.classificationTypeId,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  async getTemplate(id: number): Promise<Template | undefined> {
    const r = await this.templates().where('t.id', '=', id).executeTakeFirst();
    return r && template(r);
  }

  async listTemplates(p: PageArgs): Promise<Paged<Template>> {
    const query = this.templates()
      .where((eb) => searching(eb, p, ['t.name']))
      .orderBy('t.id');
    return this.paged(query, p, template);
  }

  async insertBrand(v: Required<ColumnValues<'brands'>>): Promise<number> {
    return this.insertMapped('brands', v);
  }

  async getBrand(id: number): Promise<Brand | undefined> {
    const r = await this.sql.selectFrom('brands').selectAll().where('id', '=', id).executeTakeFirst();
    return r && brand(r);
  }

  async listBrands(p: PageArgs): Promise<Paged<Brand>> {
    const query = this.sql
      .selectFrom('brands')
      .selectAll()
      .where((eb) => searching(eb, p, ['name', 'slug']))
      .orderBy('id');
    return this.paged(query, p, brand);
  }

  async insertOffer(v: Required<ColumnValues<'offers'>>): Promise<number> {
    return this.insertMapped('offers', v);
  }

  async insertTracker(offerId: number, v: Required<ColumnValues<'trackers'>>): Promise<number> {
    return this.insertMapped('trackers', v, { offer_id: offerId });
  }

  async deleteTracker(offerId: number, trackerId: number): Promise<boolean> {
    const row = await this.sql
      .deleteFrom('trackers')
      .where('id', '=', trackerId)
      .where('offer_id', '=', offerId)
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  async trackerBelongsTo(offerId: number, trackerId: number): Promise<boolean> {
    const row = await this.sql
      .selectFrom('trackers')
      .select('id')
      .where('id', '=', trackerId)
      .where('offer_id', '=', offerId)
      .executeTakeFirst();
    return row !== undefined;
  }

  async getOffer(id: number): Promise<Offer | undefined> {
    const r = await this.offers().where('o.id', '=', id).executeTakeFirst();
    if (!r) return undefined;
    return offer(r, (await this.trackersOf([id])).get(id) ?? []);
  }

  async listOffers(p: PageArgs, brandId?: number): Promise<Paged<Offer>> {
    const query = this.offers()
      .$if(brandId !== undefined, (q) => q.where('o.brand_id', '=', brandId!))
      // An offer has no name: its text and external id are what an editor searches by.
      .where((eb) => searching(eb, p, ['o.offer_text', 'o.external_id']))
      .orderBy('o.id');
    const page = await this.paged(query, p, (r) => r);
    const trackers = await this.trackersOf(page.rows.map((r) => r.id));
    return { total: page.total, rows: page.rows.map((r) => offer(r, trackers.get(r.id) ?? [])) };
  }

  /** Which of these tracker ids exist. */
  async existingTrackerIds(ids: readonly number[]): Promise<number[]> {
    const rows = await this.sql
      .selectFrom('trackers')
      .select('id')
      .where('id', '=', sql<number>`ANY(${ids}::int[])`)
      .execute();
    return rows.map((r) => r.id);
  }

  async insertToplist(v: Required<ColumnValues<'toplists'>> & { siteId: number }): Promise<number> {
    const { siteId, ...values } = v;
    return this.insertMapped('toplists', values, { site_id: siteId });
  }

  async listToplists(
    p: PageArgs,
    f: {
      siteId?: number;
      siteIds?: readonly number[];
      templateId?: number;
      geoType?: string;
      geoCode?: string;
    },
  ): Promise<Paged<Toplist>> {
    const query = this.toplists()
      .$if(f.siteId !== undefined, (q) => q.where('t.site_id', '=', f.siteId!))
      .$if(f.siteIds !== undefined, (q) => q.where('t.site_id', '=', sql<number>`ANY(${f.siteIds}::int[])`))
      .$if(f.templateId !== undefined, (q) => q.where('t.template_id', '=', f.templateId!))
      .$if(f.geoType !== undefined, (q) => q.where('t.geo_type', '=', f.geoType!))
      .$if(f.geoCode !== undefined, (q) => q.where('t.geo_code', '=', f.geoCode!))
      .where((eb) => searching(eb, p, ['t.name', 't.slug']))
      .orderBy('t.id');
    return this.paged(query, p, (r) => toplist(r, []));
  }
}
