import { type Static, Type } from '@sinclair/typebox';

// JSON schemas of the Ad Server Integration API (contract 1.0.1), shared by the reference server,
// the conformance checker and the marketplace client. Responses allow extra fields (the contract
// only lists what a client may rely on); requests are strict so typos surface as 400.

const DATE = '^\\d{4}-\\d{2}-\\d{2}$';
/** A calendar date `YYYY-MM-DD` (validity of the day itself is checked by the code). */
export const DateString = Type.String({ pattern: DATE });
/** A creative size `WIDTHxHEIGHT`. */
export const SizeString = Type.String({ pattern: '^[1-9]\\d{0,4}x[1-9]\\d{0,4}$' });
/** ISO 3166-1 alpha-2 country code. */
export const CountryCode = Type.String({ pattern: '^[A-Z]{2}$' });
const Id = Type.String({ minLength: 1, maxLength: 200 });

export const ErrorBody = Type.Object({
  code: Type.String({ pattern: '^[a-z][a-z0-9]*(_[a-z0-9]+)*$' }),
  message: Type.String(),
  details: Type.Optional(Type.Object({})),
});

export const Capabilities = Type.Object({
  forecast: Type.Boolean(),
  reporting: Type.Boolean(),
  draft_booking: Type.Boolean(),
});

/** `GET /health` 200 body (the shape only; field rules beyond shape live in `checkHealthBody`). */
export const HealthResponse = Type.Object({
  account_id: Type.String({ minLength: 1 }),
  account_name: Type.Optional(Type.String()),
  timezone: Type.String({ minLength: 1 }),
  currency: Type.String({ pattern: '^[A-Z]{3}$' }),
  capabilities: Capabilities,
});

export const InventorySlot = Type.Object({
  inventory_id: Type.String({ minLength: 1 }),
  name: Type.String(),
  sizes: Type.Array(SizeString),
  format: Type.Optional(Type.String()),
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('archived')])),
});

const NextCursor = Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Null()]));

/** `GET /inventory` 200 body. */
export const InventoryPage = Type.Object({ data: Type.Array(InventorySlot), next_cursor: NextCursor });

export const InventoryQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  },
  { additionalProperties: false },
);

const Flight = Type.Object({ start_date: DateString, end_date: DateString }, { additionalProperties: false });
const Targeting = Type.Object(
  { geo: Type.Optional(Type.Array(CountryCode, { maxItems: 250 })) },
  { additionalProperties: false },
);

export const ForecastRequest = Type.Object(
  {
    inventory_id: Id,
    flight: Flight,
    targeting: Type.Optional(Targeting),
    sizes: Type.Optional(Type.Array(SizeString, { maxItems: 50 })),
  },
  { additionalProperties: false },
);

/** `POST /forecast` 200 body. */
export const ForecastResponse = Type.Object({
  inventory_id: Type.String(),
  available_impressions: Type.Integer({ minimum: 0 }),
  forecasted_impressions: Type.Integer({ minimum: 0 }),
  unit_type: Type.Optional(Type.Literal('IMPRESSIONS')),
});

const Url = Type.String({ minLength: 1, maxLength: 2048, pattern: '^https?://' });
/** Creative shape A: an opaque third-party HTML tag, stored byte for byte. */
export const TagCreative = Type.Object(
  {
    type: Type.Literal('third_party_tag'),
    width: Type.Integer({ minimum: 1, maximum: 10000 }),
    height: Type.Integer({ minimum: 1, maximum: 10000 }),
    tag: Type.String({ minLength: 1, maxLength: 20000 }),
  },
  { additionalProperties: false },
);
/** Creative shape B: image with click and impression URLs. */
export const ImageCreative = Type.Object(
  {
    type: Type.Literal('image'),
    width: Type.Integer({ minimum: 1, maximum: 10000 }),
    height: Type.Integer({ minimum: 1, maximum: 10000 }),
    image_url: Url,
    click_url: Url,
    impression_pixel_url: Url,
  },
  { additionalProperties: false },
);
export const Creative = Type.Union([TagCreative, ImageCreative]);

export const OrderLineRequest = Type.Object(
  {
    external_ref: Id,
    inventory_id: Id,
    flight: Flight,
    goal_impressions: Type.Integer({ minimum: 1, maximum: 10_000_000_000 }),
    targeting: Type.Optional(Targeting),
    sizes: Type.Array(SizeString, { minItems: 1, maxItems: 50 }),
    creatives: Type.Optional(Type.Array(Creative, { maxItems: 20 })),
  },
  { additionalProperties: false },
);

export const OrderRequest = Type.Object(
  {
    idempotency_key: Type.String({ minLength: 1, maxLength: 255 }),
    advertiser: Type.Object(
      { name: Type.String({ minLength: 1, maxLength: 300 }), external_ref: Type.Optional(Id) },
      { additionalProperties: false },
    ),
    order: Type.Object(
      { name: Type.String({ minLength: 1, maxLength: 300 }), external_ref: Id },
      { additionalProperties: false },
    ),
    line_items: Type.Array(OrderLineRequest, { minItems: 1, maxItems: 200 }),
  },
  { additionalProperties: false },
);

/** `POST /orders` 201/200 body. */
export const OrderResponse = Type.Object({
  order_id: Type.String({ minLength: 1 }),
  status: Type.Literal('DRAFT'),
  line_items: Type.Array(
    Type.Object({
      external_ref: Type.String(),
      line_item_id: Type.String({ minLength: 1 }),
      status: Type.Literal('DRAFT'),
    }),
  ),
});

export const ReportRequest = Type.Object(
  {
    line_item_ids: Type.Optional(Type.Array(Id, { minItems: 1, maxItems: 200 })),
    order_id: Type.Optional(Id),
    date_range: Flight,
    granularity: Type.Optional(Type.Union([Type.Literal('total'), Type.Literal('daily')])),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  },
  { additionalProperties: false },
);

export const ReportRow = Type.Object({
  line_item_id: Type.String(),
  date: Type.Optional(DateString),
  impressions: Type.Integer({ minimum: 0 }),
  clicks: Type.Integer({ minimum: 0 }),
});

/** `POST /reports` 200 body. */
export const ReportResponse = Type.Object({ rows: Type.Array(ReportRow), next_cursor: NextCursor });

export type ErrorBody = Static<typeof ErrorBody>;
export type HealthResponse = Static<typeof HealthResponse>;
export type InventorySlot = Static<typeof InventorySlot>;
export type InventoryPage = Static<typeof InventoryPage>;
export type ForecastRequest = Static<typeof ForecastRequest>;
export type ForecastResponse = Static<typeof ForecastResponse>;
export type Creative = Static<typeof Creative>;
export type OrderLineRequest = Static<typeof OrderLineRequest>;
export type OrderRequest = Static<typeof OrderRequest>;
export type OrderResponse = Static<typeof OrderResponse>;
export type ReportRequest = Static<typeof ReportRequest>;
export type ReportRow = Static<typeof ReportRow>;
export type ReportResponse = Static<typeof ReportResponse>;

/** API key scopes of the reference server (least privilege: no activation, no money). */
export const SCOPES = ['inventory:read', 'forecast', 'orders:draft', 'reports'] as const;
export type Scope = (typeof SCOPES)[number];

/** The `/health` field rules beyond shape; returns the problems found (empty = conforming). */
export function checkHealthBody(body: unknown): string[] {
  const problems: string[] = [];
  if (!body || typeof body !== 'object' || Array.isArray(body)) return ['body is not a JSON object'];
  const b = body as Record<string, unknown>;
  if (typeof b.account_id !== 'string' || b.account_id === '') problems.push('account_id missing or empty');
  if (typeof b.timezone !== 'string' || !isIanaZone(b.timezone))
    problems.push(`timezone ${JSON.stringify(b.timezone)} is not an IANA zone identifier`);
  if (typeof b.currency !== 'string' || !isIsoCurrency(b.currency))
    problems.push(`currency ${JSON.stringify(b.currency)} is not an ISO-4217 code`);
  const caps = b.capabilities as Record<string, unknown> | undefined;
  if (!caps || typeof caps !== 'object') problems.push('capabilities missing');
  else {
    for (const k of ['forecast', 'reporting', 'draft_booking'])
      if (typeof caps[k] !== 'boolean') problems.push(`capabilities.${k} is not a boolean`);
    if (caps.reporting === false) problems.push('capabilities.reporting is false');
    if (caps.draft_booking === false) problems.push('capabilities.draft_booking is false');
  }
  return problems;
}

/** True for a real IANA zone name (`Europe/Malta`, `UTC`); offset forms like `UTC+2` are not. */
export function isIanaZone(tz: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(tz) || /^(UTC|GMT)[+-]/i.test(tz)) return false;
  if (/^[+-]?\d/.test(tz)) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));
/** True for an ISO-4217 code known to the runtime's ICU data. */
export function isIsoCurrency(code: string): boolean {
  return /^[A-Z]{3}$/.test(code) && CURRENCIES.has(code);
}
