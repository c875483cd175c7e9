/** A snake_case name in camelCase (`program_id` → `programId`), at the type level. */
export type CamelCase<S extends string> = S extends `${infer H}_${infer T}`
  ? `${H}${Capitalize<CamelCase<T>>}`
  : S;

/** An object type with its keys in camelCase. */
export type CamelKeys<T> = { [K in keyof T as K extends string ? CamelCase<K> : K]: T[K] };

/**
 * The same entries under camelCase keys: a snake_case query string as the services name its
 * fields. Keys that are absent stay absent.
 */
export function camelKeys<T extends object>(o: T): CamelKeys<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o))
    out[k.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())] = v;
  return out as CamelKeys<T>;
}

/** A camelCase name in snake_case (`programId` → `program_id`). */
export function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/**
 * The fields a field → column map names, read from a row: `{ affiliateId: 'affiliate_id' }` reads
 * `row.affiliate_id` into `affiliateId`, in the map's order.
 */
export function fieldsOf<R, M extends Record<string, keyof R>>(
  row: R,
  columns: M,
): { [F in keyof M]: R[M[F]] } {
  const out: Partial<Record<keyof M, unknown>> = {};
  for (const f in columns) out[f] = row[columns[f] as keyof R];
  return out as { [F in keyof M]: R[M[F]] };
}
