import { describe, expect, it } from 'vitest';
import { fieldWords, readableError } from './readable-error.ts';

describe('API errors in words', () => {
  it('names the field in words, and leaves it out beside the field', () => {
    expect(readableError('liveUntil: must be later than liveFrom', 'liveUntil')).toEqual({
      line: 'Live until: must be later than live from',
      beside: 'must be later than live from',
    });
    expect(readableError('logo.backgroundColor: must be a #rrggbb colour', 'logo.backgroundColor')).toEqual({
      line: 'Logo background color: must be a #rrggbb colour',
      beside: 'must be a #rrggbb colour',
    });
  });

  it('keeps a message without its field as it is, but for camelCase names and schema wording', () => {
    expect(readableError('Toplist not found')).toEqual({
      line: 'Toplist not found',
      beside: 'Toplist not found',
    });
    expect(readableError('bonusExpiryDate must match format "date"', 'bonusExpiryDate')).toEqual({
      line: 'Bonus expiry date: must be a date (YYYY-MM-DD)',
      beside: 'must be a date (YYYY-MM-DD)',
    });
    expect(
      readableError('logo.backgroundColor must match pattern "^#[0-9A-Fa-f]{6}$"', 'logo.backgroundColor')
        .beside,
    ).toBe('is not in the expected form');
    expect(readableError('the sizes overlap', 'sizes').beside).toBe('the sizes overlap');
    expect(fieldWords('items.2.brandId')).toBe('items 2 brand id');
    expect(fieldWords('base_url')).toBe('base url');
  });
});
