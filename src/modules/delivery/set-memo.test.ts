import { describe, expect, it } from 'vitest';
import { SetMemo } from './set-memo.ts';

describe('SetMemo', () => {
  /** A memo whose values count the calls that made them. */
  const counting = (instants: number[], limits?: { entries: number; bytes: number }) => {
    const memo = new SetMemo(instants, limits);
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
    const { at } = counting([], { entries: 2, bytes: 1_000 });
    expect([at(0, 'a'), at(0, 'b'), at(0, 'a')]).toEqual([1, 2, 1]);
    expect(at(0, 'c')).toBe(3);
    expect(at(0, 'a')).toBe(4);
  });

  it('keeps no value larger than its byte bound, and drops all when the next would pass it', () => {
    const memo = new SetMemo([], { entries: 10, bytes: 100 });
    let made = 0;
    const sized = (key: string, bytes: number) =>
      memo.get(
        key,
        0,
        () => ({ n: ++made }),
        () => bytes,
      ).n;
    expect(sized('huge', 101)).toBe(1);
    expect(sized('huge', 101)).toBe(2);
    expect(sized('a', 60)).toBe(3);
    expect(sized('a', 60)).toBe(3);
    expect(sized('b', 60)).toBe(4);
    expect(sized('b', 60)).toBe(4);
    expect(sized('a', 60)).toBe(5);
  });
});
