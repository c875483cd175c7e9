import { describe, expect, it } from 'vitest';
import { MemoBudget, SetMemo } from './set-memo.ts';

describe('SetMemo', () => {
  /** A memo whose values count the calls that made them. */
  const counting = (instants: number[], maxEntries?: number) => {
    const memo = new SetMemo(instants, new MemoBudget(1_000), maxEntries);
    let made = 0;
    const at = (nowMs: number, key = 'page') => memo.get(key, nowMs, () => ++made);
    return { memo, at };
  };

  it('keeps a value while no publish window opens or closes', () => {
    const { at } = counting([1_000, 2_000]);
    expect(at(1_000)).toBe(1);
    expect(at(1_500)).toBe(1);
    expect(at(1_999)).toBe(1);
    // live_until is exclusive and live_from inclusive: both instants start a new window.
    expect(at(2_000)).toBe(2);
    expect(at(9_000)).toBe(2);
  });

  it('makes the value again when the clock goes back past a boundary', () => {
    const { at } = counting([1_000]);
    expect(at(1_500)).toBe(1);
    expect(at(999)).toBe(2);
    expect(at(0)).toBe(2);
    expect(at(1_000)).toBe(3);
  });

  it('holds one window for ever when no edition has one', () => {
    const { at } = counting([]);
    expect(at(-5)).toBe(1);
    expect(at(Number.MAX_SAFE_INTEGER)).toBe(1);
  });

  it('keeps values by key, and drops them all at its entry bound', () => {
    const { at } = counting([], 2);
    expect([at(0, 'a'), at(0, 'b'), at(0, 'a')]).toEqual([1, 2, 1]);
    expect(at(0, 'c')).toBe(3);
    expect(at(0, 'a')).toBe(4);
  });

  it('shares one byte budget between memos: a value that would pass it empties them all', () => {
    const budget = new MemoBudget(100);
    const one = new SetMemo([], budget);
    const two = new SetMemo([], budget);
    let made = 0;
    const sized = (memo: SetMemo, key: string, bytes: number) =>
      memo.get(
        key,
        0,
        () => ({ n: ++made }),
        () => bytes,
      ).n;
    // Larger than the whole budget: answered, never kept.
    expect(sized(one, 'huge', 101)).toBe(1);
    expect(sized(one, 'huge', 101)).toBe(2);
    expect(sized(one, 'a', 40)).toBe(3);
    expect(sized(two, 'b', 40)).toBe(4);
    expect([sized(one, 'a', 40), sized(two, 'b', 40)]).toEqual([3, 4]);
    expect(budget.used).toBe(80);
    expect(sized(two, 'c', 40)).toBe(5);
    expect(budget.used).toBe(40);
    expect([sized(one, 'a', 40), sized(two, 'b', 40)]).toEqual([6, 7]);
  });

  it('counts bytes a kept value takes on later, and gives them back when emptied', () => {
    const budget = new MemoBudget(100);
    const memo = new SetMemo([1_000], budget);
    memo.get(
      'page',
      0,
      () => 'page',
      () => 10,
    );
    memo.charge(30);
    expect(budget.used).toBe(40);
    // A new window empties the memo and its bytes.
    memo.get(
      'page',
      1_000,
      () => 'page',
      () => 10,
    );
    expect(budget.used).toBe(10);
    memo.clear();
    expect(budget.used).toBe(0);
    expect(budget.holders.size).toBe(0);
  });
});
