import { type Static, Type as T } from '@sinclair/typebox';
import { strict } from '../../lib/schema-parts.ts';

/**
 * The wire format of the toplist API, written from the spec's tables. These schemas are the
 * OpenAPI document's components and the contract tests validate every real response against them.
 */

const DECIMAL = '^(0|[1-9][0-9]*)\\.[0-9]{2}$';
const DATE = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';
// ISO 8601 with an explicit UTC offset (never a bare local time).
const TIMESTAMP =
  '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$';

const Decimal = T.Union([T.String({ pattern: DECIMAL }), T.Null()], {
  description:
    'Decimal as a quoted string with two decimals, or null. Parse with a decimal type, never a float.',
});
const Timestamp = T.String({ pattern: TIMESTAMP, description: 'ISO 8601 timestamp with UTC offset' });
const Strings = T.Array(T.String());

export const GeosSchema = T.Object({ countries: Strings, markets: Strings }, strict);

export const TrackerSchema = T.Object(
  {
    id: T.Integer(),
    campaignName: T.String(),
    trackerLink: T.String({ description: "Podium's tracking link /go/{slug}" }),
    tcLink: T.String(),
    pageType: T.String({
      description: 'Opaque internal code (LP, NDP, GP, RMP, RP, DEFAULT, …); not an enum',
    }),
    geos: GeosSchema,
  },
  strict,
);

export const OfferSchema = T.Object(
  {
    type: T.Literal('offer'),
    id: T.Integer(),
    offerTypeId: T.Integer(),
    offerTypeName: T.String(),
    offerText: T.String(),
    currencies: Strings,
    has_free_spins: T.Boolean(),
    bonus_wagering_requirement: T.Integer(),
    bonus_expiry_date: T.String({ pattern: DATE }),
    bonus_code: T.String(),
    minimum_deposit: T.Union([T.Integer(), T.Null()]),
    free_tickets: T.Union([T.Integer(), T.Null()]),
    max_bonus_amount: Decimal,
    max_payout: Decimal,
    minimum_odds: Decimal,
    free_bet_value: Decimal,
    tournament_ticket_value: Decimal,
    rakeback_percentage: Decimal,
    is_sticky_bonus: T.Boolean(),
    stake_returned: T.Union([T.Boolean(), T.Null()], { description: 'Podium decision: boolean or null' }),
    bet_type: T.Union([T.String(), T.Null()], { description: 'Podium decision: string or null' }),
    geos: GeosSchema,
    trackers: T.Array(TrackerSchema),
  },
  strict,
);

export const BrandSchema = T.Object(
  {
    type: T.Literal('brand'),
    id: T.Integer(),
    externalId: T.String(),
    name: T.String(),
    slug: T.String(),
    rating: T.Number(),
    logo: T.Object(
      {
        rectangular: T.String(),
        square: T.String(),
        backgroundColor: T.String({ pattern: '^#[0-9A-Fa-f]{6}$' }),
      },
      strict,
    ),
    licenses: Strings,
    paymentMethods: Strings,
    restrictedCountries: T.Array(T.String(), { description: 'Country names' }),
    classificationTypes: Strings,
    languages: T.Object({ website: Strings, support: Strings, livechat: Strings }, strict),
  },
  strict,
);

export const ItemSchema = T.Object(
  {
    type: T.Literal('topListItem'),
    id: T.Integer(),
    position: T.Integer(),
    isLocked: T.Boolean(),
    dealId: T.Integer(),
    brand: BrandSchema,
    offer: OfferSchema,
  },
  strict,
);

const CountryCode = T.String({ pattern: '^[A-Z]{2}$' });

export const GeoSchema = T.Union([
  T.Object(
    { geo_type: T.Literal('country'), name: T.String(), code: CountryCode, coveredCountries: T.Null() },
    strict,
  ),
  T.Object(
    {
      geo_type: T.Literal('market'),
      name: T.String(),
      code: T.String({ pattern: '^[A-Z][A-Z0-9_]{1,31}$' }),
      coveredCountries: T.Array(CountryCode, { minItems: 1 }),
    },
    strict,
  ),
  T.Object(
    { geo_type: T.Literal('global'), name: T.String(), code: T.Literal('ROW'), coveredCountries: T.Null() },
    strict,
  ),
]);

export const ToplistSchema = T.Object(
  {
    type: T.Literal('toplist'),
    id: T.Integer(),
    name: T.String(),
    status: T.Literal('published'),
    locked: T.Boolean(),
    version: T.String({ pattern: '^[0-9]+$' }),
    owner: T.Object({ id: T.Integer(), name: T.String() }, strict),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    publishedAt: Timestamp,
    template: T.Object(
      {
        type: T.Literal('listTemplate'),
        id: T.Integer(),
        name: T.String(),
        productTypeId: T.Integer(),
        productType: T.String(),
        listClassificationTypeId: T.Integer(),
        listClassificationType: T.String(),
      },
      strict,
    ),
    site: T.Object({ id: T.Integer(), domain: T.String() }, strict),
    geo: GeoSchema,
    slug: T.String(),
    currentPeriod: T.String(),
    shortcode: T.Null(),
    items: T.Array(ItemSchema),
  },
  strict,
);

const Link = T.Union([T.String({ format: 'uri' }), T.Null()]);

const LinksSchema = T.Object(
  { first: T.String({ format: 'uri' }), last: T.String({ format: 'uri' }), prev: Link, next: Link },
  strict,
);

const MetaSchema = T.Object(
  {
    current_page: T.Integer({ minimum: 1 }),
    per_page: T.Integer({ minimum: 1, maximum: 100 }),
    total: T.Integer({ minimum: 0 }),
    last_page: T.Integer({ minimum: 1 }),
    from: T.Union([T.Integer(), T.Null()]),
    to: T.Union([T.Integer(), T.Null()]),
  },
  strict,
);

export const ToplistListSchema = T.Object(
  { data: T.Array(ToplistSchema), links: LinksSchema, meta: MetaSchema },
  strict,
);

/**
 * A row of `GET /brands` (the WordPress plugins' "sync brands"): the brand object of the items plus
 * what the plugins read — status, product types, top geos and the brand's offers in the site's
 * live toplists, with their trackers.
 */
export const SiteBrandSchema = T.Object(
  {
    ...BrandSchema.properties,
    brandStatus: T.Literal('Active', {
      description: "Always Active: every brand listed is in at least one of the site's live toplists",
    }),
    productTypes: T.Array(T.String(), {
      description: "Product types (template productType) of the site's live toplists that rank the brand",
    }),
    topGeos: T.Object(
      {
        countries: T.Array(CountryCode, {
          description: "ISO 3166-1 alpha-2 codes of the site's live country toplists that rank the brand",
        }),
        markets: T.Array(T.String(), {
          description: "Codes of the site's live market toplists that rank the brand (e.g. NORDICS)",
        }),
      },
      strict,
    ),
    offers: T.Array(OfferSchema, {
      description: "The brand's offers shown in the site's live toplists, each with its trackers",
    }),
    offersCount: T.Integer({ minimum: 0, description: 'Length of offers' }),
  },
  strict,
);

/** `GET /brands`: the brands of the site's live toplists, paged like the toplist list. */
export const BrandListSchema = T.Object(
  { data: T.Array(SiteBrandSchema), links: LinksSchema, meta: MetaSchema },
  strict,
);

export const ToplistSingleSchema = T.Object({ data: ToplistSchema }, strict);

export const ErrorSchema = T.Object(
  {
    code: T.String({ pattern: '^[a-z][a-z0-9_]*$' }),
    message: T.String(),
    details: T.Optional(T.Object({})),
  },
  strict,
);

export const ListQuerySchema = T.Object({
  template_id: T.Optional(T.Integer({ minimum: 1, maximum: 2147483647 })),
  geo_type: T.Optional(T.Union([T.Literal('country'), T.Literal('market'), T.Literal('global')])),
  geo_code: T.Optional(T.String({ minLength: 1, maxLength: 32 })),
  page: T.Optional(T.Integer({ minimum: 1, maximum: 1_000_000 })),
  per_page: T.Optional(T.Integer({ minimum: 1, maximum: 100 })),
});

export const PageQuerySchema = T.Object({
  page: ListQuerySchema.properties.page,
  per_page: ListQuerySchema.properties.per_page,
});

export const ResolveQuerySchema = T.Object({
  template_id: T.Integer({ minimum: 1, maximum: 2147483647, description: 'The geo family (template id)' }),
  country: T.String({
    pattern: '^[A-Za-z0-9]{2}$',
    description:
      "The visitor's ISO 3166-1 alpha-2 country code, any case (e.g. the CDN's CF-IPCountry); a code that names no country (XX, T1, EU) gets only the global variant",
  }),
});

export type WireBrand = Static<typeof BrandSchema>;
export type WireOffer = Static<typeof OfferSchema>;
export type WireSiteBrand = Static<typeof SiteBrandSchema>;
export type WireToplist = Static<typeof ToplistSchema>;
export type WireItem = Static<typeof ItemSchema>;
export type ListQuery = Static<typeof ListQuerySchema>;
