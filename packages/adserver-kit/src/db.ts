import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

// The reference server's own store. The package is published on its own, so it carries its own
// small PGlite|PostgreSQL wrapper and migrations instead of importing the Podium app's.

/** Anything that runs SQL: the store itself or an open transaction. */
export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
}

/** The reference server's database handle, the same on PGlite and PostgreSQL. */
export interface Store extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs `fn` in a transaction; rolls back when it throws. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** PostgreSQL URL; when absent PGlite is used. */
  url?: string | undefined;
  /** PGlite data directory; absent means in memory. */
  dataDir?: string | undefined;
  /** PostgreSQL only: schema used as search_path (isolates tests and co-hosted instances). */
  schema?: string | undefined;
}

pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));

/** Opens the store named by the options and applies pending migrations. */
export async function openStore(opts: StoreOptions = {}): Promise<Store> {
  const store = opts.url ? await openPostgres(opts.url, opts.schema) : await openPglite(opts.dataDir);
  await migrate(store);
  return store;
}

async function openPglite(dataDir: string | undefined): Promise<Store> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const lite = new PGlite(dataDir);
  await lite.waitReady;
  const wrap = (q: Pick<PGlite, 'query'>): Queryable => ({
    async query<T>(sql: string, params?: readonly unknown[]) {
      return (await q.query<T>(sql, params as unknown[] | undefined)).rows;
    },
  });
  return {
    kind: 'pglite',
    ...wrap(lite),
    tx: (fn) => lite.transaction((t) => fn(wrap(t))),
    close: () => lite.close(),
  };
}

async function openPostgres(url: string, schema: string | undefined): Promise<Store> {
  const config: pg.PoolConfig = { connectionString: url, max: 8 };
  if (schema) {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid schema name ${schema}`);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`).finally(() => c.end());
    config.options = `-c search_path=${schema}`;
  }
  const pool = new pg.Pool(config);
  pool.on('error', () => {});
  const wrap = (q: pg.Pool | pg.PoolClient): Queryable => ({
    async query<T>(sql: string, params?: readonly unknown[]) {
      return (await q.query(sql, params as unknown[] | undefined)).rows as T[];
    },
  });
  return {
    kind: 'postgres',
    ...wrap(pool),
    async tx(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const out = await fn(wrap(client));
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

const MIGRATIONS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
// Serialises concurrent migrators; distinct from the Podium app's lock constant.
const LOCK = 7_301_978;

/** Applies the package's forward-only migrations (tracked in `adserver_kit_migrations`). */
async function migrate(store: Store): Promise<void> {
  const files = readdirSync(MIGRATIONS)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
  await store.tx(async (q) => {
    await q.query('SELECT pg_advisory_xact_lock($1)', [LOCK]);
    await q.query('CREATE TABLE IF NOT EXISTS adserver_kit_migrations (version text PRIMARY KEY)');
    const done = new Set(
      (await q.query<{ version: string }>('SELECT version FROM adserver_kit_migrations')).map(
        (r) => r.version,
      ),
    );
    for (const f of files) {
      const version = f.replace(/\.sql$/, '');
      if (done.has(version)) continue;
      for (const stmt of readFileSync(path.join(MIGRATIONS, f), 'utf8').split(/;\s*$/m)) {
        if (stmt.trim()) await q.query(stmt);
      }
      await q.query('INSERT INTO adserver_kit_migrations (version) VALUES ($1)', [version]);
    }
  });
}
