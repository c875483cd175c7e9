import type { Queryable } from './index.ts';

const cache = new WeakMap<Queryable, Promise<ReadonlySet<string>>>();

/**
 * The time zone names this database server knows (`pg_timezone_names`), read once per handle.
 * Zone data differs between servers and from Node's ICU (`US/Pacific-New` is known to one and not
 * the other), so a zone is accepted only when both read it.
 */
export function databaseTimezones(db: Queryable): Promise<ReadonlySet<string>> {
  let known = cache.get(db);
  if (!known) {
    known = db
      .query<{ name: string }>('SELECT name FROM pg_timezone_names')
      .then((rows) => new Set(rows.map((r) => r.name)));
    // A failed read (database down) is not remembered: the next call asks again.
    known.catch(() => cache.delete(db));
    cache.set(db, known);
  }
  return known;
}
