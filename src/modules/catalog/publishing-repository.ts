import { sql } from 'kysely';
import { runNamed } from '../../db/kysely.ts';
import type { Paged } from '../../db/paged.ts';
import { brand, offer, type PageArgs, toplist } from './rows.ts';
import { CatalogSql } from './sql.ts';
import type { Brand, EditionMeta, EditionSnapshot, Offer, ResolvedTrackingLink, Toplist } from './types.ts';

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
   * toplist, owner, template, site, items with brand, offer and trackers.
   */
  async editionSnapshot(toplistId: number): Promise<EditionSnapshot | undefined> {
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
    const items = await this.itemsOf(toplistId);
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
  ): Promise<{ editionId: number; siteId: number; document: string; base: string }[]> {
    const base = sql<string>`COALESCE(s.tracking_base_url, ${defaultBase})`;
    const rows = await this.sql
      .selectFrom('toplists as t')
      .innerJoin('editions as e', 'e.id', 't.live_edition_id')
      .innerJoin('sites as s', 's.id', 't.site_id')
      .select(['e.id as editionId', 't.site_id as siteId', 'e.document', base.as('base')])
      .$if(siteId !== undefined, (q) => q.where('t.site_id', '=', siteId!))
      .where('e.tracking_base', 'is distinct from', base)
      .orderBy('e.id')
      .forUpdate('e')
      .execute();
    return rows;
  }

  /** Replaces an edition's stored document after its links were re-rendered; its ETag changes with the revision. */
  async rerenderEdition(editionId: number, document: string, base: string): Promise<void> {
    await this.sql
      .updateTable('editions')
      .set((eb) => ({ document, tracking_base: base, render_rev: eb('render_rev', '+', 1) }))
      .where('id', '=', editionId)
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
