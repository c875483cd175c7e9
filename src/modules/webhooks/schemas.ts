import { type Static, Type as T } from '@sinclair/typebox';
import { strict } from '../../lib/schema-parts.ts';
import { MAX_GRACE_SECONDS } from './service.ts';
import { WEBHOOK_EVENTS } from './types.ts';

/** Request and response schemas of the webhooks admin API (`/api/admin/v1/webhooks`). */

const Timestamp = T.String({ format: 'date-time' });
const NullableTimestamp = T.Union([Timestamp, T.Null()]);

export const EventType = T.Union(
  WEBHOOK_EVENTS.map((e) => T.Literal(e)),
  { description: 'A change event' },
);

const Url = T.String({
  minLength: 1,
  maxLength: 2000,
  description: 'https URL the events are POSTed to; private and loopback addresses are refused',
});
const Events = T.Array(EventType, { minItems: 1, maxItems: WEBHOOK_EVENTS.length, uniqueItems: true });
const SiteId = T.Union([T.Integer({ minimum: 1, maximum: 2147483647 }), T.Null()], {
  description: "The site whose toplists' events are sent; null or absent: every site (workspace-wide)",
});
const Description = T.String({ maxLength: 500 });

export const EndpointInput = T.Object(
  { url: Url, events: Events, siteId: T.Optional(SiteId), description: T.Optional(Description) },
  strict,
);

export const EndpointPatch = T.Object(
  {
    url: T.Optional(Url),
    events: T.Optional(Events),
    siteId: T.Optional(SiteId),
    description: T.Optional(Description),
    enabled: T.Optional(
      T.Boolean({ description: 'true re-enables an endpoint disabled after repeated failure' }),
    ),
  },
  { ...strict, minProperties: 1 },
);

export const RotateInput = T.Object(
  {
    graceSeconds: T.Optional(
      T.Integer({
        minimum: 0,
        maximum: MAX_GRACE_SECONDS,
        description: 'How long the old secret keeps signing too (default 86400; 0 = stop at once)',
      }),
    ),
  },
  strict,
);

export const EndpointParams = T.Object({ id: T.String({ pattern: '^whk_[0-9A-Z]{26}$' }) }, strict);

export const EndpointQuery = T.Object(
  {
    site_id: T.Optional(T.Integer({ minimum: 1, maximum: 2147483647 })),
    page: T.Optional(T.Integer({ minimum: 1, maximum: 1_000_000 })),
    per_page: T.Optional(T.Integer({ minimum: 1, maximum: 100 })),
  },
  strict,
);

export const PageQuery = T.Object(
  { page: EndpointQuery.properties.page, per_page: EndpointQuery.properties.per_page },
  strict,
);

export const Endpoint = T.Object(
  {
    id: T.String(),
    siteId: T.Union([T.Integer(), T.Null()]),
    url: T.String(),
    events: T.Array(EventType),
    description: T.String(),
    secretHint: T.String({ description: 'First characters of the current secret (whsec_AbCd…)' }),
    previousSecretExpiresAt: NullableTimestamp,
    enabled: T.Boolean(),
    disabledAt: NullableTimestamp,
    disabledReason: T.Union([T.String(), T.Null()]),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  strict,
);

export const Attempt = T.Object(
  {
    attempt: T.Integer({ minimum: 1 }),
    startedAt: Timestamp,
    succeeded: T.Boolean(),
    httpStatus: T.Union([T.Integer(), T.Null()]),
    latencyMs: T.Integer({ minimum: 0 }),
    error: T.Union([T.String(), T.Null()]),
    nextAttemptAt: NullableTimestamp,
  },
  strict,
);

export const Delivery = T.Object(
  {
    id: T.String({ description: 'Message id, sent as webhook-id (the same on every retry)' }),
    eventId: T.String(),
    eventType: T.String(),
    status: T.Union([T.Literal('pending'), T.Literal('succeeded'), T.Literal('failed')]),
    attempts: T.Integer({ minimum: 0 }),
    maxAttempts: T.Integer({ minimum: 1 }),
    nextAttemptAt: NullableTimestamp,
    lastError: T.Union([T.String(), T.Null()]),
    createdAt: Timestamp,
    completedAt: NullableTimestamp,
    log: T.Array(Attempt),
  },
  strict,
);

const Meta = T.Object(
  {
    current_page: T.Integer(),
    per_page: T.Integer(),
    total: T.Integer(),
    last_page: T.Integer(),
    from: T.Union([T.Integer(), T.Null()]),
    to: T.Union([T.Integer(), T.Null()]),
  },
  strict,
);

export const EndpointOne = T.Object({ data: Endpoint }, strict);
export const EndpointWithSecret = T.Object(
  {
    data: Endpoint,
    secret: T.String({ pattern: '^whsec_[A-Za-z0-9+/]+=*$', description: 'Signing secret, shown this once' }),
  },
  strict,
);
export const EndpointList = T.Object({ data: T.Array(Endpoint), meta: Meta }, strict);
export const DeliveryOne = T.Object({ data: Delivery }, strict);
export const DeliveryList = T.Object({ data: T.Array(Delivery), meta: Meta }, strict);

/** The body of every event POSTed to an endpoint. */
export const EventPayload = T.Object(
  {
    type: T.Union([EventType, T.Literal('webhook.test')]),
    timestamp: T.String({ description: 'ISO 8601 with UTC offset: when the change happened' }),
    data: T.Object({
      toplistId: T.Optional(T.Integer()),
      siteId: T.Union([T.Integer(), T.Null()]),
      slug: T.Optional(T.String()),
      templateId: T.Optional(T.Integer()),
      geo: T.Optional(T.Object({ geo_type: T.String(), code: T.String() }, strict)),
      version: T.Optional(T.Union([T.String({ pattern: '^[0-9]+$' }), T.Null()])),
      liveFrom: T.Optional(T.Union([T.String(), T.Null()])),
      liveUntil: T.Optional(T.Union([T.String(), T.Null()])),
      endpointId: T.Optional(T.String()),
    }),
  },
  strict,
);

export type EndpointInputT = Static<typeof EndpointInput>;
export type EndpointPatchT = Static<typeof EndpointPatch>;
