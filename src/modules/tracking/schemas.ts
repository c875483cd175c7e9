import { Type as T } from '@sinclair/typebox';
import { RowId as Id, searchText, strict } from '../../lib/schema-parts.ts';

/** Request schemas of the programmes admin API and the public tracking surfaces. */

export const ProgramInput = T.Object(
  {
    slug: T.String({ minLength: 1, maxLength: 63 }),
    name: T.String({ minLength: 1, maxLength: 200 }),
    affiliateId: T.Optional(T.String({ maxLength: 200 })),
    landingParams: T.Optional(T.String({ maxLength: 1000 })),
    paramMap: T.Optional(
      T.Record(T.String({ maxLength: 32 }), T.String({ maxLength: 64 }), { maxProperties: 10 }),
    ),
    timezone: T.Optional(T.String({ minLength: 1, maxLength: 64 })),
    currency: T.Optional(T.String({ pattern: '^[A-Z]{3}$' })),
    trackerIds: T.Optional(T.Array(Id, { maxItems: 1000, uniqueItems: true })),
  },
  strict,
);
export const ProgramPatch = T.Partial(ProgramInput, { ...strict, minProperties: 1 });

export const ProgramListQuery = T.Object({
  page: T.Optional(T.Integer({ minimum: 1, maximum: 1_000_000 })),
  per_page: T.Optional(T.Integer({ minimum: 1, maximum: 100 })),
  q: T.Optional(searchText('search: part of the name or slug, case-insensitive')),
});

export const SlugParams = T.Object({ slug: T.String({ minLength: 1, maxLength: 120 }) });

export const GoQuery = T.Object({
  sub_id: T.Optional(T.String({ maxLength: 100, pattern: '^[A-Za-z0-9._~-]*$' })),
});
