import { describe, expect, it } from 'vitest';
import { signTestP } from '../bench/lib/sign-test.ts';

describe('sign test of paired benchmark runs (bench:ab)', () => {
  it('gives the two-sided binomial tail', () => {
    // 23 of 30: (C(30,0)+…+C(30,7)) · 2 / 2^30 = 2 · 2 804 012 / 1 073 741 824.
    expect(signTestP(23, 30)).toBeCloseTo((2 * 2_804_012) / 2 ** 30, 12);
    expect(signTestP(7, 30)).toBe(signTestP(23, 30));
    expect(signTestP(0, 20)).toBeCloseTo(2 / 2 ** 20, 15);
    expect(signTestP(1, 3)).toBe(1);
    expect(signTestP(5, 10)).toBe(1);
  });

  it('refuses counts that are not a sample', () => {
    expect(() => signTestP(4, 3)).toThrow(RangeError);
    expect(() => signTestP(-1, 3)).toThrow(RangeError);
    expect(() => signTestP(1.5, 3)).toThrow(RangeError);
    expect(() => signTestP(0, 0)).toThrow(RangeError);
  });
});
