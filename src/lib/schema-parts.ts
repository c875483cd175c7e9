import { Type as T, type TProperties } from '@sinclair/typebox';

/** Request schema parts shared by several modules' admin APIs. */

/** A row id: a positive PostgreSQL `integer`. */
export const RowId = T.Integer({ minimum: 1, maximum: 2147483647 });

/** Path parameters of a route on one row, and on one row under another. */
export const IdParams = T.Object({ id: RowId });
export const SubIdParams = T.Object({ id: RowId, subId: RowId });

/** A list's `q`: printable text with at least one non-space character, matched case-insensitively. */
export function searchText(description: string) {
  return T.String({
    minLength: 1,
    maxLength: 100,
    pattern: '^[^\\u0000-\\u001f\\u007f]*\\S[^\\u0000-\\u001f\\u007f]*$',
    description,
  });
}

/** LIKE pattern matching `text` anywhere, with LIKE's `%`, `_` and `\` taken literally. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Options of an object schema that rejects unknown fields instead of ignoring them. */
export const strict = { additionalProperties: false } as const;

/** An object schema that rejects unknown fields. */
export const StrictObject = <P extends TProperties>(properties: P) => T.Object(properties, strict);
