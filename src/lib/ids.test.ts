import { describe, expect, it } from 'vitest';
import { UlidSource, ulid } from './ids.ts';

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const timeOf = (id: string) => [...id.slice(0, 10)].reduce((t, c) => t * 32 + ALPHABET.indexOf(c), 0);

describe('ulid', () => {
  it('is 26 Crockford base32 characters whose first 10 encode the current millisecond', () => {
    const before = Date.now();
    const id = ulid();
    const after = Date.now();
    expect(id).toMatch(ULID);
    expect(timeOf(id)).toBeGreaterThanOrEqual(before);
    expect(timeOf(id)).toBeLessThanOrEqual(after);
  });

  it('encodes a known time exactly (the ULID spec example 01ARYZ6S41 = 1469918176385)', () => {
    const id = new UlidSource(() => 1469918176385).next();
    expect(id.slice(0, 10)).toBe('01ARYZ6S41');
  });

  it('sorts strictly in minting order within one millisecond and across milliseconds', () => {
    let now = 1_700_000_000_000;
    const src = new UlidSource(() => now);
    const ids: string[] = [];
    for (let i = 0; i < 50_000; i++) {
      if (i % 10_000 === 0) now += 1;
      ids.push(src.next());
    }
    const outOfOrder = ids.findIndex((id, i) => i > 0 && !(id > ids[i - 1]!));
    expect(outOfOrder).toBe(-1);
    expect(timeOf(ids.at(-1)!)).toBe(now);
  });

  it('stays monotonic when the clock goes backwards', () => {
    let now = 1_700_000_000_500;
    const src = new UlidSource(() => now);
    const a = src.next();
    now -= 400;
    const b = src.next();
    expect(b > a).toBe(true);
    expect(timeOf(b)).toBe(1_700_000_000_500);
  });

  it('draws fresh random bits for each new millisecond', () => {
    let now = 1_700_000_000_000;
    const src = new UlidSource(() => now);
    const randoms = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      now += 1;
      randoms.add(src.next().slice(10));
    }
    expect(randoms.size).toBe(1000);
  });

  it('never repeats across 200 000 ids of the shared source', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200_000; i++) seen.add(ulid());
    expect(seen.size).toBe(200_000);
  });

  it('carries into the high half, then into the next millisecond, instead of repeating', () => {
    const src = new UlidSource(
      () => 1_700_000_000_000,
      (pool) => pool.fill(0xff),
    );
    const first = src.next();
    expect(first.slice(10)).toBe('ZZZZZZZZZZZZZZZZ');
    const second = src.next();
    expect(second > first).toBe(true);
    expect(timeOf(second)).toBe(1_700_000_000_001);

    const half = new UlidSource(
      () => 1_700_000_000_000,
      (pool) => {
        pool.fill(0);
        for (let i = 5; i < pool.length; i += 10) pool.fill(0xff, i, i + 5);
      },
    );
    const low = half.next();
    expect(low.slice(10)).toBe('00000000ZZZZZZZZ');
    expect(half.next().slice(10)).toBe('0000000100000000');
  });
});
