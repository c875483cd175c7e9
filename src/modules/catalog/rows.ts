import type { Selectable, Updateable } from 'kysely';
import type { PageWindow } from '../../db/paged.ts';
import type {
  Brands,
  DB,
  Editions,
  ListTemplates,
  Offers,
  Owners,
  Sites,
  ToplistItems,
  Toplists,
  Trackers,
} from '../../db/schema.ts';
import { countryLabel } from '../../lib/geo.ts';
import type { Brand, Offer, Owner, Site, Template, Toplist, ToplistItem, Tracker } from './types.ts';

export interface PageArgs extends PageWindow {
  /** Part of the name or slug to match, case-insensitively (`q` of a list). */
  search?: string | undefined;
}

/**
 * Columns a PATCH may set, per table: API field name → column (each checked against the table's
 * type). The only way a field of a request names a column.
 */
export const UPDATABLE = {
  owners: { name: 'name', externalId: 'external_id' },
  sites: {
    domain: 'domain',
    name: 'name',
    trackingBaseUrl: 'tracking_base_url',
    complianceFallbackUrl: 'compliance_fallback_url',
  },
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
} as const satisfies { [T in keyof DB]?: Record<string, keyof DB[T] & string> };

export type UpdatableTable = keyof typeof UPDATABLE;
type Fields<T extends UpdatableTable> = (typeof UPDATABLE)[T];

/** The values of a PATCH or an insert by API field name, each typed as its column takes it. */
export type ColumnValues<T extends UpdatableTable> = {
  [F in keyof Fields<T>]?: Updateable<DB[T]>[Fields<T>[F] & keyof Updateable<DB[T]>];
};

export const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/* Row mappers: snake_case rows to the catalog's camelCase records (shared by the catalog repositories). */

/** When a record was created and last updated. */
const stamps = (r: { created_at: Date; updated_at: Date }) => ({
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

/** The countries and markets an offer or tracker is for. */
const geos = (r: { geo_countries: string[]; geo_markets: string[] }) => ({
  countries: r.geo_countries,
  markets: r.geo_markets,
});

export const owner = (r: Selectable<Owners>): Owner => ({
  id: r.id,
  externalId: r.external_id,
  name: r.name,
  ...stamps(r),
});

export const site = (r: Selectable<Sites>): Site => ({
  id: r.id,
  domain: r.domain,
  name: r.name,
  trackingBaseUrl: r.tracking_base_url ?? null,
  complianceFallbackUrl: r.compliance_fallback_url ?? null,
  ...stamps(r),
});

export type TemplateRow = Selectable<ListTemplates> & { product_type: string; classification_type: string };

export const template = (r: TemplateRow): Template => ({
  id: r.id,
  externalId: r.external_id,
  name: r.name,
  productTypeId: r.product_type_id,
  productType: r.product_type,
  classificationTypeId: r.classification_type_id,
  classificationType: r.classification_type,
  ...stamps(r),
});

export const brand = (r: Selectable<Brands>): Brand => ({
  id: r.id,
  externalId: r.external_id,
  name: r.name,
  slug: r.slug,
  rating: Number(r.rating),
  logo: { rectangular: r.logo_rectangular, square: r.logo_square, backgroundColor: r.logo_background_color },
  licenses: r.licenses,
  paymentMethods: r.payment_methods,
  restrictedCountries: r.restricted_countries.map(countryLabel),
  classificationTypes: r.classification_types,
  languages: { website: r.languages_website, support: r.languages_support, livechat: r.languages_livechat },
  ...stamps(r),
});

export const tracker = (r: Selectable<Trackers>): Tracker => ({
  id: r.id,
  offerId: r.offer_id,
  externalId: r.external_id,
  campaignName: r.campaign_name,
  landingUrl: r.landing_url,
  tcLink: r.tc_link,
  pageType: r.page_type,
  geos: geos(r),
});

/** An offer row with its offer type's name and its expiry date as the text the API shows. */
export type OfferRow = Selectable<Offers> & { bonus_expiry_text: string; offer_type_name: string };

export const offer = (r: OfferRow, trackers: Tracker[]): Offer => ({
  id: r.id,
  externalId: r.external_id,
  brandId: r.brand_id,
  offerTypeId: r.offer_type_id,
  offerTypeName: r.offer_type_name,
  offerText: r.offer_text,
  currencies: r.currencies,
  hasFreeSpins: r.has_free_spins,
  bonusWageringRequirement: r.bonus_wagering_requirement,
  bonusExpiryDate: r.bonus_expiry_text,
  bonusCode: r.bonus_code,
  minimumDeposit: r.minimum_deposit,
  freeTickets: r.free_tickets,
  maxBonusAmount: r.max_bonus_amount,
  maxPayout: r.max_payout,
  minimumOdds: r.minimum_odds,
  freeBetValue: r.free_bet_value,
  tournamentTicketValue: r.tournament_ticket_value,
  rakebackPercentage: r.rakeback_percentage,
  isStickyBonus: r.is_sticky_bonus,
  stakeReturned: r.stake_returned,
  betType: r.bet_type,
  geos: geos(r),
  trackers,
  ...stamps(r),
});

export const item = (r: Selectable<ToplistItems>): ToplistItem => ({
  id: r.id,
  position: r.position,
  brandId: r.brand_id,
  offerId: r.offer_id,
  dealId: r.deal_id,
  isLocked: r.is_locked,
});

/** A toplist row with the version of its live edition (null when it has none). */
export type ToplistRow = Selectable<Toplists> & { live_version: Selectable<Editions>['version'] | null };

export const toplist = (r: ToplistRow, items: ToplistItem[]): Toplist => ({
  id: r.id,
  externalId: r.external_id,
  siteId: r.site_id,
  templateId: r.template_id,
  ownerId: r.owner_id,
  name: r.name,
  slug: r.slug,
  geo: {
    type: r.geo_type as Toplist['geo']['type'],
    code: r.geo_code,
    name: r.geo_name,
    coveredCountries: r.covered_countries,
  },
  currentPeriod: r.current_period,
  locked: r.locked,
  liveFrom: iso(r.live_from),
  liveUntil: iso(r.live_until),
  liveVersion: r.live_version === null ? null : String(r.live_version),
  createdAt: r.created_at.toISOString(),
  draftUpdatedAt: r.draft_updated_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
  items,
});
