import { Fragment, type ReactNode } from 'react';
import type { PageMeta } from './api.ts';
import { Status } from './ui.tsx';

/** One column of a {@link Table}: its header, how a row fills its cell, and whether it holds numbers. */
export interface Column<T> {
  head: ReactNode;
  cell: (row: T) => ReactNode;
  /** A muted second line under the cell (a line's reference, a slot's format), shown when there is one. */
  sub?: (row: T) => ReactNode;
  num?: boolean;
  className?: string;
  /** The cell is the row's header (`<th scope="row">`). */
  rowHeader?: boolean;
}

/** The header of an actions column: read by screen readers, not shown. */
export const ACTIONS = <span className="sr-only">Actions</span>;

/** A row's React key. */
type RowKey<T> = (row: T) => string | number;
/** The key of rows that have an `id`: the overloads below let only such rows leave `rowKey` out. */
const byId = (row: unknown) => (row as { id: string | number }).id;

/** What a {@link Table} shows: its rows, its columns, and how the table and its rows are named. */
export interface TableProps<T> {
  rows: readonly T[];
  columns: readonly (Column<T> | false)[];
  /** How rows are keyed; rows with an `id` are keyed by it unless this says otherwise. */
  rowKey?: RowKey<T>;
  caption?: string;
  className?: string;
  testId?: string;
  label?: string;
  rowProps?: (row: T) => Record<string, unknown>;
  /** A full-width row under a row (details opened from it), or null. */
  expanded?: (row: T) => ReactNode;
}

/** The console's one table: a scrolling wrapper, a header row from the columns, one row per item. */
export function Table<T extends { id: string | number }>(props: TableProps<T>): ReactNode;
export function Table<T>(props: TableProps<T> & { rowKey: RowKey<T> }): ReactNode;
export function Table<T>({
  rows,
  columns,
  rowKey = byId,
  caption,
  className,
  testId,
  rowProps,
  label,
  expanded,
}: TableProps<T>) {
  const cols = columns.filter((c): c is Column<T> => c !== false);
  const cls = (c: Column<T>) => [c.num && 'num', c.className].filter(Boolean).join(' ') || undefined;
  const content = (c: Column<T>, row: T) => {
    const sub = c.sub?.(row);
    return sub ? (
      <>
        {c.cell(row)}
        <div className="muted small">{sub}</div>
      </>
    ) : (
      c.cell(row)
    );
  };
  return (
    <div className="table-wrap">
      <table className={className} data-testid={testId} aria-label={label}>
        {caption && <caption className="sr-only">{caption}</caption>}
        <thead>
          <tr>
            {cols.map((c, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: columns are fixed per render.
              <th key={i} scope="col" className={cls(c)}>
                {c.head}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <Fragment key={rowKey(row)}>
              <tr {...rowProps?.(row)}>
                {cols.map((c, i) =>
                  c.rowHeader ? (
                    // biome-ignore lint/suspicious/noArrayIndexKey: columns are fixed per render.
                    <th key={i} scope="row" className={cls(c)}>
                      {content(c, row)}
                    </th>
                  ) : (
                    // biome-ignore lint/suspicious/noArrayIndexKey: columns are fixed per render.
                    <td key={i} className={cls(c)}>
                      {content(c, row)}
                    </td>
                  ),
                )}
              </tr>
              {expanded?.(row) && (
                <tr>
                  <td colSpan={cols.length}>{expanded(row)}</td>
                </tr>
              )}
            </Fragment>
          ))}
        </tbody>
      </table>
    </div>
  );
}

type LoadedTableProps<T> = Omit<TableProps<T>, 'rows'> & {
  load: { loading: boolean; error?: string; data?: { data: readonly T[] } };
  empty: string;
  children?: ReactNode;
};

/**
 * A loaded list answer (a {@link useLoad} result of `{ data: rows }`) as a table: its loading,
 * error or `empty` line until there are rows, then the table and what follows it (a pager).
 */
export function LoadedTable<T extends { id: string | number }>(props: LoadedTableProps<T>): ReactNode;
export function LoadedTable<T>(props: LoadedTableProps<T> & { rowKey: RowKey<T> }): ReactNode;
export function LoadedTable<T>({ load, empty, children, rowKey = byId, ...table }: LoadedTableProps<T>) {
  const rows = load.data?.data;
  return (
    <Status load={load} empty={rows?.length === 0 && empty}>
      <Table rows={rows ?? []} rowKey={rowKey} {...table} />
      {children}
    </Status>
  );
}

/** "Page 2 of 7" with previous / next buttons, for a {@link usePagedList} list (from the API's paging meta). */
export function Pager({
  list,
  label = 'Pages',
}: {
  list: { data?: { meta: PageMeta }; setPage: (page: number) => void };
  label?: string;
}) {
  const meta = list.data?.meta;
  const onPage = list.setPage;
  if (!meta || meta.last_page <= 1) return null;
  return (
    <nav className="row pager" aria-label={label}>
      <button type="button" disabled={meta.current_page <= 1} onClick={() => onPage(meta.current_page - 1)}>
        Previous page
      </button>
      <span className="muted small">
        Page {meta.current_page} of {meta.last_page} · {meta.total} in all
      </span>
      <button
        type="button"
        disabled={meta.current_page >= meta.last_page}
        onClick={() => onPage(meta.current_page + 1)}
      >
        Next page
      </button>
    </nav>
  );
}
