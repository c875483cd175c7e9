import type { GeoType } from '../../lib/geo.ts';

/** Catalog records as the admin API returns them (camelCase, ISO timestamps). */

export interface Owner {
  id: number;
  externalId: string | null;
  name: string;
  createdAt: string;
  updatedAt: string;
}

export interface Site {
  id: number;
  domain: string;
  name: string;
  /** Base of this site's tracker links; null: the server's PODIUM_PUBLIC_URL. */
  trackingBaseUrl: string | null;
  /** Where `/go` sends a visitor the link's brand may not be advertised to; null: Podium's own page. */
  complianceFallbackUrl: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface NamedType {
  id: number;
  name: string;
}

export interface Template {
  id: number;
  externalId: string | null;
  name: string;
  productTypeId: number;
  productType: string;
  classificationTypeId: number;
  classificationType: string;
  createdAt: string;
  updatedAt: string;
}

export interface Geos {
  countries: string[];
  markets: string[];
}

export interface Brand {
  id: number;
  externalId: string;
  name: string;
  slug: string;
  rating: number;
  logo: { rectangular: string; square: string; backgroundColor: string };
  licenses: string[];
  paymentMethods: string[];
  restrictedCountries: string[];
  classificationTypes: string[];
  languages: { website: string[]; support: string[]; livechat: string[] };
  createdAt: string;
  updatedAt: string;
}

export interface Tracker {
  id: number;
  offerId: number;
  externalId: string | null;
  campaignName: string;
  /** Operator landing URL that /go/{slug} redirects to. */
  landingUrl: string;
  tcLink: string;
  pageType: string;
  geos: Geos;
}

export interface Offer {
  id: number;
  externalId: string;
  brandId: number;
  offerTypeId: number;
  offerTypeName: string;
  offerText: string;
  currencies: string[];
  hasFreeSpins: boolean;
  bonusWageringRequirement: number;
  bonusExpiryDate: string;
  bonusCode: string;
  minimumDeposit: number | null;
  freeTickets: number | null;
  maxBonusAmount: string | null;
  maxPayout: string | null;
  minimumOdds: string | null;
  freeBetValue: string | null;
  tournamentTicketValue: string | null;
  rakebackPercentage: string | null;
  isStickyBonus: boolean;
  stakeReturned: boolean | null;
  betType: string | null;
  geos: Geos;
  trackers: Tracker[];
  createdAt: string;
  updatedAt: string;
}

export interface ToplistItem {
  id: number;
  position: number;
  brandId: number;
  offerId: number;
  dealId: number;
  isLocked: boolean;
}

export interface Toplist {
  id: number;
  externalId: string | null;
  siteId: number;
  templateId: number;
  ownerId: number;
  name: string;
  slug: string;
  geo: { type: GeoType; code: string; name: string; coveredCountries: string[] | null };
  currentPeriod: string;
  locked: boolean;
  liveFrom: string | null;
  liveUntil: string | null;
  /** Version of the live edition, or null when unpublished. */
  liveVersion: string | null;
  createdAt: string;
  draftUpdatedAt: string;
  /** Time of the last publish (the wire `updatedAt`). */
  updatedAt: string;
  items: ToplistItem[];
}

export interface EditionMeta {
  id: number;
  version: string;
  publishedAt: string;
  publishedBy: number | null;
}

/** Everything needed to render one toplist's wire document. */
export interface EditionSnapshot {
  toplist: Toplist;
  ownerName: string;
  siteDomain: string;
  siteTrackingBase: string | null;
  template: {
    id: number;
    name: string;
    productTypeId: number;
    productType: string;
    classificationTypeId: number;
    classificationType: string;
  };
  brands: Map<number, Brand>;
  offers: Map<number, Offer>;
}

/** What a click on a tracking link resolves to (read by the tracking module). */
export interface ResolvedTrackingLink {
  linkId: number;
  trackerId: number;
  offerId: number;
  brandId: number;
  siteId: number | null;
  toplistId: number | null;
  position: number | null;
  landingUrl: string;
}
