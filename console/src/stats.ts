import type { StatsLine } from '../../src/modules/reporting/stats.ts';

/** The parts of a `GET /tracking/stats` row the console reads (the server's own type, so the two cannot drift). */
export type StatsRow = Pick<
  StatsLine,
  | 'day'
  | 'siteId'
  | 'toplistId'
  | 'position'
  | 'brandId'
  | 'programId'
  | 'clicks'
  | 'impressions'
  | 'registrations'
  | 'ftds'
  | 'conversions'
>;
/** What the chart breaks the numbers down by; `total` is one line per metric. */
export type Dimension = 'total' | 'site' | 'toplist' | 'position' | 'brand' | 'program';
export type Metric = 'clicks' | 'impressions' | 'conversions';
export const METRICS: Metric[] = ['clicks', 'impressions', 'conversions'];

const COLUMN: Record<Exclude<Dimension, 'total'>, keyof StatsRow> = {
  site: 'siteId',
  toplist: 'toplistId',
  position: 'position',
  brand: 'brandId',
  program: 'programId',
};

/** Every day from `from` to `to` (inclusive, YYYY-MM-DD), so days without traffic show as zero. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  const end = Date.parse(`${to}T00:00:00Z`);
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= end && days.length <= 366; t += 86_400_000)
    days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

/** The group a row belongs to: the id (or position) as text, `none` when the row has no value there. */
export function groupOf(r: StatsRow, dim: Dimension): string {
  if (dim === 'total') return 'all';
  const v = r[COLUMN[dim]];
  return v === null ? 'none' : String(v);
}

export interface Totals {
  key: string;
  clicks: number;
  impressions: number;
  registrations: number;
  ftds: number;
  conversions: number;
}

/** Sums per group, most clicks first (then most conversions). */
export function totalsBy(rows: StatsRow[], dim: Dimension): Totals[] {
  const by = new Map<string, Totals>();
  for (const r of rows) {
    const key = groupOf(r, dim);
    const t = by.get(key) ?? { key, clicks: 0, impressions: 0, registrations: 0, ftds: 0, conversions: 0 };
    t.clicks += r.clicks;
    t.impressions += r.impressions;
    t.registrations += r.registrations;
    t.ftds += r.ftds;
    t.conversions += r.conversions;
    by.set(key, t);
  }
  return [...by.values()].sort((a, b) => b.clicks - a.clicks || b.conversions - a.conversions);
}

export interface Series {
  key: string;
  values: number[];
}

/**
 * Day-by-day lines: one per metric for `total`, else one per group for `metric`, the `max`
 * biggest groups kept and the rest summed into `other`.
 */
export function seriesOf(
  rows: StatsRow[],
  days: string[],
  dim: Dimension,
  metric: Metric,
  max = 8,
): Series[] {
  const index = new Map(days.map((d, i) => [d, i]));
  const line = (pick: (r: StatsRow) => number, keep: (r: StatsRow) => boolean) => {
    const values = days.map(() => 0);
    for (const r of rows) {
      const i = r.day === null ? undefined : index.get(r.day);
      if (i !== undefined && keep(r)) values[i]! += pick(r);
    }
    return values;
  };
  if (dim === 'total')
    return METRICS.map((m) => ({
      key: m,
      values: line(
        (r) => r[m],
        () => true,
      ),
    }));
  const ranked = totalsBy(rows, dim)
    .filter((t) => t[metric] > 0)
    .sort((a, b) => b[metric] - a[metric]);
  const shown = ranked.slice(0, max).map((t) => t.key);
  const series = shown.map((key) => ({
    key,
    values: line(
      (r) => r[metric],
      (r) => groupOf(r, dim) === key,
    ),
  }));
  if (ranked.length > max) {
    const set = new Set(shown);
    series.push({
      key: 'other',
      values: line(
        (r) => r[metric],
        (r) => !set.has(groupOf(r, dim)),
      ),
    });
  }
  return series;
}
