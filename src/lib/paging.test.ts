import { describe, expect, it } from 'vitest';
import { pageMeta, pageWindow } from './paging.ts';

describe('paging', () => {
  it('computes last_page for any per_page, never below 1', () => {
    expect(pageMeta(0, 1, 15)).toEqual({
      current_page: 1,
      per_page: 15,
      total: 0,
      last_page: 1,
      from: null,
      to: null,
    });
    expect(pageMeta(131, 1, 100).last_page).toBe(2);
    expect(pageMeta(131, 2, 100)).toMatchObject({ from: 101, to: 131 });
    expect(pageMeta(135, 9, 15)).toMatchObject({ last_page: 9, from: 121, to: 135 });
    expect(pageMeta(5, 3, 5)).toMatchObject({ last_page: 1, from: null, to: null });
  });

  it('turns a page into a window', () => {
    expect(pageWindow(3, 25)).toEqual({ limit: 25, offset: 50 });
    expect(pageWindow()).toEqual({ limit: 15, offset: 0 });
  });
});
