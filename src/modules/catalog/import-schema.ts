import { FormatRegistry, type Static, Type as T } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { invalidField } from '../../lib/errors.ts';
import { strict } from '../../lib/schema-parts.ts';
import { BrandInput, OfferInput, TrackerInput } from './schemas.ts';

/** The most rows one import file may hold per section. */
export const IMPORT_MAX_ROWS = 50_000;

const Ref = T.String({ minLength: 1, maxLength: 100 });

const ImportTracker = T.Composite(
  [T.Omit(TrackerInput, ['externalId']), T.Object({ externalId: Ref })],
  strict,
);

/**
 * The bulk import document (`podium import FILE`). Rows are matched on `externalId`, so
 * importing the same file twice changes nothing; references between rows use external ids
 * and type names instead of database ids.
 */
export const ImportDocument = T.Object(
  {
    owners: T.Optional(
      T.Array(T.Object({ externalId: Ref, name: T.String({ minLength: 1, maxLength: 200 }) }, strict), {
        maxItems: IMPORT_MAX_ROWS,
      }),
    ),
    templates: T.Optional(
      T.Array(
        T.Object(
          {
            externalId: Ref,
            name: T.String({ minLength: 1, maxLength: 200 }),
            productType: T.String({ minLength: 1, maxLength: 200 }),
            classificationType: T.String({ minLength: 1, maxLength: 200 }),
          },
          strict,
        ),
        { maxItems: IMPORT_MAX_ROWS },
      ),
    ),
    brands: T.Optional(T.Array(BrandInput, { maxItems: IMPORT_MAX_ROWS })),
    offers: T.Optional(
      T.Array(
        T.Composite(
          [
            T.Omit(OfferInput, ['brandId', 'offerTypeId', 'trackers']),
            T.Object({
              brand: Ref,
              offerType: T.String({ minLength: 1, maxLength: 200 }),
              trackers: T.Optional(T.Array(ImportTracker, { maxItems: 50 })),
            }),
          ],
          strict,
        ),
        { maxItems: IMPORT_MAX_ROWS },
      ),
    ),
  },
  strict,
);

export type ImportDocumentT = Static<typeof ImportDocument>;

// TypeBox's checker knows no formats of its own; these match what the admin API's AJV accepts.
FormatRegistry.Set(
  'date',
  (v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`)),
);
FormatRegistry.Set(
  'date-time',
  (v) =>
    /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(v) &&
    !Number.isNaN(Date.parse(v)),
);

const check = TypeCompiler.Compile(ImportDocument);

/** Validates a parsed import file; throws a 422 naming the first bad field (`brands.3.slug`). */
export function parseImportDocument(value: unknown): ImportDocumentT {
  if (check.Check(value)) return value;
  const first = check.Errors(value).First();
  const field = first?.path.split('/').filter(Boolean).join('.') || 'document';
  throw invalidField(field, first?.message ?? 'is invalid');
}
