import { describe, expect, it } from 'vitest';
import { slugOf } from './slug.ts';

describe('a slug suggested from a name', () => {
  it('keeps lower-case letters and digits, words joined by single dashes', () => {
    expect(slugOf('Best casinos SE')).toBe('best-casinos-se');
    expect(slugOf('  Top 10 — Bonus!! (draft) ')).toBe('top-10-bonus-draft');
    expect(slugOf('Bästa casinon i Göteborg')).toBe('basta-casinon-i-goteborg');
    expect(slugOf('***')).toBe('');
  });

  it('is at most 120 characters and never ends with a dash', () => {
    const s = slugOf(`${'a'.repeat(119)} b`);
    expect(s.length).toBeLessThanOrEqual(120);
    expect(s.endsWith('-')).toBe(false);
    expect(s).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);
  });
});
