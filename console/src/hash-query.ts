import { useCallback, useEffect, useState } from 'react';

/** The query of the current hash route: `#/audit?area=toplists` → `area=toplists`. */
export function hashQuery(): URLSearchParams {
  const hash = window.location.hash;
  const at = hash.indexOf('?');
  return new URLSearchParams(at < 0 ? '' : hash.slice(at + 1));
}

const read = <K extends string>(keys: readonly K[]) => {
  const q = hashQuery();
  return Object.fromEntries(keys.map((k) => [k, q.get(k) ?? ''])) as Record<K, string>;
};

/**
 * A screen's filters kept in its hash route (`#/audit?area=toplists&from=2026-12-01`), so a link
 * opens the same view: read when the screen opens and when the hash changes (a link followed),
 * written back on each change. Written with `replaceState`: a change of filter is no step of
 * its own for the back button, which leaves the screen as before.
 */
export function useHashFilters<K extends string>(
  route: string,
  keys: readonly K[],
): [Record<K, string>, (next: Partial<Record<K, string>>) => void] {
  const [filters, setFilters] = useState(() => read(keys));
  useEffect(() => {
    const on = () => setFilters(read(keys));
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, [keys]);
  const update = useCallback(
    (next: Partial<Record<K, string>>) => {
      const merged = { ...filters, ...next };
      const q = new URLSearchParams();
      for (const k of keys) if (merged[k]) q.set(k, merged[k]);
      // Spaces as %20, not +: a sign-in's return path (single sign-on) takes no +.
      const qs = q.toString().replaceAll('+', '%20');
      window.history.replaceState(null, '', `${route}${qs ? `?${qs}` : ''}`);
      setFilters(merged);
    },
    [filters, keys, route],
  );
  return [filters, update];
}
