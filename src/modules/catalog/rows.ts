import type { PageWindow } from '../../db/paged.ts';
import { snakeCase } from '../../lib/camel.ts';
import type { Brand, Offer, Owner, Site, Template, Toplist, ToplistItem, Tracker } from './types.ts';

export interface PageArgs extends PageWindow {
  /** Part of the name or slug to match, case-insensitively (`q` of a list). */
  search?: string | undefined;
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

export const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/* Row mappers: snake_case rows to the catalog's camelCase records (shared by the catalog repositories). */

export type Row = Record<string, unknown>;

/**
 * The named fields of a record read from their snake_case columns as they are (`externalId` from
 * `external_id`): the fields that are just their column.
 */
// biome-ignore lint/suspicious/noExplicitAny: a column takes the type of the record field it fills, unchecked as a cast would be
function fields<F extends string>(r: Row, ...names: F[]): Record<F, any> {
  return Object.fromEntries(names.map((f) => [f, r[snakeCase(f)]])) as Record<F, unknown>;
}

/** When a record was created and last updated. */
const stamps = (r: Row) => ({ createdAt: iso(r.created_at as Date)!, updatedAt: iso(r.updated_at as Date)! });

/** The countries and markets an offer or tracker is for. */
const geos = (r: Row) => ({ countries: r.geo_countries as string[], markets: r.geo_markets as string[] });

export const owner = (r: Row): Owner => ({ ...fields(r, 'id', 'externalId', 'name'), ...stamps(r) });

export const site = (r: Row): Site => ({
  ...fields(r, 'id', 'domain', 'name'),
  trackingBaseUrl: (r.tracking_base_url as string | null) ?? null,
  ...stamps(r),
});

export const template = (r: Row): Template => ({
  ...fields(
    r,
    'id',
    'externalId',
    'name',
    'productTypeId',
    'productType',
    'classificationTypeId',
    'classificationType',
  ),
  ...stamps(r),
});

export const brand = (r: Row): Brand => ({
  ...fields(r, 'id', 'externalId', 'name', 'slug'),
  rating: Number(r.rating),
  logo: {
    rectangular: r.logo_rectangular as string,
    square: r.logo_square as string,
    backgroundColor: r.logo_background_color as string,
  },
  ...fields(r, 'licenses', 'paymentMethods', 'restrictedCountries', 'classificationTypes'),
  languages: {
    website: r.languages_website as string[],
    support: r.languages_support as string[],
    livechat: r.languages_livechat as string[],
  },
  ...stamps(r),
});

export const tracker = (r: Row): Tracker => ({
  ...fields(r, 'id', 'offerId', 'externalId', 'campaignName', 'landingUrl', 'tcLink', 'pageType'),
  geos: geos(r),
});

export const offer = (r: Row, trackers: Tracker[]): Offer => ({
  ...fields(
    r,
    'id',
    'externalId',
    'brandId',
    'offerTypeId',
    'offerTypeName',
    'offerText',
    'currencies',
    'hasFreeSpins',
    'bonusWageringRequirement',
  ),
  bonusExpiryDate: r.bonus_expiry_text as string,
  ...fields(
    r,
    'bonusCode',
    'minimumDeposit',
    'freeTickets',
    'maxBonusAmount',
    'maxPayout',
    'minimumOdds',
    'freeBetValue',
    'tournamentTicketValue',
    'rakebackPercentage',
    'isStickyBonus',
    'stakeReturned',
    'betType',
  ),
  geos: geos(r),
  trackers,
  ...stamps(r),
});

export const item = (r: Row): ToplistItem =>
  fields(r, 'id', 'position', 'brandId', 'offerId', 'dealId', 'isLocked');

export const toplist = (r: Row, items: ToplistItem[]): Toplist => ({
  ...fields(r, 'id', 'externalId', 'siteId', 'templateId', 'ownerId', 'name', 'slug'),
  geo: {
    type: r.geo_type as Toplist['geo']['type'],
    code: r.geo_code as string,
    name: r.geo_name as string,
    coveredCountries: r.covered_countries as string[] | null,
  },
  ...fields(r, 'currentPeriod', 'locked'),
  liveFrom: iso(r.live_from as Date | null),
  liveUntil: iso(r.live_until as Date | null),
  liveVersion: r.live_version === null || r.live_version === undefined ? null : String(r.live_version),
  createdAt: iso(r.created_at as Date)!,
  draftUpdatedAt: iso(r.draft_updated_at as Date)!,
  updatedAt: iso(r.updated_at as Date)!,
  items,
});

export const OFFER_SELECT = `
  SELECT o.*, to_char(o.bonus_expiry_date, 'YYYY-MM-DD') AS bonus_expiry_text, ot.name AS offer_type_name
  FROM offers o JOIN offer_types ot ON ot.id = o.offer_type_id`;

export const TEMPLATE_SELECT = `
  SELECT t.*, pt.name AS product_type, ct.name AS classification_type
  FROM list_templates t
  JOIN product_types pt ON pt.id = t.product_type_id
  JOIN classification_types ct ON ct.id = t.classification_type_id`;

export const TOPLIST_SELECT = `
  SELECT t.*, e.version AS live_version
  FROM toplists t LEFT JOIN editions e ON e.id = t.live_edition_id`;
