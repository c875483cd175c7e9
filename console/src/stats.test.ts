import { describe, expect, it } from 'vitest';
import { daysBetween, type StatsRow, seriesOf, totalsBy } from './stats.ts';

const row = (day: string, position: number | null, clicks: number, conversions = 0): StatsRow => ({
  day,
  siteId: 1,
  toplistId: 7,
  position,
  brandId: position === null ? null : 100 + position,
  programId: null,
  clicks,
  impressions: 0,
  registrations: conversions,
  ftds: 0,
  conversions,
});

describe('stats shaping for the tracking chart', () => {
  it('lists every day of the range, across a month end', () => {
    expect(daysBetween('2026-01-30', '2026-02-02')).toEqual([
      '2026-01-30',
      '2026-01-31',
      '2026-02-01',
      '2026-02-02',
    ]);
    expect(daysBetween('2026-02-02', '2026-02-01')).toEqual([]);
  });

  it('totals: one line per metric over the days, zero on days without rows', () => {
    const rows = [row('2026-01-01', 1, 3), row('2026-01-03', 2, 4, 1)];
    const days = daysBetween('2026-01-01', '2026-01-03');
    expect(seriesOf(rows, days, 'total', 'clicks')).toEqual([
      { key: 'clicks', values: [3, 0, 4] },
      { key: 'impressions', values: [0, 0, 0] },
      { key: 'conversions', values: [0, 0, 1] },
    ]);
  });

  it('by position: biggest groups first, the rest summed as other; unattributed rows are their own group', () => {
    const rows = [
      row('2026-01-01', 1, 5),
      row('2026-01-01', 2, 1),
      row('2026-01-02', 2, 1),
      row('2026-01-02', 3, 1),
      row('2026-01-02', null, 0, 2),
    ];
    const days = daysBetween('2026-01-01', '2026-01-02');
    expect(seriesOf(rows, days, 'position', 'clicks', 2)).toEqual([
      { key: '1', values: [5, 0] },
      { key: '2', values: [1, 1] },
      { key: 'other', values: [0, 1] },
    ]);
    expect(totalsBy(rows, 'brand').map((t) => [t.key, t.clicks, t.conversions])).toEqual([
      ['101', 5, 0],
      ['102', 2, 0],
      ['103', 1, 0],
      ['none', 0, 2],
    ]);
  });
});
