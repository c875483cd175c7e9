import { describe, expect, it } from 'vitest';
import { clickCountsParam, clickRowsParam } from './repository.ts';
import type { ClickRow } from './types.ts';

const row = (at: string, over: Partial<ClickRow> = {}): ClickRow => ({
  id: `c-${at}-${Math.random()}`,
  kind: 'click',
  at: new Date(at),
  linkId: 7,
  trackerId: 3,
  offerId: null,
  brandId: 5,
  siteId: 1,
  toplistId: 2,
  position: 1,
  programId: 4,
  subId: null,
  referrer: null,
  userAgent: null,
  country: null,
  flag: null,
  ...over,
});

const counts = (rows: ClickRow[]) => clickCountsParam(rows).value as (string | null)[][];

describe('clickCountsParam', () => {
  it('counts unflagged rows per 15-minute bucket and key, as the rollups key them', () => {
    const got = counts([
      row('2026-11-27T10:14:59.999Z'),
      row('2026-11-27T10:00:00.000Z'),
      row('2026-11-27T10:15:00.000Z'),
      row('2026-11-27T10:16:00.000Z', { flag: 'bot' }),
      row('2026-11-27T10:01:00.000Z', { kind: 'impression' }),
      row('2026-11-27T10:02:00.000Z', { position: null }),
      row('2026-11-27T10:03:00.000Z', { position: 0 }),
    ]);
    const q10 = String(Date.parse('2026-11-27T10:00:00Z'));
    const q1015 = String(Date.parse('2026-11-27T10:15:00Z'));
    expect(got).toEqual([
      [q10, 'click', '1', '2', '1', '5', '4', '7', '2'],
      [q1015, 'click', '1', '2', '1', '5', '4', '7', '1'],
      [q10, 'impression', '1', '2', '1', '5', '4', '7', '1'],
      [q10, 'click', '1', '2', null, '5', '4', '7', '1'],
      [q10, 'click', '1', '2', '0', '5', '4', '7', '1'],
    ]);
  });

  it('buckets times before 2000 and before the epoch on the same 15-minute grid', () => {
    const got = counts([row('1999-12-31T23:59:00Z'), row('1969-12-31T23:50:00Z')]);
    expect(got.map((g) => new Date(Number(g[0])).toISOString())).toEqual([
      '1999-12-31T23:45:00.000Z',
      '1969-12-31T23:45:00.000Z',
    ]);
  });

  it('sends every number of a click row as text and keeps nulls', () => {
    const [sent] = clickRowsParam([row('2026-11-27T10:00:00Z', { trackerId: null })]).value as unknown[][];
    expect(sent?.slice(2, 11)).toEqual([
      String(Date.parse('2026-11-27T10:00:00Z')),
      '7',
      null,
      null,
      '5',
      '1',
      '2',
      '1',
      '4',
    ]);
  });
});
