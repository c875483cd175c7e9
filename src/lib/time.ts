/** ISO 8601 in UTC with an explicit `+00:00` offset and second precision: `2026-11-23T06:55:01+00:00`. */
export function wireTimestamp(d: Date | string): string {
  const date = typeof d === 'string' ? new Date(d) : d;
  return `${date.toISOString().slice(0, 19)}+00:00`;
}

/**
 * An IANA zone name that both Intl and PostgreSQL read the same way. Offsets such as `+02:00`
 * are refused: PostgreSQL reads POSIX offsets with the opposite sign.
 */
export function isTimezone(tz: string): boolean {
  if (!/^[A-Za-z][A-Za-z_]*(\/[A-Za-z0-9_+-]+){0,2}$/.test(tz)) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** A calendar day written `YYYY-MM-DD` that exists (no 2026-02-30). */
export function isDay(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
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
