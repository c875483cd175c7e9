/** A page of rows and how many rows the same filter matches in all. */
export interface Paged<T> {
  rows: T[];
  total: number;
}

/** Which rows of a list to read: LIMIT and OFFSET. */
export interface PageWindow {
  limit: number;
  offset: number;
}

/**
 * One page of a list query that selects `count(*) OVER ()::int AS total` beside its columns:
 * `read` runs it for a window. The rows come back without `total`. A page past the end holds no
 * row to carry the total, so the first row is read for it.
 */
export async function pagedRows<R>(
  window: PageWindow,
  read: (w: PageWindow) => Promise<(R & { total: number })[]>,
): Promise<Paged<R>> {
  const rows = await read(window);
  const total =
    rows[0]?.total ?? (window.offset > 0 ? ((await read({ limit: 1, offset: 0 }))[0]?.total ?? 0) : 0);
  return { rows: rows.map(({ total: _, ...r }) => r as R), total };
}
