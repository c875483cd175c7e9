import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { AppError } from '../lib/errors.ts';
import { findUnstorable } from '../lib/text.ts';
import { lockDir } from './dir-lock.ts';

/** Anything that runs SQL: the database itself or an open transaction. */
export interface Queryable {
  /** One parameterised statement; returns its rows. */
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** Several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export type Listener = (payload: string) => void;

/** The database handle the app uses, the same on PGlite and on PostgreSQL. */
export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs `fn` in a transaction; rolls back when it throws. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /** Subscribes to a NOTIFY channel; resolves to an unsubscribe function. */
  listen(channel: string, fn: Listener): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface DbOptions {
  /** PostgreSQL URL; when absent PGlite is used. */
  url?: string | undefined;
  /** PGlite data directory; `undefined` means in memory. */
  dataDir?: string | undefined;
  /** PostgreSQL only: schema to use as search_path (test isolation). */
  schema?: string | undefined;
  poolSize?: number;
  /**
   * PostgreSQL only: a read replica. The schema is neither created nor checked, and the pool is
   * not probed at open (an unreachable replica is found out by its first query).
   */
  replica?: boolean;
}

// int8 (COUNT, bigint ids) as JS numbers: every id and count Podium handles stays below 2^53.
pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));

/**
 * The one gate before PostgreSQL: a bound value holding text the server cannot store (NUL, an
 * unpaired surrogate) is refused as a 422 instead of failing inside the database as a 500.
 * Request fields are refused earlier, by name, in validation; this covers every other way in
 * (imports, answers of remote servers, code paths without a schema).
 */
function checkParams(params: readonly unknown[] | undefined): void {
  if (!params) return;
  for (const value of params) {
    const found = findUnstorable(value);
    if (found) throw new AppError('validation_failed', `A value to be stored ${found.problem}`);
  }
}

/** Opens the database named by the options. */
export async function openDb(opts: DbOptions): Promise<Db> {
  return opts.url ? openPostgres(opts) : openPglite(opts.dataDir);
}

async function openPglite(dataDir: string | undefined): Promise<Db> {
  let unlock = () => {};
  if (dataDir) {
    mkdirSync(dataDir, { recursive: true });
    unlock = lockDir(dataDir);
  }
  const lite = new PGlite(dataDir);
  try {
    await lite.waitReady;
  } catch (err) {
    unlock();
    throw err;
  }
  const wrap = (q: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    async query<T>(sql: string, params?: readonly unknown[]) {
      checkParams(params);
      const res = await q.query<T>(sql, params as unknown[] | undefined);
      return res.rows;
    },
    async exec(sql: string) {
      await q.exec(sql);
    },
  });
  const base = wrap(lite);
  return {
    kind: 'pglite',
    ...base,
    tx: (fn) => lite.transaction((t) => fn(wrap(t))),
    async listen(channel, fn) {
      const unsub = await lite.listen(channel, fn);
      return () => unsub();
    },
    async close() {
      try {
        await lite.close();
      } finally {
        unlock();
      }
    },
  };
}

function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`invalid schema name ${name}`);
  return `"${name}"`;
}

async function openPostgres(opts: DbOptions): Promise<Db> {
  const clientConfig: pg.ClientConfig = { connectionString: opts.url };
  if (opts.schema && !opts.replica) {
    const bootstrap = new pg.Client(clientConfig);
    await bootstrap.connect();
    try {
      await bootstrap.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(opts.schema)}`);
    } finally {
      await bootstrap.end();
    }
  }
  if (opts.schema) clientConfig.options = `-c search_path=${quoteIdent(opts.schema).slice(1, -1)}`;
  // A database that stops answering must fail requests quickly (503), never hang them.
  clientConfig.connectionTimeoutMillis = 3000;
  const pool = new pg.Pool({ ...clientConfig, max: opts.poolSize ?? 10, idleTimeoutMillis: 30_000 });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  if (!opts.replica) await pool.query('SELECT 1');

  const wrap = (q: pg.Pool | pg.PoolClient): Queryable => ({
    async query<T>(sql: string, params?: readonly unknown[]) {
      checkParams(params);
      const res = await q.query(sql, params as unknown[] | undefined);
      return res.rows as T[];
    },
    async exec(sql: string) {
      await q.query(sql);
    },
  });

  let listenClient: Promise<pg.Client> | undefined;
  let closed = false;
  const channels = new Map<string, Set<Listener>>();
  const deliver = (channel: string, payload: string) => {
    for (const fn of channels.get(channel) ?? []) fn(payload);
  };

  /**
   * The dedicated LISTEN connection. When it drops, it is re-opened with backoff and every
   * listener gets an empty payload: notifications may have been missed, so caches must drop all.
   */
  function listenConnection(): Promise<pg.Client> {
    listenClient ??= (async () => {
      const c = new pg.Client(clientConfig);
      c.on('notification', (msg) => deliver(msg.channel, msg.payload ?? ''));
      const lost = () => {
        if (closed) return;
        listenClient = undefined;
        reconnect(250);
      };
      c.on('error', lost);
      c.on('end', lost);
      await c.connect();
      for (const channel of channels.keys()) await c.query(`LISTEN ${quoteIdent(channel)}`);
      return c;
    })();
    listenClient.catch(() => {
      listenClient = undefined;
    });
    return listenClient;
  }

  function reconnect(delayMs: number): void {
    setTimeout(() => {
      if (closed) return;
      listenConnection().then(
        () => {
          for (const channel of channels.keys()) deliver(channel, '');
        },
        () => reconnect(Math.min(delayMs * 2, 5000)),
      );
    }, delayMs).unref();
  }

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
    async listen(channel, fn) {
      const c = await listenConnection();
      let set = channels.get(channel);
      if (!set) {
        set = new Set();
        channels.set(channel, set);
        await c.query(`LISTEN ${quoteIdent(channel)}`);
      }
      set.add(fn);
      return async () => {
        set.delete(fn);
      };
    },
    async close() {
      closed = true;
      await listenClient?.then((c) => c.end()).catch(() => {});
      await pool.end();
    },
  };
}
