import { describe, expect, it } from 'vitest';
import { changeOf, formatMoney, moneyText } from './money.ts';
import { localToday, periodOf, presetOf, previousOf } from './periods.ts';

describe('report periods', () => {
  it('names the days of each preset and the period it is compared with', () => {
    const today = '2026-03-31';
    const both = (p: Parameters<typeof periodOf>[0]) => {
      const cur = periodOf(p, today);
      return [cur, previousOf(p, cur)];
    };
    expect(both('today')).toEqual([
      { from: '2026-03-31', to: '2026-03-31' },
      { from: '2026-03-30', to: '2026-03-30' },
    ]);
    expect(both('yesterday')).toEqual([
      { from: '2026-03-30', to: '2026-03-30' },
      { from: '2026-03-29', to: '2026-03-29' },
    ]);
    expect(both('7d')).toEqual([
      { from: '2026-03-25', to: '2026-03-31' },
      { from: '2026-03-18', to: '2026-03-24' },
    ]);
    expect(both('30d')).toEqual([
      { from: '2026-03-02', to: '2026-03-31' },
      { from: '2026-01-31', to: '2026-03-01' },
    ]);
    // Month to date on the 31st is compared with February cut at its last day.
    expect(both('mtd')).toEqual([
      { from: '2026-03-01', to: '2026-03-31' },
      { from: '2026-02-01', to: '2026-02-28' },
    ]);
    expect(both('last-month')).toEqual([
      { from: '2026-02-01', to: '2026-02-28' },
      { from: '2026-01-01', to: '2026-01-31' },
    ]);
    // Across a year: January's last month is December.
    expect(periodOf('last-month', '2026-01-15')).toEqual({ from: '2025-12-01', to: '2025-12-31' });
    expect(previousOf('mtd', periodOf('mtd', '2026-01-15'))).toEqual({
      from: '2025-12-01',
      to: '2025-12-15',
    });
  });

  it('tells which preset a range is, and reads today in local time', () => {
    expect(presetOf({ from: '2026-03-25', to: '2026-03-31' }, '2026-03-31')).toBe('7d');
    expect(presetOf({ from: '2026-03-24', to: '2026-03-31' }, '2026-03-31')).toBeUndefined();
    expect(localToday(new Date('2026-03-31T12:00:00Z'))).toMatch(/^2026-03-3[01]|2026-04-01$/);
  });
});

describe('money and changes', () => {
  it("formats an exact decimal in its currency's decimals", () => {
    expect(formatMoney('1234.5000', 'EUR', 'en-GB')).toBe('€1,234.50');
    expect(formatMoney('1234.5000', 'JPY', 'en-GB')).toBe('JP¥1,235');
    // Past a double's precision, still exact.
    expect(formatMoney('12345678901234567.8900', 'USD', 'en-US')).toBe('$12,345,678,901,234,567.89');
    expect(formatMoney('5', 'XYZZ', 'en-GB')).toBe('5 XYZZ');
    expect(moneyText({ USD: '2.0000', EUR: '1.5000', SEK: null }, 'en-GB')).toBe('€1.50 · US$2.00');
    expect(moneyText({}, 'en-GB')).toBe('—');
  });

  it('says how much a figure moved against the previous period', () => {
    expect(changeOf(120, 100)).toEqual({ dir: 'up', text: '▲ 20 %' });
    expect(changeOf(95, 100)).toEqual({ dir: 'down', text: '▼ 5.0 %' });
    expect(changeOf(100, 100)).toEqual({ dir: 'same', text: '±0 %' });
    expect(changeOf(3, 0)).toEqual({ dir: 'new', text: 'new' });
    expect(changeOf(0, 0)).toBeNull();
    expect(changeOf(0, 7)).toEqual({ dir: 'down', text: '▼ 100 %' });
  });
});
