/**
 * The operator daily aggregate as Podium reads it: where the rows and each figure sit in the
 * operator's answer (a per-programme mapping for operators whose shape differs from the
 * documented one), and strict validation of every row. Pure functions, no I/O.
 */

/** The fields Podium reads from an answer; values are dotted paths into the answer or a row. */
export const MAPPING_FIELDS = [
  'rows',
  'date',
  'currency',
  'next_cursor',
  'campaign',
  'tracker',
  'clicks',
  'registrations',
  'ftds',
  'deposits',
  'commission',
] as const;
export type MappingField = (typeof MAPPING_FIELDS)[number];
export type ReportMapping = Partial<Record<MappingField, string>>;

/** The documented shape: `{date, currency, rows: [{campaign, tracker, clicks, …}], next_cursor?}`. */
export const DEFAULT_MAPPING: Record<MappingField, string> = Object.fromEntries(
  MAPPING_FIELDS.map((f) => [f, f]),
) as Record<MappingField, string>;

const PATH = /^[A-Za-z_][A-Za-z0-9_-]{0,63}(\.[A-Za-z_][A-Za-z0-9_-]{0,63}){0,3}$/;

/** The first problem of a mapping as `[field, message]`, or undefined when it is usable. */
export function mappingProblem(mapping: Record<string, unknown>): [string, string] | undefined {
  for (const [field, path] of Object.entries(mapping)) {
    if (!(MAPPING_FIELDS as readonly string[]).includes(field))
      return [`mapping.${field}`, `is not a mapped field (${MAPPING_FIELDS.join(', ')})`];
    if (typeof path !== 'string' || !PATH.test(path))
      return [`mapping.${field}`, 'must be a field name or a dotted path such as stats.clicks'];
  }
  return undefined;
}

/** One operator row, normalised: counts as integers, money as exact decimal strings. */
export interface OperatorRow {
  campaign: string;
  tracker: string;
  clicks: number;
  registrations: number;
  ftds: number;
  deposits: string;
  commission: string;
}

export interface OperatorPage {
  rows: OperatorRow[];
  currency: string | null;
  nextCursor: string | null;
}

/** A pull answer that Podium cannot use; `message` names the offending field. */
export class ReportShapeError extends Error {
  constructor(field: string, problem: string) {
    super(`${field}: ${problem}`);
    this.name = 'ReportShapeError';
  }
}

function at(obj: unknown, path: string): unknown {
  let v = obj;
  for (const key of path.split('.')) {
    if (!v || typeof v !== 'object' || Array.isArray(v) || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

const MAX_TEXT = 200;
const DECIMAL = /^-?\d{1,14}(\.\d{1,4})?$/;

function text(v: unknown, field: string): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
  if (typeof v !== 'string' || v.length > MAX_TEXT || /[\p{Cc}]/u.test(v))
    throw new ReportShapeError(field, `must be text of at most ${MAX_TEXT} printable characters`);
  return v.trim();
}

function count(v: unknown, field: string): number {
  if (v === undefined || v === null) return 0;
  const n = typeof v === 'string' && /^\d{1,10}$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0 || n > 2_147_483_647)
    throw new ReportShapeError(field, 'must be a whole number of at least 0');
  return n;
}

function money(v: unknown, field: string): string {
  if (v === undefined || v === null) return '0';
  // A JSON number is read through its shortest decimal form, so 12.5 stays 12.5 exactly.
  const s = typeof v === 'number' && Number.isFinite(v) ? String(v) : v;
  if (typeof s !== 'string' || !DECIMAL.test(s))
    throw new ReportShapeError(field, 'must be a decimal amount such as "1840.00" (up to 4 decimals)');
  return s;
}

/**
 * Reads one page of an operator's answer for `day` through the mapping. Throws ReportShapeError
 * naming the first bad field: a missing rows array, a date other than the one asked for, a row
 * that is not an object or holds a bad figure.
 */
export function readReportPage(body: unknown, day: string, mapping: ReportMapping): OperatorPage {
  const path = (f: MappingField) => mapping[f] ?? DEFAULT_MAPPING[f];
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new ReportShapeError('body', 'must be a JSON object');
  const date = at(body, path('date'));
  if (date !== undefined && date !== day)
    throw new ReportShapeError(path('date'), `is ${JSON.stringify(date)}, the request asked for ${day}`);
  const currency = at(body, path('currency'));
  if (
    currency !== undefined &&
    currency !== null &&
    (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency))
  )
    throw new ReportShapeError(path('currency'), 'must be an ISO 4217 code such as EUR');
  const next = at(body, path('next_cursor'));
  if (next !== undefined && next !== null && (typeof next !== 'string' || !/^[\x21-\x7e]{1,500}$/.test(next)))
    throw new ReportShapeError(path('next_cursor'), 'must be a short printable string or null');
  const list = at(body, path('rows'));
  if (!Array.isArray(list)) throw new ReportShapeError(path('rows'), 'must be an array');
  const rows = list.map((row, i): OperatorRow => {
    const f = (name: MappingField) => `${path('rows')}[${i}].${path(name)}`;
    if (!row || typeof row !== 'object' || Array.isArray(row))
      throw new ReportShapeError(`${path('rows')}[${i}]`, 'must be an object');
    const out = {
      campaign: text(at(row, path('campaign')), f('campaign')),
      tracker: text(at(row, path('tracker')), f('tracker')),
      clicks: count(at(row, path('clicks')), f('clicks')),
      registrations: count(at(row, path('registrations')), f('registrations')),
      ftds: count(at(row, path('ftds')), f('ftds')),
      deposits: money(at(row, path('deposits')), f('deposits')),
      commission: money(at(row, path('commission')), f('commission')),
    };
    if (!out.campaign && !out.tracker)
      throw new ReportShapeError(`${path('rows')}[${i}]`, `needs ${path('tracker')} or ${path('campaign')}`);
    return out;
  });
  return {
    rows,
    currency: (currency as string | undefined) ?? null,
    nextCursor: (next as string | undefined) ?? null,
  };
}
