import type { Queryable } from '../../db/index.ts';
import type {
  Brand,
  EditionMeta,
  EditionSnapshot,
  NamedType,
  Offer,
  Owner,
  ResolvedTrackingLink,
  Site,
  Template,
  Toplist,
  ToplistItem,
  Tracker,
} from './types.ts';

/** Page of rows plus the total count for the same filter. */
export interface Paged<T> {
  rows: T[];
  total: number;
}

export interface PageArgs {
  limit: number;
  offset: number;
}

/** Columns a PATCH may set, per table: API field name → column. The only way a column name reaches SQL. */
export const UPDATABLE = {
  owners: { name: 'name', externalId: 'external_id' },
  sites: { domain: 'domain', name: 'name', trackingBaseUrl: 'tracking_base_url' },
  list_templates: {
    name: 'name',
    externalId: 'external_id',
    productTypeId: 'product_type_id',
    classificationTypeId: 'classification_type_id',
  },
  brands: {
    externalId: 'external_id',
    name: 'name',
    slug: 'slug',
    rating: 'rating',
    logoRectangular: 'logo_rectangular',
    logoSquare: 'logo_square',
    logoBackgroundColor: 'logo_background_color',
    licenses: 'licenses',
    paymentMethods: 'payment_methods',
    restrictedCountries: 'restricted_countries',
    classificationTypes: 'classification_types',
    languagesWebsite: 'languages_website',
    languagesSupport: 'languages_support',
    languagesLivechat: 'languages_livechat',
  },
  offers: {
    externalId: 'external_id',
    brandId: 'brand_id',
    offerTypeId: 'offer_type_id',
    offerText: 'offer_text',
    currencies: 'currencies',
    hasFreeSpins: 'has_free_spins',
    bonusWageringRequirement: 'bonus_wagering_requirement',
    bonusExpiryDate: 'bonus_expiry_date',
    bonusCode: 'bonus_code',
    minimumDeposit: 'minimum_deposit',
    freeTickets: 'free_tickets',
    maxBonusAmount: 'max_bonus_amount',
    maxPayout: 'max_payout',
    minimumOdds: 'minimum_odds',
    freeBetValue: 'free_bet_value',
    tournamentTicketValue: 'tournament_ticket_value',
    rakebackPercentage: 'rakeback_percentage',
    isStickyBonus: 'is_sticky_bonus',
    stakeReturned: 'stake_returned',
    betType: 'bet_type',
    geoCountries: 'geo_countries',
    geoMarkets: 'geo_markets',
  },
  trackers: {
    externalId: 'external_id',
    campaignName: 'campaign_name',
    landingUrl: 'landing_url',
    tcLink: 'tc_link',
    pageType: 'page_type',
    geoCountries: 'geo_countries',
    geoMarkets: 'geo_markets',
  },
  toplists: {
    externalId: 'external_id',
    templateId: 'template_id',
    ownerId: 'owner_id',
    name: 'name',
    slug: 'slug',
    geoType: 'geo_type',
    geoCode: 'geo_code',
    geoName: 'geo_name',
    coveredCountries: 'covered_countries',
    currentPeriod: 'current_period',
    locked: 'locked',
    liveFrom: 'live_from',
    liveUntil: 'live_until',
  },
} as const;

export type UpdatableTable = keyof typeof UPDATABLE;
export type ColumnValues<T extends UpdatableTable> = Partial<Record<keyof (typeof UPDATABLE)[T], unknown>>;

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/* Row mappers: snake_case rows to the catalog's camelCase records. */

type Row = Record<string, unknown>;

const owner = (r: Row): Owner => ({
  id: r.id as number,
  externalId: r.external_id as string | null,
  name: r.name as string,
  createdAt: iso(r.created_at as Date)!,
  updatedAt: iso(r.updated_at as Date)!,
});

const site = (r: Row): Site => ({
  id: r.id as number,
  domain: r.domain as string,
  name: r.name as string,
  trackingBaseUrl: (r.tracking_base_url as string | null) ?? null,
  createdAt: iso(r.created_at as Date)!,
  updatedAt: iso(r.updated_at as Date)!,
});

const template = (r: Row): Template => ({
  id: r.id as number,
  externalId: r.external_id as string | null,
  name: r.name as string,
  productTypeId: r.product_type_id as number,
  productType: r.product_type as string,
  classificationTypeId: r.classification_type_id as number,
  classificationType: r.classification_type as string,
  createdAt: iso(r.created_at as Date)!,
  updatedAt: iso(r.updated_at as Date)!,
});

const brand = (r: Row): Brand => ({
  id: r.id as number,
  externalId: r.external_id as string,
  name: r.name as string,
  slug: r.slug as string,
  rating: Number(r.rating),
  logo: {
    rectangular: r.logo_rectangular as string,
    square: r.logo_square as string,
    backgroundColor: r.logo_background_color as string,
  },
  licenses: r.licenses as string[],
  paymentMethods: r.payment_methods as string[],
  restrictedCountries: r.restricted_countries as string[],
  classificationTypes: r.classification_types as string[],
  languages: {
    website: r.languages_website as string[],
    support: r.languages_support as string[],
    livechat: r.languages_livechat as string[],
  },
  createdAt: iso(r.created_at as Date)!,
  updatedAt: iso(r.updated_at as Date)!,
});

const tracker = (r: Row): Tracker => ({
  id: r.id as number,
  offerId: r.offer_id as number,
  externalId: r.external_id as string | null,
  campaignName: r.campaign_name as string,
  landingUrl: r.landing_url as string,
  tcLink: r.tc_link as string,
  pageType: r.page_type as string,
  geos: { countries: r.geo_countries as string[], markets: r.geo_markets as string[] },
});

const offer = (r: Row, trackers: Tracker[]): Offer => ({
  id: r.id as number,
  externalId: r.external_id as string,
  brandId: r.brand_id as number,
  offerTypeId: r.offer_type_id as number,
  offerTypeName: r.offer_type_name as string,
  offerText: r.offer_text as string,
  currencies: r.currencies as string[],
  hasFreeSpins: r.has_free_spins as boolean,
  bonusWageringRequirement: r.bonus_wagering_requirement as number,
  bonusExpiryDate: r.bonus_expiry_text as string,
  bonusCode: r.bonus_code as string,
  minimumDeposit: r.minimum_deposit as number | null,
  freeTickets: r.free_tickets as number | null,
  maxBonusAmount: r.max_bonus_amount as string | null,
  maxPayout: r.max_payout as string | null,
  minimumOdds: r.minimum_odds as string | null,
  freeBetValue: r.free_bet_value as string | null,
  tournamentTicketValue: r.tournament_ticket_value as string | null,
  rakebackPercentage: r.rakeback_percentage as string | null,
  isStickyBonus: r.is_sticky_bonus as boolean,
  stakeReturned: r.stake_returned as boolean | null,
  betType: r.bet_type as string | null,
  geos: { countries: r.geo_countries as string[], markets: r.geo_markets as string[] },
  trackers,
  createdAt: iso(r.created_at as Date)!,
  updatedAt: iso(r.updated_at as Date)!,
});

const item = (r: Row): ToplistItem => ({
  id: r.id as number,
  position: r.position as number,
  brandId: r.brand_id as number,
  offerId: r.offer_id as number,
  dealId: r.deal_id as number,
  isLocked: r.is_locked as boolean,
});

const toplist = (r: Row, items: ToplistItem[]): Toplist => ({
  id: r.id as number,
  externalId: r.external_id as string | null,
  siteId: r.site_id as number,
  templateId: r.template_id as number,
  ownerId: r.owner_id as number,
  name: r.name as string,
  slug: r.slug as string,
  geo: {
    type: r.geo_type as Toplist['geo']['type'],
    code: r.geo_code as string,
    name: r.geo_name as string,
    coveredCountries: r.covered_countries as string[] | null,
  },
  currentPeriod: r.current_period as string,
  locked: r.locked as boolean,
  liveFrom: iso(r.live_from as Date | null),
  liveUntil: iso(r.live_until as Date | null),
  liveVersion: r.live_version === null || r.live_version === undefined ? null : String(r.live_version),
  createdAt: iso(r.created_at as Date)!,
  draftUpdatedAt: iso(r.draft_updated_at as Date)!,
  updatedAt: iso(r.updated_at as Date)!,
  items,
});

const OFFER_SELECT = `
  SELECT o.*, to_char(o.bonus_expiry_date, 'YYYY-MM-DD') AS bonus_expiry_text, ot.name AS offer_type_name
  FROM offers o JOIN offer_types ot ON ot.id = o.offer_type_id`;

const TEMPLATE_SELECT = `
  SELECT t.*, pt.name AS product_type, ct.name AS classification_type
  FROM list_templates t
  JOIN product_types pt ON pt.id = t.product_type_id
  JOIN classification_types ct ON ct.id = t.classification_type_id`;

const TOPLIST_SELECT = `
  SELECT t.*, e.version AS live_version
  FROM toplists t LEFT JOIN editions e ON e.id = t.live_edition_id`;

/** All catalog SQL. Every method takes the Queryable to run on (the db or an open transaction). */
export class CatalogRepository {
  constructor(private readonly db: Queryable) {}

  /** The same repository bound to a transaction. */
  with(q: Queryable): CatalogRepository {
    return new CatalogRepository(q);
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

  /* Owners */

  async insertOwner(v: { name: string; externalId: string | null }): Promise<number> {
    const [r] = await this.db.query<{ id: number }>(
      'INSERT INTO owners (name, external_id) VALUES ($1, $2) RETURNING id',
      [v.name, v.externalId],
    );
    return r!.id;
  }

  async getOwner(id: number): Promise<Owner | undefined> {
    const [r] = await this.db.query('SELECT * FROM owners WHERE id = $1', [id]);
    return r && owner(r);
  }

  async listOwners(p: PageArgs): Promise<Paged<Owner>> {
    return this.paged('SELECT * FROM owners', 'ORDER BY id', [], p, owner);
  }

  async findIdByExternalId(
    table: 'owners' | 'list_templates' | 'brands' | 'offers' | 'trackers' | 'toplists',
    externalId: string,
  ): Promise<number | undefined> {
    const [r] = await this.db.query<{ id: number }>(`SELECT id FROM ${table} WHERE external_id = $1`, [
      externalId,
    ]);
    return r?.id;
  }

  /* Sites */

  async insertSite(v: { domain: string; name: string }): Promise<number> {
    const [r] = await this.db.query<{ id: number }>(
      'INSERT INTO sites (domain, name) VALUES ($1, $2) RETURNING id',
      [v.domain, v.name],
    );
    return r!.id;
  }

  async getSite(id: number): Promise<Site | undefined> {
    const [r] = await this.db.query('SELECT * FROM sites WHERE id = $1', [id]);
    return r && site(r);
  }

  async findSiteByDomain(domain: string): Promise<Site | undefined> {
    const [r] = await this.db.query('SELECT * FROM sites WHERE domain = $1', [domain]);
    return r && site(r);
  }

  async listSites(p: PageArgs): Promise<Paged<Site>> {
    return this.paged('SELECT * FROM sites', 'ORDER BY id', [], p, site);
  }

  /* Named types (product, classification, offer) */

  async insertNamedType(
    table: 'product_types' | 'classification_types' | 'offer_types',
    name: string,
  ): Promise<NamedType> {
    const [r] = await this.db.query<NamedType>(`INSERT INTO ${table} (name) VALUES ($1) RETURNING id, name`, [
      name,
    ]);
    return r!;
  }

  /** Find-or-create by name (imports). */
  async ensureNamedType(
    table: 'product_types' | 'classification_types' | 'offer_types',
    name: string,
  ): Promise<number> {
    const [r] = await this.db.query<{ id: number }>(
      `INSERT INTO ${table} (name) VALUES ($1) ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name RETURNING id`,
      [name],
    );
    return r!.id;
  }

  async listNamedTypes(
    table: 'product_types' | 'classification_types' | 'offer_types',
  ): Promise<NamedType[]> {
    return this.db.query<NamedType>(`SELECT id, name FROM ${table} ORDER BY id`);
  }

  /* Templates */

  async insertTemplate(v: {
    name: string;
    externalId: string | null;
    productTypeId: number;
    classificationTypeId: number;
  }): Promise<number> {
    const [r] = await this.db.query<{ id: number }>(
      'INSERT INTO list_templates (name, external_id, product_type_id, classification_type_id) VALUES ($1, $2, $3, $4) RETURNING id',
      [v.name, v.externalId, v.productTypeId, v.classificationTypeId],
    );
    return r!.id;
  }

  async getTemplate(id: number): Promise<Template | undefined> {
    const [r] = await this.db.query(`${TEMPLATE_SELECT} WHERE t.id = $1`, [id]);
    return r && template(r);
  }

  async listTemplates(p: PageArgs): Promise<Paged<Template>> {
    return this.paged(TEMPLATE_SELECT, 'ORDER BY t.id', [], p, template);
  }

  /* Brands */

  async insertBrand(v: Record<keyof (typeof UPDATABLE)['brands'], unknown>): Promise<number> {
    return this.insertMapped('brands', v);
  }

  async getBrand(id: number): Promise<Brand | undefined> {
    const [r] = await this.db.query('SELECT * FROM brands WHERE id = $1', [id]);
    return r && brand(r);
  }

  async listBrands(p: PageArgs): Promise<Paged<Brand>> {
    return this.paged('SELECT * FROM brands', 'ORDER BY id', [], p, brand);
  }

  /* Offers and trackers */

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
    const where = brandId === undefined ? '' : 'WHERE o.brand_id = $1';
    const page = await this.paged(
      `${OFFER_SELECT} ${where}`,
      'ORDER BY o.id',
      brandId === undefined ? [] : [brandId],
      p,
      (r) => r,
    );
    const trackers = await this.trackersOf(page.rows.map((r) => r.id as number));
    return { total: page.total, rows: page.rows.map((r) => offer(r, trackers.get(r.id as number) ?? [])) };
  }

  /** The brand an offer belongs to, or undefined when the offer does not exist. */
  async offerBrand(offerId: number): Promise<number | undefined> {
    const [r] = await this.db.query<{ brand_id: number }>('SELECT brand_id FROM offers WHERE id = $1', [
      offerId,
    ]);
    return r?.brand_id;
  }

  private async trackersOf(offerIds: number[]): Promise<Map<number, Tracker[]>> {
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

  /* Toplists */

  async insertToplist(v: Record<keyof (typeof UPDATABLE)['toplists'] | 'siteId', unknown>): Promise<number> {
    return this.insertMapped('toplists', v);
  }

  async getToplist(id: number): Promise<Toplist | undefined> {
    const [r] = await this.db.query(`${TOPLIST_SELECT} WHERE t.id = $1`, [id]);
    if (!r) return undefined;
    return toplist(r, await this.itemsOf(id));
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

  /** Locks the toplist row for the rest of the transaction (publish, item edits). */
  async lockToplist(id: number): Promise<boolean> {
    const rows = await this.db.query('SELECT id FROM toplists WHERE id = $1 FOR UPDATE', [id]);
    return rows.length === 1;
  }

  async listToplists(
    p: PageArgs,
    f: { siteId?: number; templateId?: number; geoType?: string; geoCode?: string },
  ): Promise<Paged<Toplist>> {
    const conds: string[] = [];
    const params: unknown[] = [];
    const add = (sql: string, v: unknown) => {
      params.push(v);
      conds.push(sql.replace('?', `$${params.length}`));
    };
    if (f.siteId !== undefined) add('t.site_id = ?', f.siteId);
    if (f.templateId !== undefined) add('t.template_id = ?', f.templateId);
    if (f.geoType !== undefined) add('t.geo_type = ?', f.geoType);
    if (f.geoCode !== undefined) add('t.geo_code = ?', f.geoCode);
    const where = conds.length ? `WHERE ${conds.join(' AND ')}` : '';
    const page = await this.paged(`${TOPLIST_SELECT} ${where}`, 'ORDER BY t.id', params, p, (r) => r);
    return { total: page.total, rows: page.rows.map((r) => toplist(r, [])) };
  }

  async itemsOf(toplistId: number): Promise<ToplistItem[]> {
    const rows = await this.db.query('SELECT * FROM toplist_items WHERE toplist_id = $1 ORDER BY position', [
      toplistId,
    ]);
    return rows.map(item);
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

  async itemIdsOf(toplistId: number): Promise<Set<number>> {
    const rows = await this.db.query<{ id: number }>('SELECT id FROM toplist_items WHERE toplist_id = $1', [
      toplistId,
    ]);
    return new Set(rows.map((r) => r.id));
  }

  /* Editions */

  /**
   * Everything the wire document of a toplist needs, read in a handful of queries:
   * toplist, owner, template, site, items with brand, offer and trackers.
   */
  async editionSnapshot(toplistId: number): Promise<EditionSnapshot | undefined> {
    const [t] = await this.db.query(
      `SELECT t.*, o.name AS owner_name, s.domain AS site_domain, s.tracking_base_url AS site_tracking_base,
              lt.name AS template_name, lt.product_type_id, pt.name AS product_type,
              lt.classification_type_id, ct.name AS classification_type
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
      template: {
        id: t.template_id as number,
        name: t.template_name as string,
        productTypeId: t.product_type_id as number,
        productType: t.product_type as string,
        classificationTypeId: t.classification_type_id as number,
        classificationType: t.classification_type as string,
      },
      brands,
      offers,
    };
  }

  async nextVersion(toplistId: number): Promise<number> {
    const [r] = await this.db.query<{ v: number }>(
      'SELECT COALESCE(MAX(version), 0)::int + 1 AS v FROM editions WHERE toplist_id = $1',
      [toplistId],
    );
    return r!.v;
  }

  async insertEdition(v: {
    toplistId: number;
    version: number;
    document: string;
    publishedAt: Date;
    publishedBy: number | null;
    trackingBase: string;
  }): Promise<number> {
    const [r] = await this.db.query<{ id: number }>(
      'INSERT INTO editions (toplist_id, version, document, published_at, published_by, tracking_base) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id',
      [v.toplistId, v.version, v.document, v.publishedAt, v.publishedBy, v.trackingBase],
    );
    return r!.id;
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

  async listEditions(toplistId: number): Promise<EditionMeta[]> {
    const rows = await this.db.query<{
      id: number;
      version: number;
      published_at: Date;
      published_by: number | null;
    }>(
      'SELECT id, version, published_at, published_by FROM editions WHERE toplist_id = $1 ORDER BY version DESC',
      [toplistId],
    );
    return rows.map((r) => ({
      id: r.id,
      version: String(r.version),
      publishedAt: iso(r.published_at)!,
      publishedBy: r.published_by,
    }));
  }

  async getEditionDocument(toplistId: number, version: number): Promise<string | undefined> {
    const [r] = await this.db.query<{ document: string }>(
      'SELECT document FROM editions WHERE toplist_id = $1 AND version = $2',
      [toplistId, version],
    );
    return r?.document;
  }

  /* Tracking links */

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

  /** Which of these tracker ids exist. */
  async existingTrackerIds(ids: readonly number[]): Promise<number[]> {
    const rows = await this.db.query<{ id: number }>('SELECT id FROM trackers WHERE id = ANY($1::int[])', [
      ids,
    ]);
    return rows.map((r) => r.id);
  }

  /* Helpers */

  private async insertMapped(table: UpdatableTable, v: Record<string, unknown>): Promise<number> {
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
    const [r] = await this.db.query<{ id: number }>(
      `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${params.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING id`,
      params,
    );
    return r!.id;
  }

  private async paged<T>(
    select: string,
    order: string,
    params: unknown[],
    p: PageArgs,
    map: (r: Row) => T,
  ): Promise<Paged<T>> {
    const n = params.length;
    const rows = await this.db.query(
      `SELECT x.*, count(*) OVER ()::int AS __total FROM (${select}) x ${order.replace(/\b[a-z]\./g, 'x.')} LIMIT $${n + 1} OFFSET $${n + 2}`,
      [...params, p.limit, p.offset],
    );
    if (rows.length === 0 && p.offset > 0) {
      const [c] = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM (${select}) x`, params);
      return { rows: [], total: c!.n };
    }
    return { rows: rows.map(map), total: (rows[0]?.__total as number | undefined) ?? 0 };
  }
}
