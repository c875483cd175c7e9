/**
 * The wire format of the Podium toplist API (`/api/v1`). Written out by hand so the package has no
 * runtime dependency; a type-level test asserts these equal the server's own schemas, so any drift
 * fails the build.
 */

/** Geographic targeting of an offer or tracker: country names and market codes. */
export interface Geos {
  countries: string[];
  markets: string[];
}

export interface Tracker {
  id: number;
  campaignName: string;
  /** Podium's tracking link (`/go/{slug}`): link visitors here, never to the operator directly. */
  trackerLink: string;
  tcLink: string;
  /** Opaque internal code (LP, NDP, GP, …); not an enum. Pass through or ignore, never display. */
  pageType: string;
  geos: Geos;
}

export interface Offer {
  type: 'offer';
  id: number;
  offerTypeId: number;
  offerTypeName: string;
  offerText: string;
  currencies: string[];
  has_free_spins: boolean;
  bonus_wagering_requirement: number;
  /** `YYYY-MM-DD`. */
  bonus_expiry_date: string;
  bonus_code: string;
  minimum_deposit: number | null;
  free_tickets: number | null;
  /** Decimal string with two decimals (`"200.00"`) or null: read it with `toHundredths`, never a float. */
  max_bonus_amount: string | null;
  max_payout: string | null;
  minimum_odds: string | null;
  free_bet_value: string | null;
  tournament_ticket_value: string | null;
  rakeback_percentage: string | null;
  is_sticky_bonus: boolean;
  stake_returned: boolean | null;
  bet_type: string | null;
  geos: Geos;
  trackers: Tracker[];
}

export interface Brand {
  type: 'brand';
  id: number;
  externalId: string;
  name: string;
  slug: string;
  rating: number;
  logo: { rectangular: string; square: string; backgroundColor: string };
  licenses: string[];
  paymentMethods: string[];
  /** Country names (not codes). */
  restrictedCountries: string[];
  classificationTypes: string[];
  languages: { website: string[]; support: string[]; livechat: string[] };
}

export interface ToplistItem {
  type: 'topListItem';
  id: number;
  position: number;
  isLocked: boolean;
  dealId: number;
  brand: Brand;
  offer: Offer;
}

/** A country variant: `code` is ISO 3166-1 alpha-2. */
export interface CountryGeo {
  geo_type: 'country';
  name: string;
  code: string;
  coveredCountries: null;
}

/** A market variant (`NORDICS`, `DACH` …) covering a non-empty list of uppercase country codes. */
export interface MarketGeo {
  geo_type: 'market';
  name: string;
  code: string;
  coveredCountries: string[];
}

/** The rest-of-world variant. */
export interface GlobalGeo {
  geo_type: 'global';
  name: string;
  code: 'ROW';
  coveredCountries: null;
}

export type Geo = CountryGeo | MarketGeo | GlobalGeo;
export type GeoType = Geo['geo_type'];

export interface Toplist {
  type: 'toplist';
  id: number;
  name: string;
  status: 'published';
  locked: boolean;
  /** Digits only; grows with each publish. */
  version: string;
  owner: { id: number; name: string };
  createdAt: string;
  updatedAt: string;
  publishedAt: string;
  template: {
    type: 'listTemplate';
    id: number;
    name: string;
    productTypeId: number;
    productType: string;
    listClassificationTypeId: number;
    listClassificationType: string;
  };
  site: { id: number; domain: string };
  geo: Geo;
  slug: string;
  currentPeriod: string;
  /** Always null: present on the wire but never populated. */
  shortcode: null;
  /** `[]` when the live edition has no items; never null. */
  items: ToplistItem[];
}

export interface PageLinks {
  first: string;
  last: string;
  prev: string | null;
  /** Null on the last page. */
  next: string | null;
}

export interface PageMeta {
  current_page: number;
  per_page: number;
  total: number;
  last_page: number;
  from: number | null;
  to: number | null;
}

/** One page of `GET /api/v1/toplists`. */
export interface ToplistPage {
  data: Toplist[];
  links: PageLinks;
  meta: PageMeta;
}
