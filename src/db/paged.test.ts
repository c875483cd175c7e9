import { describe, expect, it } from 'vitest';
import { type PageWindow, pagedRows } from './paged.ts';

/** A list of `n` rows as a query with `count(*) OVER ()` answers it, recording each window read. */
function listOf(n: number) {
  const reads: PageWindow[] = [];
  const read = async (w: PageWindow) => {
    reads.push(w);
    return Array.from({ length: n }, (_, id) => ({ id, total: n })).slice(w.offset, w.offset + w.limit);
  };
  return { reads, read };
}

describe('pagedRows', () => {
  it('answers the rows without total, and the total their first row carries', async () => {
    const { reads, read } = listOf(5);
    expect(await pagedRows({ limit: 2, offset: 2 }, read)).toEqual({
      rows: [{ id: 2 }, { id: 3 }],
      total: 5,
    });
    expect(reads).toEqual([{ limit: 2, offset: 2 }]);
  });

  it('reads the first row for the total of a page past the end', async () => {
    const { reads, read } = listOf(5);
    expect(await pagedRows({ limit: 2, offset: 10 }, read)).toEqual({ rows: [], total: 5 });
    expect(reads).toEqual([
      { limit: 2, offset: 10 },
      { limit: 1, offset: 0 },
    ]);
  });

  it('answers an empty first page with total 0 and no second read', async () => {
    const { reads, read } = listOf(0);
    expect(await pagedRows({ limit: 2, offset: 0 }, read)).toEqual({ rows: [], total: 0 });
    expect(reads).toHaveLength(1);
  });
});
