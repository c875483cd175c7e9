import { type Options, stringify } from 'csv-stringify/sync';
import { snakeCase } from './camel.ts';

/** A CSV cell: numbers and null are written as they are, text is escaped. */
export type CsvCell = string | number | null | undefined;

/** A CSV column: its header and how a record gives its cell. */
export type CsvColumn<T> = [header: string, cell: (r: T) => CsvCell];

/** The fields of `T` that are written as they are. */
type CellField<T> = { [K in keyof T]-?: T[K] extends CsvCell ? K : never }[keyof T] & string;

const NUMBER = /^-?\d+(\.\d+)?$/;
// Spreadsheets run a cell starting with one of these as a formula (CSV injection).
const FORMULA_START = /^[=+\-@\t\r|%]/;

/**
 * RFC 4180 with CRLF line ends (csv-stringify quotes a cell holding a comma, quote or line
 * break, doubling quotes, and here any locale's list separator; null is an empty cell). Text that a spreadsheet would read as a formula
 * gets a leading apostrophe; plain numbers, negative ones included, stay numbers.
 */
const OPTIONS: Options = {
  record_delimiter: '\r\n',
  // Spreadsheets split on the list separator of their locale: `;` (German, Swedish, French …),
  // tab, `|`, the Arabic comma and semicolon, the full-width and ideographic commas. A cell
  // holding any of them is quoted, so it stays one cell whatever the reader's locale.
  quoted_match: /[;\t|\u060C\u061B\uFF0C\uFF1B\u3001]/,
  // Off by default once record_delimiter is set: a line break in a cell must still be quoted.
  quote_record_delimiter: true,
  cast: {
    string: (text) => (FORMULA_START.test(text) && !NUMBER.test(text) ? `'${text}` : text),
  },
};

/** CSV lines for `rows`, each ended by CRLF. */
export function csvRows(rows: readonly (readonly CsvCell[])[]): string {
  return stringify(rows as CsvCell[][], OPTIONS);
}

/** A whole CSV document: header line, then one line per row. */
export function toCsv(header: readonly string[], rows: Iterable<readonly CsvCell[]>): string {
  return csvRows([header, ...rows]);
}

/**
 * CSV columns of record fields, in order, each headed by the field's name in snake_case
 * (`siteId` → `site_id`). A field is written as it is unless `format` gives its cell, which it
 * must for a field that is not a cell (a boolean, an object).
 */
export function csvColumns<T, F extends keyof T & string>(
  fields: readonly F[],
  format: { [K in Exclude<F, CellField<T>>]: (r: T) => CsvCell } & { [K in F]?: (r: T) => CsvCell },
): CsvColumn<T>[] {
  const cells: { [K in F]?: (r: T) => CsvCell } = format;
  return fields.map((f) => [snakeCase(f), cells[f] ?? ((r: T) => r[f] as CsvCell)]);
}
