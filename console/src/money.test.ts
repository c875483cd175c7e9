import { describe, expect, it } from 'vitest';
import { changeOf, formatMoney, knownMoney, moneyText } from './money.ts';

describe('money as the console shows it', () => {
  it('formats each currency in its own decimals, exactly, and an unknown code as text', () => {
    expect(formatMoney('1234.5', 'EUR', 'en-US')).toBe('€1,234.50');
    expect(formatMoney('1234', 'JPY', 'en-US')).toBe('¥1,234');
    // Beyond a double's 15–17 digits the string stays exact.
    expect(formatMoney('12345678901234567.89', 'USD', 'en-US')).toBe('$12,345,678,901,234,567.89');
    expect(formatMoney('5', 'not a code', 'en-US')).toBe('5 not a code');
  });

  it('joins currencies in code order and keeps only the amounts that exist', () => {
    const epc = { USD: '0.5', EUR: '1.25', SEK: null };
    expect(moneyText(epc, 'en-US')).toBe('€1.25 · $0.50');
    expect(moneyText({ SEK: null })).toBe('—');
    expect(moneyText(undefined)).toBe('—');
    expect(knownMoney(epc)).toEqual({ USD: '0.5', EUR: '1.25' });
    expect(knownMoney({ SEK: null })).toEqual({});
  });

  it('states the change against the previous period', () => {
    expect(changeOf(0, 0)).toBeNull();
    expect(changeOf(3, 0)).toEqual({ dir: 'new', text: 'new' });
    expect(changeOf(105, 100)).toEqual({ dir: 'up', text: '▲ 5.0 %' });
    expect(changeOf(50, 100)).toEqual({ dir: 'down', text: '▼ 50 %' });
    expect(changeOf(100000, 100001)).toEqual({ dir: 'same', text: '±0 %' });
  });
});
