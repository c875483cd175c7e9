import { Fragment, type ReactNode, useEffect, useState } from 'react';
import { api, type Page } from './api.ts';
import { Pager } from './table.tsx';
import { capitalized, InputField, PickList, Status, useLoad } from './ui.tsx';

/** `value`, once it has stopped changing for `ms` (so typing asks the server once, not per key). */
export function useDebounced<T>(value: T, ms = 250): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/** The longest `q` the catalog lists take. */
export const SEARCH_MAX = 100;

/**
 * One page of a server list: the API pages it and, with `search`, filters it by name or slug
 * (`q`). Changing the filters or the search returns to the first page.
 */
export function usePagedList<T>(
  path: string,
  {
    params = {},
    perPage = 25,
    search = true,
  }: { params?: Record<string, string>; perPage?: number; search?: boolean } = {},
) {
  const [q, setQ] = useState('');
  const term = useDebounced(q.trim());
  const filters = new URLSearchParams(params);
  if (search && term) filters.set('q', term);
  const key = filters.toString();
  const [at, setAt] = useState({ key, page: 1 });
  const page = at.key === key ? at.page : 1;
  const qs = new URLSearchParams(filters);
  qs.set('page', String(page));
  qs.set('per_page', String(perPage));
  const list = useLoad(() => api<Page<T>>('GET', `${path}?${qs}`), `${path}?${qs}`);
  return { ...list, q, setQ, setPage: (p: number) => setAt({ key, page: p }) };
}

/** The search box of a list (name or slug, searched on the server as you type). */
export function SearchBox({
  id,
  label,
  value,
  onChange,
  placeholder = 'name or slug',
}: {
  id: string;
  label: string;
  value: string;
  onChange: (v: string) => void;
  placeholder?: string;
}) {
  return (
    <InputField
      id={id}
      label={label}
      type="search"
      value={value}
      maxLength={SEARCH_MAX}
      placeholder={placeholder}
      autoComplete="off"
      onChange={onChange}
    />
  );
}

/**
 * A type-ahead picker over a server list: what is typed is searched on the server (debounced)
 * and the matches are offered as buttons; `current` is the picked item's text.
 */
export function SearchPicker<T>({
  id,
  label,
  current,
  search,
  optionText,
  optionKey,
  onPick,
}: {
  id: string;
  label: string;
  current: ReactNode;
  search: (q: string) => Promise<T[]>;
  optionText: (item: T) => string;
  optionKey: (item: T) => number;
  onPick: (item: T) => void;
}) {
  const [text, setText] = useState('');
  const term = useDebounced(text.trim());
  const found = useLoad(() => (term ? search(term) : Promise.resolve([])), term);
  const open = term !== '' && text.trim() !== '';
  return (
    <div className="picker">
      <span className="picked">{current}</span>
      <label className="sr-only" htmlFor={id}>
        {label}
      </label>
      <input
        id={id}
        type="search"
        value={text}
        maxLength={SEARCH_MAX}
        placeholder="search…"
        autoComplete="off"
        role="combobox"
        aria-autocomplete="list"
        aria-controls={`${id}-matches`}
        aria-expanded={open}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape') setText('');
        }}
      />
      {open && (
        <ul id={`${id}-matches`} className="matches" aria-label={`Matches for ${label}`}>
          {found.loading && <li className="muted small">Searching…</li>}
          {!found.loading && found.data?.length === 0 && <li className="muted small">No match.</li>}
          {found.data?.map((item) => (
            <li key={optionKey(item)}>
              <button
                type="button"
                onClick={() => {
                  setText('');
                  onPick(item);
                }}
              >
                {optionText(item)}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Names of records fetched one by one by id (lists can be thousands long, a page holds only some). */
export function useNames(path: string, ids: readonly number[], name: (r: Record<string, unknown>) => string) {
  const [names, setNames] = useState<Record<number, string>>({});
  const missing = [...new Set(ids)].filter((id) => !(id in names)).slice(0, 30);
  const key = missing.join(',');
  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` names the ids to fetch; `path` and `name` are fixed per use.
  useEffect(() => {
    for (const id of key ? key.split(',').map(Number) : []) {
      api<{ data: Record<string, unknown> }>('GET', `${path}/${id}`).then(
        (r) => setNames((n) => ({ ...n, [id]: name(r.data) })),
        () => setNames((n) => ({ ...n, [id]: `${path.slice(1, -1)} ${id}` })),
      );
    }
  }, [key]);
  return names;
}

/** A server list with one record picked (or "new"): the first record until another is picked; 50 a page. */
export function usePicked<T>(path: string, opts: Parameters<typeof usePagedList>[1] = {}) {
  const list = usePagedList<T>(path, { perPage: 50, ...opts });
  // The picked record is kept whole: it need not be on the page the list shows.
  const [picked, setPicked] = useState<T | 'new' | null>(null);
  const current = picked === 'new' ? undefined : (picked ?? list.data?.data[0]);
  /** After a save: show the saved record and load the list again. */
  const saved = (record: T) => {
    setPicked(record);
    list.reload();
  };
  return { list, picked, setPicked, current, creating: picked === 'new', saved };
}

/** What a {@link MasterList} shows: its heading, search, items and "New …" button. */
interface MasterListProps<T> {
  /** The heading; the unit's plural ("Brands") unless it is named otherwise. */
  title?: string;
  listLabel?: string;
  pick: ReturnType<typeof usePicked<T>>;
  search?: { id: string; label: string; placeholder?: string };
  empty: string;
  item: (record: T) => ReactNode;
  /** The record in words ("brand"): names the heading, the pages and the "New …" button. */
  unit: string;
  newButton?: boolean;
  className?: string;
  children?: ReactNode;
}

/** A list item as the record's name and, muted after it, `note` (its slug, its domain). */
export const withNote =
  <T extends { name: string }>(note: (record: T) => ReactNode) =>
  (record: T) => (
    <>
      {record.name} <span className="muted">{note(record)}</span>
    </>
  );

/**
 * The left column of a list screen over a {@link usePicked} list: heading, search, the paged list
 * of buttons (the picked one pressed) and, with `newButton`, a "New …" button that picks "new".
 */
export function MasterList<T extends { id: number | string }>({
  unit,
  title = `${capitalized(unit)}s`,
  pick,
  search,
  empty,
  item,
  newButton = false,
  className,
  listLabel = title,
  children,
}: MasterListProps<T>) {
  const { list, current, setPicked, creating } = pick;
  return (
    <div>
      <h1>{title}</h1>
      {search && <SearchBox {...search} value={list.q} onChange={list.setQ} />}
      <Status load={list} empty={list.data?.data.length === 0 && empty}>
        <PickList
          className={className}
          label={listLabel}
          items={list.data?.data}
          itemKey={(r) => r.id}
          current={current?.id}
          onPick={setPicked}
        >
          {item}
        </PickList>
        <Pager list={list} label={`${capitalized(unit)} pages`} />
      </Status>
      {newButton && (
        <button type="button" className="new" aria-pressed={creating} onClick={() => setPicked('new')}>
          New {unit}
        </button>
      )}
      {children}
    </div>
  );
}

/**
 * A list screen: the {@link MasterList} and, beside it, `detail` of the picked record (of none while
 * a new one is made) under `notice`. The detail is mounted afresh per record, so that its forms
 * start from the record picked; the notice (a secret just issued) stays across records.
 */
export function ListScreen<T extends { id: number | string }>({
  wide = false,
  notice,
  detail,
  ...list
}: MasterListProps<T> & {
  /** A right-hand column as wide as the list, for details with tables. */
  wide?: boolean;
  notice?: ReactNode;
  detail: (record: T | undefined) => ReactNode;
}) {
  const { current, creating } = list.pick;
  return (
    <section className={wide ? 'split wide-right' : 'split'}>
      <MasterList {...list} />
      <div>
        {notice}
        {(creating || current) && <Fragment key={current?.id ?? 'new'}>{detail(current)}</Fragment>}
      </div>
    </section>
  );
}
