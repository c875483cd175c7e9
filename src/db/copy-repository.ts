import { type RawBuilder, sql } from 'kysely';
import type { Queryable } from './index.ts';
import { kysely } from './kysely.ts';

/**
 * The statements of `podium copy-to-postgres` (copy.ts): catalog reads, batch reads and writes by
 * table name, digests. Table, column and type names come from the databases' own catalogs and are
 * quoted with `sql.id`; types are spelled by `format_type`, so every value travels as its type's
 * text form and is read back by the same type's input function (exact for numeric, jsonb, bytea,
 * arrays, timestamps).
 */

/** A column to copy: its name, its type as `format_type` spells it, and whether it is generated. */
export interface CopyColumn {
  name: string;
  type: string;
  generated: boolean;
}

/** A table of the current schema that holds rows of its own (a partitioned table's leaves excluded). */
export interface CopyTable {
  name: string;
  partitioned: boolean;
  columns: CopyColumn[];
  /** Primary-key columns in key order; empty for a table without one. */
  key: string[];
}

/** A foreign key of the current schema: the table holding it, the table it references, its definition. */
export interface ForeignKey {
  table: string;
  references: string;
  name: string;
  definition: string;
}

/** One leaf of a partitioned table: its parent and its bound as `pg_get_expr` prints it. */
export interface Partition {
  parent: string;
  name: string;
  bound: string;
}

/** A sequence, the column it is owned by (serial or identity) and how far it went. */
export interface SequenceState {
  name: string;
  table: string | null;
  column: string | null;
  /** Null when the sequence never handed out a value. */
  lastValue: string | null;
}

/** One batch read from a table: its rows as a JSON array of arrays of text, and the key of its last row. */
export interface Batch {
  rows: number;
  json: string;
  /** The last row's key values as text (keyset tables); null for an empty batch or a block range. */
  last: string[] | null;
}

/** A table's row count and its content digest (order-independent, see `digest`). */
export interface TableDigest {
  rows: number;
  digest: string;
}

/**
 * Output formats that decide how values print as text, the same on both databases, so the text of
 * a row (its digest) does not depend on a server's or session's defaults. `local`: only for the
 * current transaction.
 */
export async function fixTextFormats(q: Queryable, local: boolean): Promise<void> {
  const scope = local ? 'LOCAL ' : '';
  await q.exec(
    [
      `SET ${scope}TimeZone TO 'UTC'`,
      `SET ${scope}DateStyle TO 'ISO, YMD'`,
      `SET ${scope}IntervalStyle TO 'postgres'`,
      `SET ${scope}extra_float_digits TO 1`,
      `SET ${scope}bytea_output TO 'hex'`,
    ].join('; '),
  );
}

/** Every table of the current schema with its columns and primary key, `schema_migrations` excepted. */
export async function listTables(q: Queryable): Promise<CopyTable[]> {
  const { rows } = await sql<{
    name: string;
    kind: string;
    columns: CopyColumn[];
    key: string[] | null;
  }>`
    SELECT c.relname AS name, c.relkind AS kind,
      (SELECT json_agg(json_build_object('name', a.attname, 'type', format_type(a.atttypid, a.atttypmod),
                                         'generated', a.attgenerated <> '') ORDER BY a.attnum)
       FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns,
      (SELECT array_agg(a.attname::text ORDER BY k.ord)
       FROM pg_index i CROSS JOIN unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
       WHERE i.indrelid = c.oid AND i.indisprimary) AS key
    FROM pg_class c
    WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
      AND NOT c.relispartition AND c.relname <> 'schema_migrations'
    ORDER BY c.relname`.execute(kysely(q));
  return rows.map((r) => ({
    name: r.name,
    partitioned: r.kind === 'p',
    columns: r.columns,
    key: r.key ?? [],
  }));
}

/** Foreign keys declared on tables of the current schema (a partition's inherited copies excepted). */
export async function listForeignKeys(q: Queryable): Promise<ForeignKey[]> {
  const { rows } = await sql<ForeignKey>`
    SELECT t.relname AS table, r.relname AS references, c.conname AS name,
           pg_get_constraintdef(c.oid) AS definition
    FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_class r ON r.oid = c.confrelid
    WHERE c.contype = 'f' AND c.conparentid = 0 AND t.relnamespace = current_schema()::regnamespace
    ORDER BY t.relname, c.conname`.execute(kysely(q));
  return rows;
}

/** The leaves of the current schema's partitioned tables. */
export async function listPartitions(q: Queryable): Promise<Partition[]> {
  const { rows } = await sql<Partition>`
    SELECT p.relname AS parent, c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
    WHERE p.relkind = 'p' AND p.relnamespace = current_schema()::regnamespace
    ORDER BY p.relname, c.relname`.execute(kysely(q));
  return rows;
}

/** Creates `name` as a partition of `parent` with the bound another database printed for it. */
export async function createPartition(q: Queryable, p: Partition): Promise<void> {
  // The bound is catalog output (`FOR VALUES FROM (...) TO (...)`), not an identifier or a value.
  await sql`CREATE TABLE ${sql.id(p.name)} PARTITION OF ${sql.id(p.parent)} ${sql.raw(p.bound)}`.execute(
    kysely(q),
  );
}

/** The sequences of the current schema with the column owning each and their last value. */
export async function listSequences(q: Queryable): Promise<SequenceState[]> {
  const { rows } = await sql<SequenceState>`
    SELECT s.sequencename AS name, t.relname AS table, a.attname AS column, s.last_value::text AS "lastValue"
    FROM pg_sequences s
    JOIN pg_class c ON c.relname = s.sequencename AND c.relnamespace = current_schema()::regnamespace
    LEFT JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid
      AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
    LEFT JOIN pg_class t ON t.oid = d.refobjid
    LEFT JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
    WHERE s.schemaname = current_schema()
    ORDER BY s.sequencename`.execute(kysely(q));
  return rows;
}

/**
 * Moves sequence `s` to the larger of `lastValue` and the highest value of its owning column, so the
 * next value it hands out is past every copied row. Does nothing while both are absent.
 */
export async function advanceSequence(
  q: Queryable,
  s: SequenceState,
  lastValue: string | null,
): Promise<void> {
  const max =
    s.table && s.column ? sql`(SELECT max(${sql.id(s.column)}) FROM ${sql.id(s.table)})` : sql`NULL::bigint`;
  await sql`
    SELECT setval(quote_ident(${s.name})::regclass, v, true)
    FROM (SELECT greatest(${lastValue}::bigint, ${max}::bigint) AS v) x
    WHERE v IS NOT NULL`.execute(kysely(q));
}

/** The migration versions applied to the database (none when it was never migrated). */
export async function appliedMigrations(q: Queryable): Promise<string[]> {
  const k = kysely(q);
  const { rows: found } = await sql<{
    t: string | null;
  }>`SELECT to_regclass('schema_migrations')::text AS t`.execute(k);
  if (!found[0]!.t) return [];
  const { rows } = await sql<{
    version: string;
  }>`SELECT version FROM schema_migrations ORDER BY version`.execute(k);
  return rows.map((r) => r.version);
}

/** Number of rows in `table`. */
export async function countRows(q: Queryable, table: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`SELECT count(*)::text AS n FROM ${sql.id(table)}`.execute(
    kysely(q),
  );
  return Number(rows[0]!.n);
}

/** A row as the text of a JSON array holding each column's text form (NULL as null). */
function rowText(columns: readonly CopyColumn[], alias?: string): RawBuilder<string> {
  const ref = (c: string) => (alias ? sql.ref(`${alias}.${c}`) : sql.id(c));
  return sql<string>`json_build_array(${sql.join(columns.map((c) => sql`${ref(c.name)}::text`))})::text`;
}

/**
 * The next batch of `table` by primary key after `after` (the key of the previous batch's last row;
 * null for the first): at most `maxRows` rows, and only as many as keep the batch's text under
 * `maxBytes` (at least one row, however large). An index range scan, so every batch costs its own
 * rows only.
 */
export async function readKeyBatch(
  q: Queryable,
  table: CopyTable,
  after: readonly string[] | null,
  maxRows: number,
  maxBytes: number,
): Promise<Batch> {
  const types = new Map(table.columns.map((c) => [c.name, c.type]));
  const key = sql.join(table.key.map((k) => sql.id(k)));
  const from = after
    ? sql`(${key}) > (${sql.join(after.map((v, i) => sql`${v}::${sql.raw(types.get(table.key[i]!)!)}`))})`
    : sql`true`;
  const keyText = sql`json_build_array(${sql.join(table.key.map((k) => sql`${sql.id(k)}::text`))})::text`;
  const { rows } = await sql<{ n: string; json: string; last: string | null }>`
    WITH b AS (
      SELECT ${keyText} AS k, ${rowText(table.columns)} AS j, row_number() OVER (ORDER BY ${key}) AS rn
      FROM ${sql.id(table.name)} WHERE ${from} ORDER BY ${key} LIMIT ${maxRows}
    ), s AS (
      SELECT k, j, rn, sum(octet_length(j)) OVER (ORDER BY rn) - octet_length(j) AS before FROM b
    )
    SELECT count(*)::text AS n, '[' || coalesce(string_agg(j, ',' ORDER BY rn), '') || ']' AS json,
           (array_agg(k ORDER BY rn DESC))[1] AS last
    FROM s WHERE rn = 1 OR before < ${maxBytes}`.execute(kysely(q));
  const r = rows[0]!;
  return { rows: Number(r.n), json: r.json, last: r.last === null ? null : (JSON.parse(r.last) as string[]) };
}

/** Size of `table` in pages, the range `readBlocks` walks. */
export async function tableBlocks(q: Queryable, table: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    SELECT (pg_relation_size(quote_ident(${table})::regclass) / current_setting('block_size')::int)::text AS n`.execute(
    kysely(q),
  );
  return Number(rows[0]!.n);
}

/**
 * The rows stored in pages [from, to) of `table` (a TID range scan): the batches of a table without
 * a primary key. Its rows must stay where they are meanwhile, which the data directory's lock ensures.
 */
export async function readBlocks(q: Queryable, table: CopyTable, from: number, to: number): Promise<Batch> {
  const { rows } = await sql<{ n: string; json: string }>`
    SELECT count(*)::text AS n, '[' || coalesce(string_agg(${rowText(table.columns)}, ','), '') || ']' AS json
    FROM ${sql.id(table.name)}
    WHERE ctid >= ${`(${from},0)`}::tid AND ctid < ${`(${to},0)`}::tid`.execute(kysely(q));
  return { rows: Number(rows[0]!.n), json: rows[0]!.json, last: null };
}

/** Inserts a batch read by `readKeyBatch` or `readBlocks` (generated columns are computed again). */
export async function insertBatch(q: Queryable, table: CopyTable, json: string): Promise<void> {
  const stored = table.columns.map((c, i) => ({ ...c, i })).filter((c) => !c.generated);
  await sql`
    INSERT INTO ${sql.id(table.name)} (${sql.join(stored.map((c) => sql.id(c.name)))}) OVERRIDING SYSTEM VALUE
    SELECT ${sql.join(stored.map((c) => sql`(r->>${sql.lit(c.i)})::${sql.raw(c.type)}`))}
    FROM json_array_elements(${json}::json) AS r`.execute(kysely(q));
}

/**
 * Row count and a digest of every row's text (the columns named, as `rowText` prints them): the sum
 * of the first 64 bits of each row's md5, as an exact numeric. A sum needs no order, so both
 * databases compute it in one scan whatever their collations; any row that differs changes it.
 */
export async function digest(
  q: Queryable,
  table: string,
  columns: readonly CopyColumn[],
): Promise<TableDigest> {
  const { rows } = await sql<{ n: string; digest: string }>`
    SELECT count(*)::text AS n,
           coalesce(sum(('x' || substr(md5(${rowText(columns, 't')}), 1, 16))::bit(64)::bigint::numeric), 0)::text AS digest
    FROM ${sql.id(table)} AS t`.execute(kysely(q));
  return { rows: Number(rows[0]!.n), digest: rows[0]!.digest };
}

/** Locks the tables against every other session until the transaction ends; waits at most `timeout`. */
export async function lockTables(q: Queryable, tables: readonly string[], timeout: string): Promise<void> {
  await sql`SELECT set_config('lock_timeout', ${timeout}, true)`.execute(kysely(q));
  await sql`LOCK TABLE ${sql.join(tables.map((t) => sql.id(t)))} IN ACCESS EXCLUSIVE MODE`.execute(kysely(q));
}

/** Empties the tables (the rows a fresh migration wrote into some of them). */
export async function truncateTables(q: Queryable, tables: readonly string[]): Promise<void> {
  await sql`TRUNCATE ${sql.join(tables.map((t) => sql.id(t)))}`.execute(kysely(q));
}

/** Drops a foreign key for the duration of the copy (`restoreForeignKey` puts it back). */
export async function dropForeignKey(q: Queryable, fk: ForeignKey): Promise<void> {
  await sql`ALTER TABLE ${sql.id(fk.table)} DROP CONSTRAINT ${sql.id(fk.name)}`.execute(kysely(q));
}

/** Adds a foreign key back as it was declared; PostgreSQL checks every row against it. */
export async function restoreForeignKey(q: Queryable, fk: ForeignKey): Promise<void> {
  // The definition is `pg_get_constraintdef` output of this same database.
  await sql`ALTER TABLE ${sql.id(fk.table)} ADD CONSTRAINT ${sql.id(fk.name)} ${sql.raw(fk.definition)}`.execute(
    kysely(q),
  );
}
