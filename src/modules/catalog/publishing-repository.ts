import { firstValue, onlyValue } from '../../db/first-value.ts';
import type { Paged } from '../../db/paged.ts';
import { brand, iso, OFFER_SELECT, offer, type PageArgs, TOPLIST_SELECT, toplist } from './rows.ts';
import { CatalogSql } from './sql.ts';
import type { Brand, EditionMeta, EditionSnapshot, Offer, ResolvedTrackingLink, Toplist } from './types.ts';

/** SQL of publishing: draft items, immutable editions, the live edition, tracking links. */
export class PublishingRepository extends CatalogSql {
  /** Locks the toplist row for the rest of the transaction (publish, item edits). */
  async lockToplist(id: number): Promise<boolean> {
    const rows = await this.db.query('SELECT id FROM toplists WHERE id = $1 FOR UPDATE', [id]);
    return rows.length === 1;
  }

  async itemIdsOf(toplistId: number): Promise<Set<number>> {
    const rows = await this.db.query<{ id: number }>('SELECT id FROM toplist_items WHERE toplist_id = $1', [
      toplistId,
    ]);
    return new Set(rows.map((r) => r.id));
  }

  /** The brand an offer belongs to, or undefined when the offer does not exist. */
  async offerBrand(offerId: number): Promise<number | undefined> {
    return firstValue<number>(this.db, 'SELECT brand_id FROM offers WHERE id = $1', [offerId]);
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
    await this.db.query('DELETE FROM toplist_items WHERE toplist_id = $1 AND NOT (id = ANY($2::int[]))', [
      toplistId,
      keep,
    ]);
    for (const i of items) {
      if (i.id !== undefined) {
        await this.db.query(
          'UPDATE toplist_items SET position = $3, brand_id = $4, offer_id = $5, deal_id = $6, is_locked = $7 WHERE id = $1 AND toplist_id = $2',
          [i.id, toplistId, i.position, i.brandId, i.offerId, i.dealId, i.isLocked],
        );
      } else {
        await this.db.query(
          'INSERT INTO toplist_items (toplist_id, position, brand_id, offer_id, deal_id, is_locked) VALUES ($1, $2, $3, $4, $5, $6)',
          [toplistId, i.position, i.brandId, i.offerId, i.dealId, i.isLocked],
        );
      }
    }
    await this.db.query('UPDATE toplists SET draft_updated_at = now() WHERE id = $1', [toplistId]);
  }

  /**
   * Everything the wire document of a toplist needs, read in a handful of queries:
   * toplist, owner, template, site, items with brand, offer and trackers.
   */
  async editionSnapshot(toplistId: number): Promise<EditionSnapshot | undefined> {
    const [t] = await this.db.query(
      `SELECT t.*, o.name AS owner_name, s.domain AS site_domain, s.tracking_base_url AS site_tracking_base,
              json_build_object('id', lt.id, 'name', lt.name, 'productTypeId', lt.product_type_id,
                'productType', pt.name, 'classificationTypeId', lt.classification_type_id,
                'classificationType', ct.name) AS template
       FROM toplists t
       JOIN owners o ON o.id = t.owner_id
       JOIN sites s ON s.id = t.site_id
       JOIN list_templates lt ON lt.id = t.template_id
       JOIN product_types pt ON pt.id = lt.product_type_id
       JOIN classification_types ct ON ct.id = lt.classification_type_id
       WHERE t.id = $1`,
      [toplistId],
    );
    if (!t) return undefined;
    const items = await this.itemsOf(toplistId);
    const brandIds = [...new Set(items.map((i) => i.brandId))];
    const offerIds = [...new Set(items.map((i) => i.offerId))];
    const brands = new Map<number, Brand>();
    for (const r of await this.db.query('SELECT * FROM brands WHERE id = ANY($1::int[])', [brandIds])) {
      brands.set(r.id as number, brand(r));
    }
    const trackers = await this.trackersOf(offerIds);
    const offers = new Map<number, Offer>();
    for (const r of await this.db.query(`${OFFER_SELECT} WHERE o.id = ANY($1::int[])`, [offerIds])) {
      offers.set(r.id as number, offer(r, trackers.get(r.id as number) ?? []));
    }
    return {
      toplist: toplist(t, items),
      ownerName: t.owner_name as string,
      siteDomain: t.site_domain as string,
      siteTrackingBase: (t.site_tracking_base as string | null) ?? null,
      template: t.template as EditionSnapshot['template'],
      brands,
      offers,
    };
  }

  async nextVersion(toplistId: number): Promise<number> {
    return onlyValue<number>(
      this.db,
      'SELECT COALESCE(MAX(version), 0)::int + 1 AS v FROM editions WHERE toplist_id = $1',
      [toplistId],
    );
  }

  async insertEdition(v: {
    toplistId: number;
    version: number;
    document: string;
    publishedAt: Date;
    publishedBy: number | null;
    trackingBase: string;
  }): Promise<number> {
    return onlyValue<number>(
      this.db,
      'INSERT INTO editions (toplist_id, version, document, published_at, published_by, tracking_base) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id',
      [v.toplistId, v.version, v.document, v.publishedAt, v.publishedBy, v.trackingBase],
    );
  }

  /**
   * Live toplists whose publish window opened or closed in (since, until], counting only
   * boundaries later than the live edition's publish (items are not loaded).
   */
  async windowBoundaries(since: Date, until: Date, limit: number): Promise<Toplist[]> {
    const rows = await this.db.query(
      `${TOPLIST_SELECT}
       WHERE e.id IS NOT NULL AND (
         (t.live_from > $1 AND t.live_from <= $2 AND t.live_from > e.published_at) OR
         (t.live_until > $1 AND t.live_until <= $2 AND t.live_until > e.published_at))
       ORDER BY t.id LIMIT $3`,
      [since, until, limit],
      // Asked once a minute by the webhook job: planned once (~6 ms a time on PGlite unprepared).
      'window_boundaries',
    );
    return rows.map((r) => toplist(r, []));
  }

  /** Live editions of a site (or of every site) whose links were rendered with another base than the site's effective one. */
  async staleLiveEditions(
    siteId: number | undefined,
    defaultBase: string,
  ): Promise<{ editionId: number; siteId: number; document: string; base: string }[]> {
    const rows = await this.db.query(
      `SELECT e.id, t.site_id, e.document, COALESCE(s.tracking_base_url, $1) AS base
       FROM toplists t JOIN editions e ON e.id = t.live_edition_id JOIN sites s ON s.id = t.site_id
       WHERE ($2::int IS NULL OR t.site_id = $2) AND e.tracking_base IS DISTINCT FROM COALESCE(s.tracking_base_url, $1)
       ORDER BY e.id FOR UPDATE OF e`,
      [defaultBase, siteId ?? null],
    );
    return rows.map((r) => ({
      editionId: r.id as number,
      siteId: r.site_id as number,
      document: r.document as string,
      base: r.base as string,
    }));
  }

  /** Replaces an edition's stored document after its links were re-rendered; its ETag changes with the revision. */
  async rerenderEdition(editionId: number, document: string, base: string): Promise<void> {
    await this.db.query(
      'UPDATE editions SET document = $2, tracking_base = $3, render_rev = render_rev + 1 WHERE id = $1',
      [editionId, document, base],
    );
  }

  async setLiveEdition(toplistId: number, editionId: number | null, updatedAt: Date | null): Promise<void> {
    if (updatedAt) {
      await this.db.query('UPDATE toplists SET live_edition_id = $2, updated_at = $3 WHERE id = $1', [
        toplistId,
        editionId,
        updatedAt,
      ]);
    } else {
      await this.db.query('UPDATE toplists SET live_edition_id = $2 WHERE id = $1', [toplistId, editionId]);
    }
  }

  /** A page of a toplist's editions, newest first, with how many it has. */
  listEditions(toplistId: number, page: PageArgs): Promise<Paged<EditionMeta>> {
    return this.paged(
      'SELECT id, version, published_at, published_by FROM editions WHERE toplist_id = $1',
      'ORDER BY version DESC',
      [toplistId],
      page,
      (r) => ({
        id: r.id as number,
        version: String(r.version),
        publishedAt: iso(r.published_at as Date)!,
        publishedBy: r.published_by as number | null,
      }),
    );
  }

  async getEditionDocument(toplistId: number, version: number): Promise<string | undefined> {
    return firstValue<string>(
      this.db,
      'SELECT document FROM editions WHERE toplist_id = $1 AND version = $2',
      [toplistId, version],
    );
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
    await this.db.query(
      `INSERT INTO tracking_links (slug, tracker_id, site_id, toplist_id, position)
       SELECT w.slug, w.tracker_id, $1, $2, w.position
       FROM unnest($3::text[], $4::int[], $5::int[]) AS w(slug, tracker_id, position)
       ON CONFLICT (tracker_id, site_id, toplist_id, position) DO NOTHING`,
      [
        siteId,
        toplistId,
        wanted.map((w) => w.slug),
        wanted.map((w) => w.trackerId),
        wanted.map((w) => w.position),
      ],
    );
    const rows = await this.db.query<{ slug: string; tracker_id: number; position: number }>(
      'SELECT slug, tracker_id, position FROM tracking_links WHERE site_id = $1 AND toplist_id = $2',
      [siteId, toplistId],
    );
    for (const r of rows) out.set(`${r.tracker_id}:${r.position}`, r.slug);
    return out;
  }

  /** A tracking link by its public slug, with the tracker's landing URL and its offer and brand. */
  async resolveTrackingLink(slug: string): Promise<ResolvedTrackingLink | undefined> {
    const [r] = await this.db.query<{
      link_id: number;
      tracker_id: number;
      offer_id: number;
      brand_id: number;
      site_id: number | null;
      toplist_id: number | null;
      position: number | null;
      landing_url: string;
    }>(
      `SELECT l.id AS link_id, l.tracker_id, t.offer_id, o.brand_id, l.site_id, l.toplist_id, l.position,
              t.landing_url
       FROM tracking_links l JOIN trackers t ON t.id = l.tracker_id JOIN offers o ON o.id = t.offer_id
       WHERE l.slug = $1`,
      [slug],
      // Read for every link a click meets (then cached): planned once, not per read.
      'resolve_tracking_link',
    );
    return (
      r && {
        linkId: r.link_id,
        trackerId: r.tracker_id,
        offerId: r.offer_id,
        brandId: r.brand_id,
        siteId: r.site_id,
        toplistId: r.toplist_id,
        position: r.position,
        landingUrl: r.landing_url,
      }
    );
  }
}
