import { describe, expect, it } from 'vitest';
import { findUnstorable, MAX_DEPTH, UNSTORABLE_TEXT } from './text.ts';

describe('findUnstorable', () => {
  it('passes storable values of every shape', () => {
    expect(findUnstorable({ a: ['x', 1, null, { b: 'é🙂' }], d: new Date(0), buf: Buffer.from([0]) })).toBe(
      undefined,
    );
  });

  it('names the path of a NUL or an unpaired surrogate in a value', () => {
    expect(findUnstorable({ items: [{ name: 'ok' }, { name: 'a\u0000b' }] })).toEqual({
      path: ['items', '1', 'name'],
      problem: UNSTORABLE_TEXT,
    });
    expect(findUnstorable(['\ud800'])).toEqual({ path: ['0'], problem: UNSTORABLE_TEXT });
  });

  it('names a bad key with its characters made printable', () => {
    expect(findUnstorable({ outer: { 'k\u0000': 1 } })).toEqual({
      path: ['outer', 'k\uFFFD'],
      problem: UNSTORABLE_TEXT,
    });
  });

  it('refuses nesting deeper than MAX_DEPTH instead of walking it', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i <= MAX_DEPTH; i++) deep = [deep];
    expect(findUnstorable(deep)?.problem).toMatch(/nested more than/);
    let shallow: unknown = 'leaf';
    for (let i = 0; i < MAX_DEPTH; i++) shallow = [shallow];
    expect(findUnstorable(shallow)).toBe(undefined);
  });
});
