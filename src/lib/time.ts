/** ISO 8601 in UTC with an explicit `+00:00` offset and second precision: `2026-11-23T06:55:01+00:00`. */
export function wireTimestamp(d: Date | string): string {
  const date = typeof d === 'string' ? new Date(d) : d;
  return `${date.toISOString().slice(0, 19)}+00:00`;
}

/** A database timestamp as ISO 8601 (null stays null): drivers return Date objects or text. */
export function isoOrNull(d: Date | string | null): string | null {
  return d === null ? null : new Date(d).toISOString();
}

/** A database `date` as `YYYY-MM-DD`, whether the driver returned text or a Date at UTC midnight. */
export function dayText(d: Date | string): string {
  return typeof d === 'string' ? d.slice(0, 10) : d.toISOString().slice(0, 10);
}

/**
 * An IANA zone name that both Intl and the database read the same way: `databaseZones` is the
 * server's own list (src/db/timezones.ts). Offsets such as `+02:00` are refused: PostgreSQL reads
 * POSIX offsets with the opposite sign.
 */
export function isTimezone(tz: string, databaseZones: ReadonlySet<string>): boolean {
  if (!/^[A-Za-z][A-Za-z_]*(\/[A-Za-z0-9_+-]+){0,2}$/.test(tz) || !databaseZones.has(tz)) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/**
 * A calendar day written `YYYY-MM-DD` that exists (no 2026-02-30) in years 0001–9999: PostgreSQL
 * has no year 0 (it reads `0000` as an error) and JavaScript writes years past 9999 differently.
 */
export function isDay(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s) || s.startsWith('0000')) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

const RFC3339 = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;
const FIRST_INSTANT = Date.parse('0001-01-01T00:00:00Z');
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * An RFC 3339 timestamp with an offset whose day exists and whose instant, in UTC, lies in the
 * years 0001–9999 (what PostgreSQL's timestamptz and JavaScript dates both read the same way).
 */
export function isInstant(s: string): boolean {
  const m = RFC3339.exec(s);
  if (!m || !isDay(m[1]!)) return false;
  if (Number(m[2]) > 23 || Number(m[3]) > 59 || Number(m[4]) > 59) return false;
  if (m[7] !== undefined && (Number(m[7]) > 23 || Number(m[8]) > 59)) return false;
  const at = Date.parse(s.replace(' ', 'T'));
  return !Number.isNaN(at) && at >= FIRST_INSTANT && at <= LAST_INSTANT;
}

/** The day `n` days after `day` (both `YYYY-MM-DD`). */
export function addDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
}

/** Whole days from `from` to `to` (negative when `to` is earlier). */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

/** The calendar day of `at` in zone `tz`, `YYYY-MM-DD`. */
export function dayIn(at: Date, tz: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: tz }).format(at);
}
