import { type Static, Type as T, type TObject, type TProperties } from '@sinclair/typebox';
import { RowId as Id, StrictObject, searchText, strict } from '../../lib/schema-parts.ts';
import { ComplianceOverride } from '../compliance/schemas.ts';

/** Request schemas of the editorial admin API. Unknown fields are rejected, not ignored. */

const Name = T.String({ minLength: 1, maxLength: 200 });
const ExternalId = T.String({ minLength: 1, maxLength: 100 });
const Text = (max: number) => T.String({ maxLength: max });
const List = (max = 100, item = T.String({ minLength: 1, maxLength: 100 })) =>
  T.Array(item, { maxItems: max });
const Url = T.String({ minLength: 1, maxLength: 2000, pattern: '^https?://[^\\s]+$' });
const Slug = T.String({ minLength: 1, maxLength: 120, pattern: '^[a-z0-9]+(?:-[a-z0-9]+)*$' });
const Decimal = T.Union([T.String({ pattern: '^(0|[1-9][0-9]{0,11})(\\.[0-9]{1,2})?$' }), T.Null()], {
  description: 'decimal as a string ("12.5", "100.00"), or null',
});
const Currency = T.String({ pattern: '^[A-Z]{3}$' });
const CountryCode = T.String({ pattern: '^[A-Z]{2}$' });
const Geos = T.Object({ countries: List(300), markets: List(100) }, strict);
const Timestamp = T.Union([T.String({ format: 'date-time' }), T.Null()]);

/** All properties optional and at least one present (PATCH bodies). */
const patchOf = <P extends TProperties>(s: TObject<P>) => T.Partial(s, { ...strict, minProperties: 1 });

export const PageQuery = T.Object({
  page: T.Optional(T.Integer({ minimum: 1, maximum: 1_000_000 })),
  per_page: T.Optional(T.Integer({ minimum: 1, maximum: 100 })),
  q: T.Optional(searchText('search: part of the name or slug, case-insensitive')),
});

export const OwnerInput = T.Object(
  { name: Name, externalId: T.Optional(T.Union([ExternalId, T.Null()])) },
  strict,
);
export const OwnerPatch = patchOf(OwnerInput);

export const SiteInput = StrictObject({
  domain: T.String({
    minLength: 1,
    maxLength: 253,
    pattern: '^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z]{2,63}$',
    description: 'lowercase host name, e.g. casino-guide.example',
  }),
  name: T.Optional(Text(200)),
  trackingBaseUrl: T.Optional(
    T.Union(
      [
        T.String({
          minLength: 1,
          maxLength: 200,
          pattern: '^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~-]+)*$',
        }),
        T.Null(),
      ],
      {
        description:
          "Base of the site's tracker links ({base}/go/{slug}), e.g. https://go.casino-guide.example; null: PODIUM_PUBLIC_URL. Changing it re-renders the site's live toplists at once.",
      },
    ),
  ),
  complianceFallbackUrl: T.Optional(
    T.Union([Url, T.Null()], {
      description:
        "Where /go sends a visitor whose country the link's brand may not be advertised in (a compliant page of the site); null: Podium's own 'not available in your country' page.",
    }),
  ),
});
export const SitePatch = patchOf(SiteInput);

export const NamedTypeInput = T.Object({ name: Name }, strict);

export const TemplateInput = StrictObject({
  name: Name,
  externalId: T.Optional(T.Union([ExternalId, T.Null()])),
  productTypeId: Id,
  classificationTypeId: Id,
});
export const TemplatePatch = patchOf(TemplateInput);

export const BrandInput = StrictObject({
  externalId: ExternalId,
  name: Name,
  slug: Slug,
  rating: T.Number({ minimum: 0, maximum: 10, description: 'at most two decimals' }),
  logo: T.Object(
    { rectangular: Url, square: Url, backgroundColor: T.String({ pattern: '^#[0-9A-Fa-f]{6}$' }) },
    strict,
  ),
  licenses: T.Optional(List()),
  paymentMethods: T.Optional(List()),
  restrictedCountries: T.Optional(List(300)),
  classificationTypes: T.Optional(List()),
  languages: T.Optional(
    T.Object(
      {
        website: List(50, T.String({ pattern: '^[a-z]{2,3}(-[A-Za-z]{2,4})?$' })),
        support: List(50, T.String({ pattern: '^[a-z]{2,3}(-[A-Za-z]{2,4})?$' })),
        livechat: List(50, T.String({ pattern: '^[a-z]{2,3}(-[A-Za-z]{2,4})?$' })),
      },
      strict,
    ),
  ),
});
export const BrandPatch = patchOf(BrandInput);

export const TrackerInput = StrictObject({
  externalId: T.Optional(T.Union([ExternalId, T.Null()])),
  campaignName: Name,
  landingUrl: Url,
  tcLink: T.Optional(T.Union([Url, T.Literal('')])),
  pageType: T.Optional(T.String({ minLength: 1, maxLength: 20 })),
  geos: T.Optional(Geos),
});
export const TrackerPatch = patchOf(TrackerInput);

export const OfferInput = StrictObject({
  externalId: ExternalId,
  brandId: Id,
  offerTypeId: Id,
  offerText: Text(2000),
  currencies: T.Optional(T.Array(Currency, { maxItems: 50 })),
  hasFreeSpins: T.Optional(T.Boolean()),
  bonusWageringRequirement: T.Optional(T.Integer({ minimum: 0, maximum: 1000 })),
  bonusExpiryDate: T.String({ format: 'date' }),
  bonusCode: T.Optional(Text(100)),
  minimumDeposit: T.Optional(T.Union([T.Integer({ minimum: 0, maximum: 1_000_000_000 }), T.Null()])),
  freeTickets: T.Optional(T.Union([T.Integer({ minimum: 0, maximum: 1_000_000 }), T.Null()])),
  maxBonusAmount: T.Optional(Decimal),
  maxPayout: T.Optional(Decimal),
  minimumOdds: T.Optional(Decimal),
  freeBetValue: T.Optional(Decimal),
  tournamentTicketValue: T.Optional(Decimal),
  rakebackPercentage: T.Optional(Decimal),
  isStickyBonus: T.Optional(T.Boolean()),
  stakeReturned: T.Optional(T.Union([T.Boolean(), T.Null()])),
  betType: T.Optional(T.Union([T.String({ minLength: 1, maxLength: 50 }), T.Null()])),
  geos: T.Optional(Geos),
  trackers: T.Optional(T.Array(TrackerInput, { maxItems: 50 })),
});
export const OfferPatch = patchOf(T.Omit(OfferInput, ['trackers']));

export const GeoInput = StrictObject({
  type: T.Union([T.Literal('country'), T.Literal('market'), T.Literal('global')]),
  code: T.String({ minLength: 2, maxLength: 32 }),
  name: T.Optional(T.String({ minLength: 1, maxLength: 100 })),
  coveredCountries: T.Optional(
    T.Union([T.Array(CountryCode, { maxItems: 300, uniqueItems: true }), T.Null()]),
  ),
});

export const ToplistInput = StrictObject({
  externalId: T.Optional(T.Union([ExternalId, T.Null()])),
  siteId: Id,
  templateId: Id,
  ownerId: Id,
  name: Name,
  slug: Slug,
  geo: GeoInput,
  currentPeriod: T.Optional(Text(100)),
  locked: T.Optional(T.Boolean()),
  liveFrom: T.Optional(Timestamp),
  liveUntil: T.Optional(Timestamp),
});
export const ToplistPatch = patchOf(T.Omit(ToplistInput, ['siteId']));

export const ItemInput = StrictObject({
  id: T.Optional(Id),
  position: T.Integer({ minimum: 1, maximum: 1000 }),
  brandId: Id,
  offerId: Id,
  dealId: T.Optional(T.Integer({ minimum: 0, maximum: 2147483647 })),
  isLocked: T.Optional(T.Boolean()),
});
export const ItemsInput = T.Object({ items: T.Array(ItemInput, { maxItems: 200 }) }, strict);

export const PublishInput = T.Object(
  {
    liveFrom: T.Optional(Timestamp),
    liveUntil: T.Optional(Timestamp),
    complianceOverride: T.Optional(ComplianceOverride),
  },
  strict,
);

export const ToplistQuery = T.Object({
  ...PageQuery.properties,
  site_id: T.Optional(Id),
  template_id: T.Optional(Id),
  geo_type: T.Optional(T.Union([T.Literal('country'), T.Literal('market'), T.Literal('global')])),
  geo_code: T.Optional(T.String({ minLength: 1, maxLength: 32 })),
});

export const OfferQuery = T.Object({ ...PageQuery.properties, brand_id: T.Optional(Id) });

export type OwnerInputT = Static<typeof OwnerInput>;
export type SiteInputT = Static<typeof SiteInput>;
export type TemplateInputT = Static<typeof TemplateInput>;
export type BrandInputT = Static<typeof BrandInput>;
export type TrackerInputT = Static<typeof TrackerInput>;
export type OfferInputT = Static<typeof OfferInput>;
export type ToplistInputT = Static<typeof ToplistInput>;
export type GeoInputT = Static<typeof GeoInput>;
export type ItemInputT = Static<typeof ItemInput>;
