import { describe, expect, it } from 'vitest';
import { partitionPoint } from './partition-point.ts';

describe('partitionPoint', () => {
  it('finds the first index where the predicate turns false, at every split of every length up to 9', () => {
    for (let length = 0; length <= 9; length++)
      for (let split = 0; split <= length; split++) {
        const calls: number[] = [];
        const found = partitionPoint(length, (i) => {
          calls.push(i);
          return i < split;
        });
        expect(found).toBe(split);
        expect(calls.every((i) => i >= 0 && i < length)).toBe(true);
        expect(calls.length).toBeLessThanOrEqual(Math.ceil(Math.log2(length + 1)));
      }
  });

  it('finds where a value would go in a sorted array with repeats (first at or after, first after)', () => {
    const sorted = [1, 3, 3, 3, 7];
    expect(partitionPoint(sorted.length, (i) => sorted[i]! < 3)).toBe(1);
    expect(partitionPoint(sorted.length, (i) => sorted[i]! <= 3)).toBe(4);
    expect(partitionPoint(sorted.length, (i) => sorted[i]! < 8)).toBe(5);
  });
});
