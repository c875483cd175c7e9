// Calendar-date helpers on `YYYY-MM-DD` strings (UTC arithmetic, no time of day involved).

const DAY_MS = 86_400_000;

/** True when `s` is a real calendar date in `YYYY-MM-DD` form. */
export function isDate(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

/** Days from `a` to `b` (b − a); inclusive length of a range is `daysBetween + 1`. */
export function daysBetween(a: string, b: string): number {
  return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / DAY_MS);
}

/** The date `n` days after `s`. */
export function addDays(s: string, n: number): string {
  return new Date(Date.parse(`${s}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
}

/** Day of week of a date, 0 = Sunday. */
export function weekday(s: string): number {
  return new Date(`${s}T00:00:00Z`).getUTCDay();
}

/** The calendar date of `now` in an IANA time zone. */
export function todayIn(timezone: string, now: Date): string {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone: timezone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(now);
}

/** Later of two dates. */
export function maxDate(a: string, b: string): string {
  return a > b ? a : b;
}

/** Earlier of two dates. */
export function minDate(a: string, b: string): string {
  return a < b ? a : b;
}
