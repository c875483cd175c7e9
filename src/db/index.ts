import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import { AppError } from '../lib/errors.ts';
import { findUnstorable } from '../lib/text.ts';
import { lockDir } from './dir-lock.ts';
import { idleDatabasesToFreeze, PGLITE_FREEZING } from './freeze.ts';
import { DiskSync, DURABLE_START_PARAMS } from './pglite-fsync.ts';
import { type SlowStatement, SlowStatements } from './slow-statements.ts';

/** Anything that runs SQL: the database itself or an open transaction. */
export interface Queryable {
  /**
   * One parameterised statement; returns its rows. With `name`, PostgreSQL parses and plans the
   * statement once per connection and then runs it by that name (one name, one text); PGlite runs
   * it like any other, through its public `query`.
   */
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[], name?: string): Promise<T[]>;
  /** Several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export type Listener = (payload: string) => void;

/** The database handle the app uses, the same on PGlite and on PostgreSQL. */
export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** PGlite on disk: its data directory (read by the freeze job, freeze.ts); otherwise undefined. */
  readonly dataDir?: string | undefined;
  /** Why the database is refused, or null: PGlite after a file failed to reach the disk or PostgreSQL stopped inside it (pglite-fsync.ts). */
  diskProblem(): string | null;
  /** Runs `fn` in a transaction; rolls back when it throws. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /** Subscribes to a NOTIFY channel; resolves to an unsubscribe function. */
  listen(channel: string, fn: Listener): Promise<() => Promise<void>>;
  /** Reports statements that take `thresholdMs` or more (0: none), a few lines a minute at most (slow-statements.ts). */
  watchSlow(thresholdMs: number, report: (s: SlowStatement) => void): void;
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
  /**
   * PGlite only: the age (in transactions) of the data directory's other databases past which
   * opening it freezes them first (default `PGLITE_FREEZING.maxIdleDatabaseAge`, freeze.ts).
   */
  maxIdleDatabaseAge?: number;
}

let pgModule: typeof pg | undefined;

/**
 * node-postgres, loaded on first use: a server on PGlite never needs it (with ioredis, likewise
 * loaded only for a Redis URL, ~14 MB of an idle server's RSS).
 */
function loadPg(): typeof pg {
  if (!pgModule) {
    pgModule = createRequire(import.meta.url)('pg') as typeof pg;
    // int8 (COUNT, bigint ids) as JS numbers: every id and count Podium handles stays below 2^53.
    pgModule.types.setTypeParser(20, (v) => Number.parseInt(v, 10));
  }
  return pgModule;
}

/**
 * Embedded PostgreSQL settings. Its shared buffers live in the process's WebAssembly memory and are
 * touched at start, so the server default (128 MB) would put ~115 MB on an idle server's RSS;
 * 16 MB holds the hot pages of the catalog and the operating system's file cache keeps the rest.
 * `max_wal_size` starts no checkpoint in a single-user backend (wal-checkpoint.ts does); it bounds
 * the log segments a checkpoint keeps for reuse. `wal_init_zero=off`: a new 16 MB log segment is
 * not filled with zeros (and flushed) on the serving thread before its first commit; segments
 * recycled after a checkpoint are whole files either way.
 */
const PGLITE_SETTINGS = ['-c', 'shared_buffers=16MB', '-c', 'max_wal_size=512MB', '-c', 'wal_init_zero=off'];

/**
 * The one gate before PostgreSQL: a bound value holding text the server cannot store (NUL, an
 * unpaired surrogate) is refused as a 422 instead of failing inside the database as a 500.
 * Request fields are refused earlier, by name, in validation; this covers every other way in
 * (imports, answers of remote servers, code paths without a schema). Returns the values to send,
 * each `JsonParam` serialised.
 */
function checkedParams(params: readonly unknown[] | undefined): unknown[] | undefined {
  if (!params) return undefined;
  let sent: unknown[] | undefined;
  for (const [i, value] of params.entries()) {
    const json = value instanceof JsonParam;
    const found = findUnstorable(json ? value.value : value);
    if (found) throw new AppError('validation_failed', `A value to be stored ${found.problem}`);
    // Checked before it is serialised: JSON escapes a NUL or lone surrogate the database refuses.
    if (json) {
      sent ??= [...params];
      sent[i] = JSON.stringify(value.value);
    }
  }
  return sent ?? (params as unknown[]);
}

/**
 * A bound value sent as JSON text (for a `$n::jsonb` parameter): many rows in one parameter,
 * which costs both databases less to send and read than an array per column.
 */
export class JsonParam {
  constructor(readonly value: unknown) {}
}

/**
 * Lets one call into PGlite start per event-loop turn. PGlite runs a statement on this thread and
 * resolves it with promises alone, so a chain of statements (a minute's jobs, an import) would run
 * in one turn, every request that arrived meanwhile waiting for all of it. A call that finds this
 * turn's start taken waits for the next turn; the one call of a turn does not wait at all.
 */
class TurnGate {
  private taken = false;
  private readonly free = () => {
    this.taken = false;
  };

  async enter(): Promise<void> {
    while (this.taken) await new Promise<void>((resolve) => setImmediate(resolve));
    this.taken = true;
    setImmediate(this.free);
  }
}

/** `query` over PGlite's own, for the few statements run before the handle exists. */
function rowsOf(lite: PGlite): Pick<Queryable, 'query'> {
  return {
    query: async <T>(sql: string, params?: readonly unknown[]) =>
      (await lite.query<T>(sql, params as unknown[])).rows,
  };
}

/** Opens the database named by the options. */
export async function openDb(opts: DbOptions): Promise<Db> {
  return opts.url ? openPostgres(opts) : openPglite(opts.dataDir, opts.maxIdleDatabaseAge);
}

/** PGlite started on `dataDir` (or in memory), its files flushed where PostgreSQL flushes them. */
interface StartedPglite {
  lite: PGlite;
  /** Files on disk are flushed where PostgreSQL flushes them (pglite-fsync.ts); memory has no disk. */
  disk: DiskSync | undefined;
}

async function startPglite(dataDir: string | undefined, database?: string): Promise<StartedPglite> {
  const disk = dataDir === undefined ? undefined : new DiskSync(dataDir);
  const lite = new PGlite(dataDir, {
    startParams: [...(disk ? DURABLE_START_PARAMS : PGlite.defaultStartParams), ...PGLITE_SETTINGS],
    ...(disk ? { extensions: { podium_disk_sync: disk.extension } } : {}),
    ...(database ? { database } : {}),
  });
  disk?.guard(lite);
  await lite.waitReady;
  // A flush that failed while it started (PGlite left unclosed: no shutdown checkpoint then).
  disk?.refuseIfFailed();
  return { lite, disk };
}

/** Shuts PGlite down, its shutdown checkpoint on disk, unless a flush failed. */
async function stopPglite({ lite, disk }: StartedPglite): Promise<void> {
  // After a failed flush no shutdown checkpoint may claim the files are on disk: the next start
  // recovers from the last good checkpoint, as PostgreSQL does after its PANIC.
  if (disk?.problem()) return;
  await lite.close();
  // PGlite only logs a flush that failed in its shutdown checkpoint.
  disk?.refuseIfFailed();
}

/**
 * Opens PGlite on `dataDir`. The data directory's other databases (template0, template1), which
 * no server opens, are frozen first once they are `maxIdleDatabaseAge` transactions old: PostgreSQL
 * stops taking writes when any database's oldest unfrozen transaction is ~2^31 old (freeze.ts).
 */
async function openPglite(
  dataDir: string | undefined,
  maxIdleDatabaseAge = PGLITE_FREEZING.maxIdleDatabaseAge,
): Promise<Db> {
  let unlock = () => {};
  if (dataDir) {
    mkdirSync(dataDir, { recursive: true });
    unlock = await lockDir(dataDir);
  }
  let started: StartedPglite;
  try {
    started = await startPglite(dataDir);
    const idle = dataDir ? await idleDatabasesToFreeze(rowsOf(started.lite), maxIdleDatabaseAge) : [];
    if (idle.length) {
      await stopPglite(started);
      for (const database of idle) {
        const other = await startPglite(dataDir, database);
        try {
          await other.lite.exec('VACUUM (FREEZE)');
        } finally {
          await stopPglite(other);
        }
      }
      started = await startPglite(dataDir);
    }
  } catch (err) {
    unlock();
    throw err;
  }
  const { lite, disk } = started;
  const slow = new SlowStatements();
  const turns = new TurnGate();
  /** Runs one call into PGlite unless a flush failed, and fails it when a flush fails during it. */
  const guarded = async <T>(run: () => Promise<T>): Promise<T> => {
    await turns.enter();
    disk?.refuseIfFailed();
    try {
      return await run();
    } finally {
      disk?.refuseIfFailed();
    }
  };
  /** The database itself or a transaction's handle: each of their statements through `guarded`. */
  const wrap = (q: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    async query<T>(sql: string, params?: readonly unknown[], name?: string) {
      const values = checkedParams(params);
      return slow.time(sql, name, () => guarded(async () => (await q.query<T>(sql, values)).rows));
    },
    async exec(sql: string) {
      await slow.time(sql, undefined, () => guarded(() => q.exec(sql)));
    },
  });
  return {
    kind: 'pglite',
    dataDir,
    ...wrap(lite),
    watchSlow: (ms, report) => slow.watch(ms, report),
    diskProblem: () => disk?.problem() ?? null,
    tx: (fn) => guarded(() => lite.transaction((t) => fn(wrap(t)))),
    async listen(channel, fn) {
      const unsub = await lite.listen(channel, fn);
      return () => unsub();
    },
    async close() {
      slow.stop();
      try {
        await stopPglite(started);
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
  const pg = loadPg();
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

  const slow = new SlowStatements();
  const wrap = (q: pg.Pool | pg.PoolClient): Queryable => ({
    async query<T>(sql: string, params?: readonly unknown[], name?: string) {
      const values = checkedParams(params);
      // node-postgres prepares a named statement once per connection and reuses it by name.
      const res = await slow.time(sql, name, () =>
        q.query({
          text: sql,
          values,
          ...(name ? { name } : {}),
        }),
      );
      return res.rows as T[];
    },
    async exec(sql: string) {
      await slow.time(sql, undefined, () => q.query(sql));
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
    // PostgreSQL stops by itself after a failed fsync; its handle then fails every query.
    diskProblem: () => null,
    ...wrap(pool),
    watchSlow: (ms, report) => slow.watch(ms, report),
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
      slow.stop();
      await listenClient?.then((c) => c.end()).catch(() => {});
      await pool.end();
    },
  };
}
