import { Type as T } from '@sinclair/typebox';
import { RowId as Id, strict } from '../../lib/schema-parts.ts';

/** Request schemas of the stats, suggested orders, reporting zones and operator aggregates. */

const DateOnly = T.String({ maxLength: 10, description: 'date YYYY-MM-DD' });

export const StatsQuery = T.Object({
  from: DateOnly,
  to: DateOnly,
  tz: T.Optional(
    T.String({ minLength: 1, maxLength: 64, description: 'program (default), site, UTC or an IANA zone' }),
  ),
  program_id: T.Optional(Id),
  site_id: T.Optional(Id),
  toplist_id: T.Optional(Id),
  brand_id: T.Optional(Id),
  by: T.Optional(
    T.Literal('sub_id', { description: "also split rows by the clicks' sub_id (range ≤ 31 days)" }),
  ),
  group: T.Optional(
    T.String({
      minLength: 1,
      maxLength: 40,
      description:
        'sum over every other dimension: one or two of day, site, toplist, position, brand, program, comma-separated; total: one row',
    }),
  ),
  page: T.Optional(T.Integer({ minimum: 1, maximum: 1_000_000 })),
  per_page: T.Optional(T.Integer({ minimum: 1, maximum: 1000 })),
  format: T.Optional(T.Union([T.Literal('json'), T.Literal('csv')])),
});

export const SuggestedOrderQuery = T.Object({
  days: T.Optional(
    T.Integer({ minimum: 1, maximum: 90, description: 'window in UTC days ending today; default 30' }),
  ),
  currency: T.Optional(
    T.String({
      pattern: '^[A-Z]{3}$',
      description: "commission currency; default the family's most frequent",
    }),
  ),
});

export const SiteTimezoneInput = T.Object({ timezone: T.String({ minLength: 1, maxLength: 64 }) }, strict);

export const ReportInput = T.Object(
  {
    url: T.String({ minLength: 1, maxLength: 2000, description: "operator's report API base URL (https)" }),
    key: T.Optional(
      T.Union([T.String({ minLength: 1, maxLength: 500 }), T.Null()], {
        description: 'report credential, write-only; null removes it, omitted keeps it',
      }),
    ),
    mapping: T.Optional(
      T.Record(T.String({ maxLength: 32 }), T.String({ maxLength: 300 }), { maxProperties: 20 }),
    ),
  },
  strict,
);

export const DayRangeQuery = T.Object({ from: DateOnly, to: DateOnly });

export const ReconcileQuery = T.Object({
  from: DateOnly,
  to: DateOnly,
  threshold: T.Optional(T.Number({ minimum: 0, maximum: 100, description: 'percent; default from config' })),
});
