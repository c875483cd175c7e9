import type { Queryable } from './index.ts';

/**
 * The one column of the first row a query answers, or undefined when it answers no row; `name`
 * prepares the statement once (see `Queryable.query`).
 */
export async function firstValue<T>(
  db: Queryable,
  sql: string,
  params: readonly unknown[] = [],
  name?: string,
): Promise<T | undefined> {
  const [r] = await db.query<Record<string, T>>(sql, params, name);
  return r === undefined ? undefined : Object.values(r)[0];
}

/** The one column of the row a query always answers: an INSERT … RETURNING id, a count. */
export async function onlyValue<T>(db: Queryable, sql: string, params: readonly unknown[] = []): Promise<T> {
  return (await firstValue<T>(db, sql, params)) as T;
}
