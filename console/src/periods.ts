/** Report periods by name, in local days (YYYY-MM-DD), and the period each is compared with. */

export type Preset = 'today' | 'yesterday' | '7d' | '30d' | 'mtd' | 'last-month';

export const PRESETS: readonly [Preset, string][] = [
  ['today', 'Today'],
  ['yesterday', 'Yesterday'],
  ['7d', 'Last 7 days'],
  ['30d', 'Last 30 days'],
  ['mtd', 'Month to date'],
  ['last-month', 'Last month'],
];

export interface Period {
  from: string;
  to: string;
}

const DAY = 86_400_000;
const iso = (t: number) => new Date(t).toISOString().slice(0, 10);
const at = (day: string) => Date.parse(`${day}T00:00:00Z`);
const shift = (day: string, days: number) => iso(at(day) + days * DAY);
/** The first day of the month `months` away from `day`'s. */
const monthStart = (day: string, months = 0) => {
  const d = new Date(at(day));
  return iso(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1));
};
/** The day `n` (1-based) of the month starting `start`, or its last day when shorter. */
const dayOfMonth = (start: string, n: number) => {
  const last = shift(monthStart(start, 1), -1);
  return iso(Math.min(at(start) + (n - 1) * DAY, at(last)));
};

/** Today in the browser's time zone, as YYYY-MM-DD. */
export function localToday(now = new Date()): string {
  return iso(now.getTime() - now.getTimezoneOffset() * 60_000);
}

/** The days a preset covers, `today` being the local day it is read on. */
export function periodOf(preset: Preset, today: string): Period {
  switch (preset) {
    case 'today':
      return { from: today, to: today };
    case 'yesterday':
      return { from: shift(today, -1), to: shift(today, -1) };
    case '7d':
      return { from: shift(today, -6), to: today };
    case '30d':
      return { from: shift(today, -29), to: today };
    case 'mtd':
      return { from: monthStart(today), to: today };
    case 'last-month':
      return { from: monthStart(today, -1), to: shift(monthStart(today), -1) };
  }
}

/**
 * The period a preset (or any range, without one) is compared with: the month before for a
 * calendar month, the same days of the month before for month to date (cut at its last day), else
 * as many days just before.
 */
export function previousOf(preset: Preset | undefined, p: Period): Period {
  if (preset === 'last-month') return { from: monthStart(p.from, -1), to: shift(p.from, -1) };
  if (preset === 'mtd') {
    const from = monthStart(p.from, -1);
    return { from, to: dayOfMonth(from, Number(p.to.slice(8, 10))) };
  }
  const days = Math.round((at(p.to) - at(p.from)) / DAY) + 1;
  return { from: shift(p.from, -days), to: shift(p.from, -1) };
}

/** The preset whose period is exactly `p` (read today), if any: the one to show as chosen. */
export function presetOf(p: Period, today: string): Preset | undefined {
  return PRESETS.map(([k]) => k).find((k) => {
    const q = periodOf(k, today);
    return q.from === p.from && q.to === p.to;
  });
}
