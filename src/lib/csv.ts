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
 * One cell per RFC 4180: quoted when it holds a comma, quote or line break (quotes doubled);
 * text that a spreadsheet would read as a formula gets a leading apostrophe. Plain numbers,
 * negative ones included, stay numbers.
 */
export function csvCell(value: CsvCell): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  if (typeof value === 'string' && FORMULA_START.test(text) && !NUMBER.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A whole CSV document: header line, then one line per row, CRLF line ends. */
export function toCsv(header: readonly string[], rows: Iterable<readonly CsvCell[]>): string {
  const lines = [header.map(csvCell).join(',')];
  for (const row of rows) lines.push(row.map(csvCell).join(','));
  return `${lines.join('\r\n')}\r\n`;
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
