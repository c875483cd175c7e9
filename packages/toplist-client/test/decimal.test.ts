import { describe, expect, it } from 'vitest';
import {
  compareDecimals,
  formatHundredths,
  offerDecimals,
  sumDecimals,
  toHundredths,
  toHundredthsOrNull,
} from '../src/index.ts';

describe('decimal helpers', () => {
  it('converts wire decimals to exact hundredths and back', () => {
    expect(toHundredths('200.00')).toBe(20000n);
    expect(toHundredths('1.85')).toBe(185n);
    expect(toHundredths('0.05')).toBe(5n);
    expect(toHundredths('7')).toBe(700n);
    expect(toHundredths('7.5')).toBe(750n);
    expect(toHundredths('-3.10')).toBe(-310n);
    for (const s of ['0.00', '0.01', '10.10', '999999.99', '-0.50'])
      expect(formatHundredths(toHundredths(s))).toBe(s);
  });

  it('stays exact where floats are not', () => {
    expect(0.1 + 0.2).not.toBe(0.3);
    expect(sumDecimals(['0.10', '0.20'])).toBe('0.30');
    expect(sumDecimals(Array.from({ length: 10 }, () => '0.10'))).toBe('1.00');
    // Beyond 2^53: a float would round these.
    expect(sumDecimals(['90071992547409.93', '0.01'])).toBe('90071992547409.94');
    expect(formatHundredths(toHundredths('123456789012345678901234.56'))).toBe('123456789012345678901234.56');
    expect(sumDecimals([])).toBe('0.00');
  });

  it('compares exactly, usable as a sort comparator', () => {
    expect(compareDecimals('10.00', '9.99')).toBe(1);
    expect(compareDecimals('1.5', '1.50')).toBe(0);
    expect(compareDecimals('0.09', '0.10')).toBe(-1);
    expect(['100.00', '20.50', '3.00'].sort(compareDecimals)).toEqual(['3.00', '20.50', '100.00']);
  });

  it.each([
    '',
    '1.234',
    '1,50',
    '1e3',
    ' 1.00',
    '1.00 ',
    '+1.00',
    '.50',
    'NaN',
    'Infinity',
    '0x10',
    '1.',
    '١.٠٠',
    '9'.repeat(41),
  ])('refuses %j', (bad) => {
    expect(() => toHundredths(bad)).toThrow(RangeError);
  });

  it('refuses non-strings', () => {
    expect(() => toHundredths(1.5 as unknown as string)).toThrow(RangeError);
  });

  it('passes null through and converts every decimal field of an offer', () => {
    expect(toHundredthsOrNull(null)).toBeNull();
    expect(
      offerDecimals({
        max_bonus_amount: '500.00',
        max_payout: null,
        minimum_odds: '1.85',
        free_bet_value: '25.00',
        tournament_ticket_value: null,
        rakeback_percentage: '27.50',
      }),
    ).toEqual({
      max_bonus_amount: 50000n,
      max_payout: null,
      minimum_odds: 185n,
      free_bet_value: 2500n,
      tournament_ticket_value: null,
      rakeback_percentage: 2750n,
    });
  });
});
