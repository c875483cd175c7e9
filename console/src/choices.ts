import { api, type Page, type Program, type Site } from './api.ts';
import type { FieldSpec } from './form.tsx';
import { choicesOf, useLoad } from './ui.tsx';

/** The sites (the first hundred), for the screens that filter by site or name one by its domain. */
export function useSites() {
  const sites = useLoad(() => api<Page<Site>>('GET', '/sites?per_page=100'), 'sites');
  /** A site's domain, or "site <id>" until the sites are loaded (or when it is not among them). */
  const domainOf = (id: number) => sites.data?.data.find((s) => s.id === id)?.domain ?? `site ${id}`;
  return { ...sites, domainOf };
}

/** The programmes (the first hundred), for the screens that filter by programme. */
export const usePrograms = () =>
  useLoad(() => api<Page<Program>>('GET', '/tracking/programs?per_page=100'), 'programs');

/** The "All sites" select of a filter row, over {@link useSites}. */
export const siteFilter = (id: string, sites: ReturnType<typeof useSites>): FieldSpec<'site'> => ({
  key: 'site',
  id,
  label: 'Site',
  all: 'All sites',
  options: choicesOf(sites, (s) => s.domain),
});

/** The "All programmes" select of a filter row, over {@link usePrograms}, under `key`. */
export const programFilter = <K extends string>(
  key: K,
  id: string,
  programs: ReturnType<typeof usePrograms>,
): FieldSpec<K> => ({
  key,
  id,
  label: 'Programme',
  all: 'All programmes',
  options: choicesOf(programs, (p) => p.name),
});
