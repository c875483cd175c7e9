import { sql } from 'kysely';
import { JsonParam } from '../../db/index.ts';
import { runNamed } from '../../db/kysely.ts';
import type { Paged } from '../../db/paged.ts';
import type { Violation } from '../compliance/rules.ts';
import { brand, offer, type PageArgs, toplist } from './rows.ts';
import { CatalogSql } from './sql.ts';
import type {
  Brand,
  EditionMeta,
  EditionSnapshot,
  Offer,
  ResolvedTrackingLink,
  Toplist,
  ToplistItem,
} from './types.ts';

/** An item withheld from serving in a country, why, and since when (RFC 3339; absent on rows written before it was kept). */
export type Withheld = Violation & { since?: string };

/** One visitor variant of a live edition: the items it withholds (sorted ids), for which countries, and why. */
export interface StoredVariant {
  id: number;
  itemKey: string;
  countries: string[];
  withheld: Withheld[];
}

/** SQL of publishing: draft items, immutable editions, the live edition, tracking links. */
export class PublishingRepository extends CatalogSql {
  /** Locks the toplist row for the rest of the transaction (publish, item edits). */
  async lockToplist(id: number): Promise<boolean> {
    const row = await this.sql
      .selectFrom('toplists')
      .select('id')
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    return row !== undefined;
  }

  async itemIdsOf(toplistId: number): Promise<Set<number>> {
    const rows = await this.sql
      .selectFrom('toplist_items')
      .select('id')
      .where('toplist_id', '=', toplistId)
      .execute();
    return new Set(rows.map((r) => r.id));
  }

  /** The brand an offer belongs to, or undefined when the offer does not exist. */
  async offerBrand(offerId: number): Promise<number | undefined> {
    const row = await this.sql
      .selectFrom('offers')
      .select('brand_id')
      .where('id', '=', offerId)
      .executeTakeFirst();
    return row?.brand_id;
  }

  /** Replaces the draft items: keeps ids of items that carry one, inserts the rest, deletes the missing. */
  async replaceItems(
    toplistId: number,
    items: {
      id?: number;
      position: number;
      brandId: number;
      offerId: number;
      dealId: number;
      isLocked: boolean;
    }[],
  ): Promise<void> {
    const keep = items.filter((i) => i.id !== undefined).map((i) => i.id!);
    await this.sql
      .deleteFrom('toplist_items')
      .where('toplist_id', '=', toplistId)
      .where(sql<boolean>`NOT (id = ANY(${keep}::int[]))`)
      .execute();
    for (const i of items) {
      const columns = {
        position: i.position,
        brand_id: i.brandId,
        offer_id: i.offerId,
        deal_id: i.dealId,
        is_locked: i.isLocked,
      };
      if (i.id !== undefined) {
        await this.sql
          .updateTable('toplist_items')
          .set(columns)
          .where('id', '=', i.id)
          .where('toplist_id', '=', toplistId)
          .execute();
      } else {
        await this.sql
          .insertInto('toplist_items')
          .values({ toplist_id: toplistId, ...columns })
          .execute();
      }
    }
    await this.sql
      .updateTable('toplists')
      .set({ draft_updated_at: sql`now()` })
      .where('id', '=', toplistId)
      .execute();
  }

  /**
   * Everything the wire document of a toplist needs, read in a handful of queries:
   * toplist, owner, template, site, items with brand, offer and trackers. `items` in place of the
   * stored draft items judges an unsaved draft.
   */
  async editionSnapshot(toplistId: number, items?: ToplistItem[]): Promise<EditionSnapshot | undefined> {
    const t = await this.toplists()
      .innerJoin('owners as o', 'o.id', 't.owner_id')
      .innerJoin('sites as s', 's.id', 't.site_id')
      .innerJoin('list_templates as lt', 'lt.id', 't.template_id')
      .innerJoin('product_types as pt', 'pt.id', 'lt.product_type_id')
      .innerJoin('classification_types as ct', 'ct.id', 'lt.classification_type_id')
      .select((eb) => [
        'o.name as owner_name',
        's.domain as site_domain',
        's.tracking_base_url as site_tracking_base',
        eb
          .fn<EditionSnapshot['template']>('json_build_object', [
            sql.lit('id'),
            'lt.id',
            sql.lit('name'),
            'lt.name',
            sql.lit('productTypeId'),
            'lt.product_type_id',
            sql.lit('productType'),
            'pt.name',
            sql.lit('classificationTypeId'),
            'lt.classification_type_id',
            sql.lit('classificationType'),
            'ct.name',
          ])
          .as('template'),
      ])
      .where('t.id', '=', toplistId)
      .executeTakeFirst();
    if (!t) return undefined;
    items ??= await this.itemsOf(toplistId);
    const brandIds = [...new Set(items.map((i) => i.brandId))];
    const offerIds = [...new Set(items.map((i) => i.offerId))];
    const brands = new Map<number, Brand>();
    const brandRows = await this.sql
      .selectFrom('brands')
      .selectAll()
      .where('id', '=', sql<number>`ANY(${brandIds}::int[])`)
      .execute();
    for (const r of brandRows) brands.set(r.id, brand(r));
    const trackers = await this.trackersOf(offerIds);
    const offers = new Map<number, Offer>();
    const offerRows = await this.offers().where('o.id', '=', sql<number>`ANY(${offerIds}::int[])`).execute();
    for (const r of offerRows) offers.set(r.id, offer(r, trackers.get(r.id) ?? []));
    return {
      toplist: toplist(t, items),
      ownerName: t.owner_name,
      siteDomain: t.site_domain,
      siteTrackingBase: t.site_tracking_base ?? null,
      template: t.template,
      brands,
      offers,
    };
  }

  async nextVersion(toplistId: number): Promise<number> {
    const row = await this.sql
      .selectFrom('editions')
      .select(sql<number>`COALESCE(MAX(version), 0)::int + 1`.as('v'))
      .where('toplist_id', '=', toplistId)
      .executeTakeFirstOrThrow();
    return row.v;
  }

  async insertEdition(v: {
    toplistId: number;
    version: number;
    document: string;
    publishedAt: Date;
    publishedBy: number | null;
    trackingBase: string;
    /** The compliance exception this edition was published under, if any. */
    complianceOverride?: unknown;
  }): Promise<number> {
    const row = await this.sql
      .insertInto('editions')
      .values({
        toplist_id: v.toplistId,
        version: v.version,
        document: v.document,
        published_at: v.publishedAt,
        published_by: v.publishedBy,
        tracking_base: v.trackingBase,
        compliance_override: v.complianceOverride ? sql`${new JsonParam(v.complianceOverride)}::jsonb` : null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /**
   * Live toplists whose publish window opened or closed in (since, until], counting only
   * boundaries later than the live edition's publish (items are not loaded).
   */
  async windowBoundaries(since: Date, until: Date, limit: number): Promise<Toplist[]> {
    const opens = (column: 't.live_from' | 't.live_until') =>
      sql<boolean>`(${sql.ref(column)} > ${since} AND ${sql.ref(column)} <= ${until} AND ${sql.ref(column)} > e.published_at)`;
    const query = this.toplists()
      .where('e.id', 'is not', null)
      .where((eb) => eb.or([opens('t.live_from'), opens('t.live_until')]))
      .orderBy('t.id')
      .limit(limit);
    // Asked once a minute by the webhook job: planned once (~6 ms a time on PGlite unprepared).
    const rows = await runNamed(this.db, query, 'window_boundaries');
    return rows.map((r) => toplist(r, []));
  }

  /** Live editions of a site (or of every site) whose links were rendered with another base than the site's effective one. */
  async staleLiveEditions(
    siteId: number | undefined,
    defaultBase: string,
  ): Promise<
    { editionId: number; siteId: number; document: string; publishedDocument: string | null; base: string }[]
  > {
    const base = sql<string>`COALESCE(s.tracking_base_url, ${defaultBase})`;
    const rows = await this.sql
      .selectFrom('toplists as t')
      .innerJoin('editions as e', 'e.id', 't.live_edition_id')
      .innerJoin('sites as s', 's.id', 't.site_id')
      .select([
        'e.id as editionId',
        't.site_id as siteId',
        'e.document',
        'e.published_document as publishedDocument',
        base.as('base'),
      ])
      .$if(siteId !== undefined, (q) => q.where('t.site_id', '=', siteId!))
      .where('e.tracking_base', 'is distinct from', base)
      .orderBy('e.id')
      .forUpdate('e')
      .execute();
    return rows;
  }

  /** Replaces an edition's stored documents after its links were re-rendered; its ETag changes with the revision. */
  async rerenderEdition(
    editionId: number,
    document: string,
    publishedDocument: string | null,
    base: string,
  ): Promise<void> {
    await this.sql
      .updateTable('editions')
      .set((eb) => ({
        document,
        published_document: publishedDocument,
        tracking_base: base,
        render_rev: eb('render_rev', '+', 1),
      }))
      .where('id', '=', editionId)
      .execute();
  }

  /**
   * A batch of live editions after `afterId` (by edition id), locked for the rest of the
   * transaction, with what the compliance re-check needs: the document as published, what is
   * withheld now and the override it was published under.
   */
  async liveForCompliance(afterId: number, limit: number) {
    return this.sql
      .selectFrom('toplists as t')
      .innerJoin('editions as e', 'e.id', 't.live_edition_id')
      .select([
        'e.id as editionId',
        't.id as toplistId',
        't.site_id as siteId',
        't.slug',
        't.template_id as templateId',
        't.geo_type as geoType',
        't.geo_code as geoCode',
        't.live_from as liveFrom',
        't.live_until as liveUntil',
        'e.version',
        sql<string>`COALESCE(e.published_document, e.document)`.as('published'),
        'e.withheld',
        'e.compliance_override as override',
      ])
      .where('e.id', '>', afterId)
      .orderBy('e.id')
      .limit(limit)
      .forUpdate('e')
      .execute();
  }

  /**
   * Serves `document` for a live edition instead of what it served: items withheld (or served
   * again). `publishedDocument` is kept while anything is withheld; the ETag changes with the
   * revision and the toplist's `updated_at` with the change.
   */
  async setServed(
    editionId: number,
    toplistId: number,
    v: { document: string; publishedDocument: string | null; withheld: unknown[]; at: Date },
  ): Promise<void> {
    await this.sql
      .updateTable('editions')
      .set((eb) => ({
        document: v.document,
        published_document: v.publishedDocument,
        withheld: sql`${new JsonParam(v.withheld)}::jsonb`,
        render_rev: eb('render_rev', '+', 1),
      }))
      .where('id', '=', editionId)
      .execute();
    await this.sql.updateTable('toplists').set({ updated_at: v.at }).where('id', '=', toplistId).execute();
  }

  /** The visitor variants of a live edition (what a global list withholds per visitor country). */
  async variantsOf(editionId: number): Promise<StoredVariant[]> {
    const rows = await this.sql
      .selectFrom('edition_variants')
      .select(['id', 'item_key', 'countries', 'withheld'])
      .where('edition_id', '=', editionId)
      .orderBy('id')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      itemKey: r.item_key,
      countries: r.countries,
      withheld: r.withheld as unknown as Withheld[],
    }));
  }

  async insertVariant(v: {
    editionId: number;
    itemKey: string;
    countries: string[];
    withheld: unknown[];
    document: string;
  }): Promise<void> {
    await this.sql
      .insertInto('edition_variants')
      .values({
        edition_id: v.editionId,
        item_key: v.itemKey,
        countries: v.countries,
        withheld: sql`${new JsonParam(v.withheld)}::jsonb`,
        document: v.document,
      })
      .execute();
  }

  /** Which visitor countries get a variant and why; its document (the same withheld items) stays. */
  async updateVariant(id: number, countries: string[], withheld: unknown[]): Promise<void> {
    await this.sql
      .updateTable('edition_variants')
      .set({ countries, withheld: sql`${new JsonParam(withheld)}::jsonb` })
      .where('id', '=', id)
      .execute();
  }

  async deleteVariant(id: number): Promise<void> {
    await this.sql.deleteFrom('edition_variants').where('id', '=', id).execute();
  }

  /** Deletes the visitor variants of the toplist's editions but `keep` (an edition no longer live is never served again). */
  async dropVariants(toplistId: number, keep: number | null): Promise<void> {
    await this.sql
      .deleteFrom('edition_variants')
      .where('edition_id', 'in', (eb) =>
        eb
          .selectFrom('editions')
          .select('id')
          .where('toplist_id', '=', toplistId)
          .$if(keep !== null, (q) => q.where('id', '<>', keep!)),
      )
      .execute();
  }

  /** The stored documents of an edition's visitor variants (for re-rendering their links). */
  variantDocuments(editionId: number): Promise<{ id: number; document: string }[]> {
    return this.sql
      .selectFrom('edition_variants')
      .select(['id', 'document'])
      .where('edition_id', '=', editionId)
      .orderBy('id')
      .execute();
  }

  /** Replaces a variant's stored document; its ETag changes with the revision. */
  async rerenderVariant(id: number, document: string): Promise<void> {
    await this.sql
      .updateTable('edition_variants')
      .set((eb) => ({ document, rev: eb('rev', '+', 1) }))
      .where('id', '=', id)
      .execute();
  }

  async setLiveEdition(toplistId: number, editionId: number | null, updatedAt: Date | null): Promise<void> {
    await this.sql
      .updateTable('toplists')
      .set({ live_edition_id: editionId, ...(updatedAt ? { updated_at: updatedAt } : {}) })
      .where('id', '=', toplistId)
      .execute();
  }

  /** A page of a toplist's editions, newest first, with how many it has. */
  listEditions(toplistId: number, page: PageArgs): Promise<Paged<EditionMeta>> {
    const query = this.sql
      .selectFrom('editions')
      .select(['id', 'version', 'published_at', 'published_by'])
      .where('toplist_id', '=', toplistId)
      .orderBy('version', 'desc');
    return this.paged(query, page, (r) => ({
      id: r.id,
      version: String(r.version),
      publishedAt: r.published_at.toISOString(),
      publishedBy: r.published_by,
    }));
  }

  async getEditionDocument(toplistId: number, version: number): Promise<string | undefined> {
    const row = await this.sql
      .selectFrom('editions')
      .select('document')
      .where('toplist_id', '=', toplistId)
      .where('version', '=', version)
      .executeTakeFirst();
    return row?.document;
  }

  /**
   * The slugs of the tracking links for these (tracker, position) pairs of one toplist,
   * minted on first use and stable across republishes.
   */
  async ensureTrackingLinks(
    siteId: number,
    toplistId: number,
    wanted: { trackerId: number; position: number; slug: string }[],
  ): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (!wanted.length) return out;
    const w = sql<{
      slug: string;
      tracker_id: number;
      position: number;
    }>`unnest(${wanted.map((x) => x.slug)}::text[], ${wanted.map((x) => x.trackerId)}::int[], ${wanted.map((x) => x.position)}::int[])`;
    await this.sql
      .insertInto('tracking_links')
      .columns(['slug', 'tracker_id', 'site_id', 'toplist_id', 'position'])
      .expression(
        this.sql
          .selectFrom(w.as(sql`w(slug, tracker_id, position)`))
          .select([
            'w.slug',
            'w.tracker_id',
            sql.val(siteId).as('site_id'),
            sql.val(toplistId).as('toplist_id'),
            'w.position',
          ]),
      )
      .onConflict((oc) => oc.columns(['tracker_id', 'site_id', 'toplist_id', 'position']).doNothing())
      .execute();
    const rows = await this.sql
      .selectFrom('tracking_links')
      .select(['slug', 'tracker_id', 'position'])
      .where('site_id', '=', siteId)
      .where('toplist_id', '=', toplistId)
      .execute();
    for (const r of rows) out.set(`${r.tracker_id}:${r.position}`, r.slug);
    return out;
  }

  /** A tracking link by its public slug, with the tracker's landing URL and its offer and brand. */
  async resolveTrackingLink(slug: string): Promise<ResolvedTrackingLink | undefined> {
    const query = this.sql
      .selectFrom('tracking_links as l')
      .innerJoin('trackers as t', 't.id', 'l.tracker_id')
      .innerJoin('offers as o', 'o.id', 't.offer_id')
      .select([
        'l.id as linkId',
        'l.tracker_id as trackerId',
        't.offer_id as offerId',
        'o.brand_id as brandId',
        'l.site_id as siteId',
        'l.toplist_id as toplistId',
        'l.position',
        't.landing_url as landingUrl',
      ])
      .where('l.slug', '=', slug);
    // Read for every link a click meets (then cached): planned once, not per read.
    const [r] = await runNamed(this.db, query, 'resolve_tracking_link');
    return r;
  }
}
