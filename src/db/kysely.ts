import {
  type Compilable,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
} from 'kysely';
import type { Queryable } from './index.ts';
import type { DB } from './schema.ts';

/** Kysely bound to one Podium handle: the database itself or an open transaction. */
export type Sql = Kysely<DB>;

const NO_TX =
  'Kysely transactions are not used: run the statements in db.tx(q => ...) and bind kysely(q) to its handle';

/**
 * Every statement goes through `Queryable.query`, so Kysely's SQL gets what a hand-written
 * statement gets: the unstorable-text check, `JsonParam` serialisation, the slow-statement watch,
 * and on PGlite the one-call-per-turn gate and the flush at commit. `query` answers rows only, so
 * a statement that must tell whether it touched a row says so with `RETURNING`.
 */
class QueryableConnection implements DatabaseConnection {
  constructor(private readonly q: Queryable) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    return { rows: await this.q.query<R>(compiled.sql, compiled.parameters) };
  }

  // biome-ignore lint/correctness/useYield: streaming is refused before anything is read
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported: Queryable answers whole result sets');
  }
}

/**
 * One connection, the handle itself: a pool (PostgreSQL) or PGlite's single session sits behind
 * it already. Transactions stay `Db.tx`'s, which owns BEGIN/COMMIT on both databases.
 */
class QueryableDriver implements Driver {
  private readonly connection: QueryableConnection;

  constructor(q: Queryable) {
    this.connection = new QueryableConnection(q);
  }

  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return this.connection;
  }
  async beginTransaction(): Promise<void> {
    throw new Error(NO_TX);
  }
  async commitTransaction(): Promise<void> {
    throw new Error(NO_TX);
  }
  async rollbackTransaction(): Promise<void> {
    throw new Error(NO_TX);
  }
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {}
}

class QueryableDialect implements Dialect {
  constructor(private readonly q: Queryable) {}
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver() {
    return new QueryableDriver(this.q);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
}

/**
 * A typed query builder over `q` (the db or a transaction's handle): table and column names are
 * checked against `DB` (schema.ts, generated from the migrations) by the compiler. Cheap to make; make one per handle.
 */
export function kysely(q: Queryable): Sql {
  return new Kysely<DB>({ dialect: new QueryableDialect(q) });
}

/**
 * Runs a built query as the named statement `name` (planned once per connection, `Queryable.query`):
 * for the few statements a hot path asks for again and again. The query's text must not vary.
 */
export function runNamed<R>(q: Queryable, query: Compilable<R>, name: string): Promise<R[]> {
  const compiled = query.compile();
  return q.query<R>(compiled.sql, compiled.parameters, name);
}
