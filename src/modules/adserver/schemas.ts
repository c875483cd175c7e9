import { Type as T } from '@sinclair/typebox';
import { strict } from '../../lib/schema-parts.ts';

/** Request schemas of the ad-server admin API. Field names follow the contract (snake_case). */

const Publisher = T.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$', description: 'publisher slug' });
const ApiKey = T.String({ minLength: 8, maxLength: 512, pattern: '^[\\x21-\\x7e]+$' });
const BaseUrl = T.String({ minLength: 1, maxLength: 2000 });
const Size = T.String({ pattern: '^[1-9]\\d{0,4}x[1-9]\\d{0,4}$' });

export const ConnectionInput = T.Object(
  {
    publisher: Publisher,
    environment: T.Optional(T.Union([T.Literal('production'), T.Literal('sandbox')])),
    base_url: BaseUrl,
    api_key: ApiKey,
  },
  strict,
);

export const ConnectionPatch = T.Object(
  { base_url: T.Optional(BaseUrl), api_key: T.Optional(ApiKey) },
  { ...strict, minProperties: 1 },
);

export const ConnectionParams = T.Object({ id: T.String({ pattern: '^asc_[0-9A-Z]{26}$' }) });

export const BookingQuery = T.Object(
  { connection_id: T.Optional(T.String({ pattern: '^asc_[0-9A-Z]{26}$' })) },
  strict,
);

export const PublisherQuery = T.Object({ publisher: T.Optional(Publisher) }, strict);

export const PlacementInput = T.Object(
  {
    publisher: Publisher,
    site_id: T.Optional(T.Integer({ minimum: 1, maximum: 2147483647 })),
    name: T.String({ minLength: 1, maxLength: 200 }),
    sizes: T.Array(Size, { minItems: 1, maxItems: 50, uniqueItems: true }),
  },
  strict,
);

export const PlacementParams = T.Object({ id: T.Integer({ minimum: 1, maximum: 2147483647 }) });

export const PlacementMapping = T.Object(
  {
    connection_id: T.String({ pattern: '^asc_[0-9A-Z]{26}$' }),
    inventory_id: T.String({ minLength: 1, maxLength: 200 }),
  },
  strict,
);

export const PlacementUnmapParams = T.Object({
  id: T.Integer({ minimum: 1, maximum: 2147483647 }),
  connectionId: T.String({ pattern: '^asc_[0-9A-Z]{26}$' }),
});

const DateOnly = T.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$' });
const Geo = T.Array(T.String({ pattern: '^[A-Z]{2}$' }), { maxItems: 250, uniqueItems: true });
const Sizes = T.Array(Size, { minItems: 1, maxItems: 50, uniqueItems: true });
const Ref = T.String({ minLength: 1, maxLength: 120, pattern: '^[A-Za-z0-9._:-]+$' });

export const ForecastInput = T.Object(
  {
    placement_id: T.Integer({ minimum: 1, maximum: 2147483647 }),
    start_date: DateOnly,
    end_date: DateOnly,
    geo: T.Optional(Geo),
    sizes: T.Optional(Sizes),
  },
  strict,
);

const Url = T.String({ minLength: 1, maxLength: 2048 });
const Pixels = T.Integer({ minimum: 1, maximum: 4000 });
/** Approved creatives of a line: the tags pushed are generated from them. */
const Creatives = T.Array(
  T.Object({ image_url: Url, landing_url: Url, width: Pixels, height: Pixels }, strict),
  { maxItems: 10 },
);

const LineFields = {
  placement_id: T.Integer({ minimum: 1, maximum: 2147483647 }),
  month: T.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])$', description: 'YYYY-MM' }),
  geo: T.Optional(Geo),
  goal_impressions: T.Integer({ minimum: 1, maximum: 10_000_000_000 }),
  sizes: Sizes,
  creatives: T.Optional(Creatives),
};

/** One booked line: a placement (its mapped slot) × geo × month. */
export const LineInput = T.Object(LineFields, strict);

export const BookingInput = T.Object(
  {
    connection_id: T.String({ pattern: '^asc_[0-9A-Z]{26}$' }),
    currency: T.String({ pattern: '^[A-Z]{3}$' }),
    advertiser: T.Object(
      { name: T.String({ minLength: 1, maxLength: 200 }), external_ref: T.Optional(Ref) },
      strict,
    ),
    campaign: T.Object({ name: T.String({ minLength: 1, maxLength: 200 }), external_ref: Ref }, strict),
    lines: T.Array(LineInput, { minItems: 1, maxItems: 200 }),
  },
  strict,
);

export const LinePatch = T.Object(
  {
    goal_impressions: T.Optional(LineFields.goal_impressions),
    geo: T.Optional(Geo),
    creatives: T.Optional(Creatives),
  },
  { ...strict, minProperties: 1 },
);

export const BookingParams = T.Object({ id: T.String({ pattern: '^bkg_[0-9A-Z]{26}$' }) });
export const LineParams = T.Object({
  id: T.String({ pattern: '^bkg_[0-9A-Z]{26}$' }),
  lineNo: T.Integer({ minimum: 1, maximum: 200 }),
});
