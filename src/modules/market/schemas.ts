import { Type as T } from '@sinclair/typebox';
import { strict } from '../../lib/schema-parts.ts';

/** Request schemas of the marketplace admin API (snake_case, like the ad-server API). */

const Publisher = T.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$', description: 'publisher slug' });
/** A display name: 1–200 characters, not only blanks. */
export const Name = T.String({ minLength: 1, maxLength: 200, pattern: '\\S' });
export const Month = T.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])$', description: 'YYYY-MM' });
const Country = T.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2 country code' });
/** Exact decimal as a string: never a JSON number, so no float rounding on either side. */
const Price = T.String({
  pattern: '^(0|[1-9][0-9]{0,11})(\\.[0-9]{1,4})?$',
  description: 'decimal as a string ("12.5", "1500.00"), at most 4 decimals',
});
const Impressions = T.Integer({ minimum: 1, maximum: 10_000_000_000 });
const AdvertiserId = T.String({ pattern: '^adv_[0-9A-Z]{26}$' });
const ProductId = T.String({ pattern: '^prd_[0-9A-Z]{26}$' });
const ReservationId = T.String({ pattern: '^rsv_[0-9A-Z]{26}$' });

const Contact = T.Object(
  {
    name: Name,
    email: T.String({ minLength: 3, maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+$' }),
    role: T.Optional(T.String({ minLength: 1, maxLength: 100 })),
  },
  strict,
);
const Contacts = T.Array(Contact, { maxItems: 20 });

export const AdvertiserInput = T.Object(
  { publisher: Publisher, name: Name, contacts: T.Optional(Contacts) },
  strict,
);
export const AdvertiserPatch = T.Object(
  { name: T.Optional(Name), contacts: T.Optional(Contacts) },
  { ...strict, minProperties: 1 },
);
export const AdvertiserParams = T.Object({ id: AdvertiserId });
export const PublisherQuery = T.Object({ publisher: T.Optional(Publisher) }, strict);

const Pricing = T.Union([T.Literal('cpm'), T.Literal('flat')]);
const Geos = T.Array(Country, { minItems: 1, maxItems: 50, uniqueItems: true });

export const ProductInput = T.Object(
  {
    connection_id: T.String({ pattern: '^asc_[0-9A-Z]{26}$' }),
    placement_id: T.Integer({ minimum: 1, maximum: 2147483647 }),
    name: Name,
    geos: Geos,
    first_month: Month,
    last_month: Month,
    pricing: Pricing,
    price: Price,
  },
  strict,
);
export const ProductPatch = T.Object(
  {
    name: T.Optional(Name),
    geos: T.Optional(Geos),
    first_month: T.Optional(Month),
    last_month: T.Optional(Month),
    pricing: T.Optional(Pricing),
    price: T.Optional(Price),
    status: T.Optional(T.Union([T.Literal('active'), T.Literal('withdrawn')])),
  },
  { ...strict, minProperties: 1 },
);
export const ProductParams = T.Object({ id: ProductId });
export const ProductQuery = T.Object(
  { connection_id: T.Optional(T.String({ pattern: '^asc_[0-9A-Z]{26}$' })) },
  strict,
);

export const AvailabilityQuery = T.Object({ month: T.Optional(Month), geo: T.Optional(Country) }, strict);
export const ListedInput = T.Object(
  { geo: Country, month: Month, impressions: T.Integer({ minimum: 0, maximum: 10_000_000_000 }) },
  strict,
);
export const RefreshInput = T.Object({ geo: Country, month: Month }, strict);

/** The lines a reservation asks for: a product, a country and a month each, 1 to 50. */
export const ReservationLines = T.Array(
  T.Object({ product_id: ProductId, geo: Country, month: Month, impressions: Impressions }, strict),
  { minItems: 1, maxItems: 50 },
);
export const ReservationInput = T.Object(
  {
    advertiser_id: AdvertiserId,
    campaign_name: Name,
    lines: ReservationLines,
  },
  strict,
);
export const ReservationParams = T.Object({ id: ReservationId });
/** A reservation's state. */
export const ReservationStatusSchema = T.Union([
  T.Literal('held'),
  T.Literal('approving'),
  T.Literal('booked'),
  T.Literal('rejected'),
  T.Literal('expired'),
]);
export const ReservationQuery = T.Object(
  {
    status: T.Optional(ReservationStatusSchema),
    advertiser_id: T.Optional(AdvertiserId),
    limit: T.Optional(T.Integer({ minimum: 1, maximum: 200 })),
  },
  strict,
);
export const RejectInput = T.Object(
  { reason: T.String({ minLength: 1, maxLength: 1000, pattern: '\\S' }) },
  strict,
);

export const StatementInput = T.Object({ month: Month }, strict);
export const StatementQuery = T.Object(
  {
    advertiser_id: T.Optional(AdvertiserId),
    month: T.Optional(Month),
    limit: T.Optional(T.Integer({ minimum: 1, maximum: 200 })),
  },
  strict,
);
export const StatementParams = T.Object({ id: T.String({ pattern: '^stm_[0-9A-Z]{26}$' }) });
