import { isDbUnavailable } from '../lib/db-errors.ts';
import { type Db, openDb, type Queryable } from './index.ts';

/** How long a replica that failed to answer is left alone before it is tried again. */
const RETRY_AFTER_MS = 10_000;

/** Where report queries go: a replica when one is configured and answering, else the primary. */
export interface ReadDb extends Queryable {
  /** Whether the last replica attempt failed (queries are on the primary meanwhile). */
  readonly replicaDown: boolean;
  /** Reports the replica's slow statements (the primary's own are watched on the primary). */
  watchSlow: Db['watchSlow'];
  close(): Promise<void>;
}

/**
 * The database report queries read from. With `url` unset it is the primary itself. Otherwise a
 * pool on the replica; a query the replica cannot answer because it is unreachable runs on the
 * primary instead, and the replica is retried after a pause. Other errors (bad SQL) are errors.
 */
export async function openReadDb(
  primary: Db,
  url: string | undefined,
  opts: { schema?: string | undefined; poolSize?: number; now?: () => number } = {},
): Promise<ReadDb> {
  if (!url)
    return {
      replicaDown: false,
      query: (sql, params) => primary.query(sql, params),
      exec: (sql) => primary.exec(sql),
      watchSlow: () => {},
      close: async () => {},
    };
  const replica = await openDb({ url, schema: opts.schema, poolSize: opts.poolSize ?? 4, replica: true });
  const now = opts.now ?? Date.now;
  let downUntil = 0;
  async function run<T>(on: (q: Queryable) => Promise<T>): Promise<T> {
    if (now() < downUntil) return on(primary);
    try {
      const out = await on(replica);
      downUntil = 0;
      return out;
    } catch (err) {
      if (!isDbUnavailable(err)) throw err;
      downUntil = now() + RETRY_AFTER_MS;
      return on(primary);
    }
  }
  return {
    get replicaDown() {
      return downUntil !== 0;
    },
    query: (sql, params) => run((q) => q.query(sql, params)),
    exec: (sql) => run((q) => q.exec(sql)),
    watchSlow: (ms, report) => replica.watchSlow(ms, report),
    close: () => replica.close(),
  };
}
