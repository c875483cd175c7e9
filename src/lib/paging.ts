/** Page-number pagination shared by every list endpoint. */

export const DEFAULT_PER_PAGE = 15;
export const MAX_PER_PAGE = 100;

export interface PageMeta {
  current_page: number;
  per_page: number;
  total: number;
  last_page: number;
  /** 1-based index of the first row on this page, or null when the page is empty. */
  from: number | null;
  to: number | null;
}

/** A list endpoint's answer: one page of records and its `meta`. */
export interface Page<T> {
  data: T[];
  meta: PageMeta;
}

/** LIMIT/OFFSET for a 1-based page. */
export function pageWindow(page = 1, perPage = DEFAULT_PER_PAGE): { limit: number; offset: number } {
  return { limit: perPage, offset: (page - 1) * perPage };
}

/** `meta` for a page; `last_page` is at least 1 so "walk until last_page" always terminates. */
export function pageMeta(total: number, page: number, perPage: number): PageMeta {
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const from = (page - 1) * perPage + 1;
  const onPage = Math.max(0, Math.min(perPage, total - (from - 1)));
  return {
    current_page: page,
    per_page: perPage,
    total,
    last_page: lastPage,
    from: onPage ? from : null,
    to: onPage ? from + onPage - 1 : null,
  };
}
