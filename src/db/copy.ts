import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  advanceSequence,
  appliedMigrations,
  type Batch,
  type CopyTable,
  countRows,
  createPartition,
  digest,
  dropForeignKey,
  type ForeignKey,
  fixTextFormats,
  insertBatch,
  listForeignKeys,
  listPartitions,
  listSequences,
  listTables,
  lockTables,
  readBlocks,
  readKeyBatch,
  restoreForeignKey,
  type TableDigest,
  tableBlocks,
  truncateTables,
} from './copy-repository.ts';
import { DirLockedError } from './dir-lock.ts';
import { type Db, openDb, type Queryable } from './index.ts';
import { migrate } from './migrate.ts';
import { openConfiguredDb } from './open.ts';

/** What `podium copy-to-postgres` is told to do. */
export interface CopyOptions {
  /** The embedded database's data directory (the source). */
  dataDir: string;
  /** The PostgreSQL server's URL (the target). */
  url: string;
  /** Compare the two databases only; copy nothing. */
  verifyOnly?: boolean;
  /** Rows per batch read from the source (default 1 000). */
  batchRows?: number;
}

/** Where the command says what it does: notes, and each table's progress. */
export interface CopyReporter {
  note(msg: string): void;
  progress(table: string, done: number, total: number): void;
}

/** One table as copied and verified. */
export interface CopiedTable extends TableDigest {
  name: string;
}

export interface CopyResult {
  tables: CopiedTable[];
  rows: number;
}

/** Thrown when the two databases differ after a copy (nothing committed) or in `verifyOnly`. */
export class CopyMismatchError extends Error {
  constructor(readonly differences: string[]) {
    super(`the copy does not match the embedded database: ${differences.join('; ')}`);
    this.name = 'CopyMismatchError';
  }
}

const DEFAULT_BATCH_ROWS = 1000;
/** A batch's text stays under this, whatever its rows hold (editions carry whole documents). */
const BATCH_BYTES = 4 * 1024 * 1024;
/** Pages per batch of a table without a primary key (its rows are read by page ranges). */
const BATCH_BLOCKS = 64;
/** How long the target's tables may stay locked by another session before the copy gives up. */
const LOCK_TIMEOUT = '10s';

/**
 * Copies every table of the embedded database in `dataDir` into the PostgreSQL database at `url`,
 * in one transaction, and checks the result row for row before committing. The data directory
 * stays locked throughout, so no server writes to it meanwhile. Both databases are migrated to
 * this release's schema first. The target must hold no data beyond what a fresh migration writes.
 */
export async function copyToPostgres(options: CopyOptions, report: CopyReporter): Promise<CopyResult> {
  const source = await openSource(options.dataDir, report);
  try {
    const target = await openDb({ url: options.url, poolSize: 2 });
    try {
      if (options.verifyOnly) return await verifyOnly(source, target, report);
      const empty = await freshMigrationCounts();
      // Before migrating: a database holding data is refused as it was found, not migrated first.
      await refuseData(
        target,
        (await listTables(target)).map((t) => t.name),
        empty,
      );
      for (const v of await migrate(target)) report.note(`target: applied migration ${v}`);
      await sameSchemaVersion(source, target);
      return await copy(source, target, empty, options.batchRows ?? DEFAULT_BATCH_ROWS, report);
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

/** Opens (and migrates) the embedded database, refusing a directory that holds none or is in use. */
async function openSource(dataDir: string, report: CopyReporter): Promise<Db> {
  // Opening an empty directory would create a new database there: nothing to copy.
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    throw new Error(
      `${dataDir} holds no embedded database (set --data-dir or PODIUM_DATA_DIR to its directory)`,
    );
  }
  try {
    const db = await openConfiguredDb({ dataDir, databaseUrl: undefined }, (m) =>
      report.note(`source: ${m}`),
    );
    await fixTextFormats(db, false);
    return db;
  } catch (err) {
    if (err instanceof DirLockedError) {
      throw new Error(`${dataDir} is in use by another process: stop the server that runs on it, then copy`);
    }
    throw err;
  }
}

/** Refuses databases whose applied migrations differ (a newer release's, or a target not migrated). */
async function sameSchemaVersion(source: Queryable, target: Queryable): Promise<void> {
  const [a, b] = await Promise.all([appliedMigrations(source), appliedMigrations(target)]);
  const extra = b.filter((v) => !a.includes(v));
  if (extra.length) {
    throw new Error(
      `the target has migrations this release does not know (${extra.join(', ')}): copy with the release that applied them`,
    );
  }
  const missing = a.filter((v) => !b.includes(v));
  if (missing.length)
    throw new Error(
      `the target lacks ${missing.length} of this release's migrations (from ${missing[0]}): it holds no copy of this database`,
    );
}

/**
 * Rows a freshly migrated database holds per table (a migration may seed a row, such as the UTC
 * zone of the daily rollups): measured on a new in-memory database, so a target that holds just
 * those counts as empty.
 */
async function freshMigrationCounts(): Promise<Map<string, number>> {
  const fresh = await openDb({});
  try {
    await migrate(fresh);
    const counts = new Map<string, number>();
    for (const t of await listTables(fresh)) counts.set(t.name, await countRows(fresh, t.name));
    return counts;
  } finally {
    await fresh.close();
  }
}

/**
 * The tables in foreign-key order (referenced tables first), and the foreign keys no order can
 * satisfy: a table referencing itself, or tables referencing each other (a toplist names its live
 * edition, an edition its toplist). Those are dropped for the copy and added back after it, when
 * PostgreSQL checks every row against them.
 */
export function foreignKeyOrder(
  tables: readonly string[],
  fks: readonly ForeignKey[],
): { order: string[]; deferred: ForeignKey[] } {
  const remaining = new Set(tables);
  const order: string[] = [];
  const deferred: ForeignKey[] = [];
  const waitsOn = (t: string) =>
    fks.filter((f) => f.table === t && f.references !== t && remaining.has(f.references));
  while (remaining.size) {
    const ready = [...remaining].filter((t) => waitsOn(t).length === 0);
    // A cycle: the first table left goes next; its keys to the tables still waiting are deferred.
    const next = ready.length ? ready : [[...remaining].sort()[0]!];
    for (const t of next) {
      if (!ready.length) deferred.push(...waitsOn(t));
      remaining.delete(t);
      order.push(t);
    }
  }
  deferred.push(...fks.filter((f) => f.table === f.references && tables.includes(f.table)));
  return { order, deferred };
}

/** Checks the target's tables have every column of the source's, with the same types. */
function matchTables(source: readonly CopyTable[], target: readonly CopyTable[]): void {
  const byName = new Map(target.map((t) => [t.name, t]));
  for (const s of source) {
    const t = byName.get(s.name);
    if (!t) throw new Error(`table ${s.name} is missing on the target after its migration`);
    const types = new Map(t.columns.map((c) => [c.name, c.type]));
    const off = s.columns.find((c) => types.get(c.name) !== c.type);
    if (off) {
      throw new Error(
        `table ${s.name}: column ${off.name} is ${off.type} in the embedded database but ${types.get(off.name) ?? 'missing'} on the target`,
      );
    }
  }
}

async function copy(
  source: Db,
  target: Db,
  empty: Map<string, number>,
  batchRows: number,
  report: CopyReporter,
): Promise<CopyResult> {
  const tables = await listTables(source);
  const byName = new Map(tables.map((t) => [t.name, t]));
  const totals = new Map<string, number>();
  for (const t of tables) totals.set(t.name, await countRows(source, t.name));
  const partitions = await listPartitions(source);
  const sequences = await listSequences(source);

  return target.tx(async (q) => {
    await fixTextFormats(q, true);
    matchTables(tables, await listTables(q));
    const names = tables.map((t) => t.name);
    await lockTables(q, names, LOCK_TIMEOUT);
    // Again under the lock: nothing may have been written since the first look.
    await refuseData(q, names, empty);
    await truncateTables(q, names);
    await mirrorPartitions(q, partitions);
    const { order, deferred } = foreignKeyOrder(names, await listForeignKeys(q));
    for (const fk of deferred) await dropForeignKey(q, fk);
    report.note(`copying ${tables.length} tables, ${sum(totals.values())} rows`);
    for (const name of order)
      await copyTable(source, q, byName.get(name)!, totals.get(name)!, batchRows, report);
    for (const fk of deferred) await restoreForeignKey(q, fk);
    for (const s of sequences) await advanceSequence(q, s, s.lastValue);
    report.note('verifying every table on both databases');
    const checked = await compare(source, q, tables);
    return { tables: checked, rows: sum(checked.map((t) => t.rows)) };
  });
}

/** Refuses a target with rows beyond what a fresh migration writes, naming the tables. */
async function refuseData(
  q: Queryable,
  tables: readonly string[],
  empty: Map<string, number>,
): Promise<void> {
  const held: string[] = [];
  for (const t of tables) {
    const n = await countRows(q, t);
    if (n > (empty.get(t) ?? 0)) held.push(`${t} (${n} row${n === 1 ? '' : 's'})`);
  }
  if (held.length) {
    throw new Error(
      `the target already holds data, in ${held.slice(0, 5).join(', ')}${held.length > 5 ? ` and ${held.length - 5} more tables` : ''}: copy only into an empty database`,
    );
  }
}

/** Creates on the target every partition of the source it lacks, with the source's bounds. */
async function mirrorPartitions(
  q: Queryable,
  partitions: readonly { parent: string; name: string; bound: string }[],
) {
  const have = new Map((await listPartitions(q)).map((p) => [p.name, p]));
  for (const p of partitions) {
    const there = have.get(p.name);
    if (!there) await createPartition(q, p);
    else if (there.bound !== p.bound || there.parent !== p.parent) {
      throw new Error(`partition ${p.name} differs on the target: ${there.bound} instead of ${p.bound}`);
    }
  }
}

/**
 * Copies one table in bounded batches: by primary key (keyset), or by page ranges for a table
 * without one. A partitioned table is read and written through its parent: one walk over its key
 * covers every leaf once, and the target routes each row to the leaf of its bound.
 */
async function copyTable(
  source: Queryable,
  target: Queryable,
  table: CopyTable,
  total: number,
  batchRows: number,
  report: CopyReporter,
): Promise<void> {
  let done = 0;
  let shown = -1;
  const step = (n: number) => {
    done += n;
    // About ten lines per table, however many batches it takes.
    const tenth = total ? Math.floor((done * 10) / total) : 10;
    if (tenth !== shown) {
      shown = tenth;
      report.progress(table.name, done, total);
    }
  };
  const batches = table.key.length
    ? keyBatches(source, table, batchRows)
    : blockBatches(source, table, await tableBlocks(source, table.name));
  if (!total) step(0);
  // The next batch is read while this one is written: PGlite reads on this thread, the server writes on its own.
  let pending = batches.next();
  for (;;) {
    const r = await pending;
    if (r.done) break;
    pending = batches.next();
    pending.catch(() => {});
    if (r.value.rows) await insertBatch(target, table, r.value.json);
    step(r.value.rows);
  }
}

async function* keyBatches(q: Queryable, table: CopyTable, batchRows: number): AsyncGenerator<Batch> {
  let after: string[] | null = null;
  for (;;) {
    const b = await readKeyBatch(q, table, after, batchRows, BATCH_BYTES);
    if (!b.rows) return;
    yield b;
    after = b.last;
  }
}

async function* blockBatches(q: Queryable, table: CopyTable, blocks: number): AsyncGenerator<Batch> {
  for (let from = 0; from < blocks; from += BATCH_BLOCKS) {
    yield await readBlocks(q, table, from, from + BATCH_BLOCKS);
  }
}

/** Count and digest of every table on both databases; throws CopyMismatchError listing the differences. */
async function compare(
  source: Queryable,
  target: Queryable,
  tables: readonly CopyTable[],
): Promise<CopiedTable[]> {
  const out: CopiedTable[] = [];
  const differences: string[] = [];
  for (const t of tables) {
    const [a, b] = await Promise.all([digest(source, t.name, t.columns), digest(target, t.name, t.columns)]);
    if (a.rows !== b.rows)
      differences.push(`${t.name}: ${a.rows} rows in the embedded database, ${b.rows} on the target`);
    else if (a.digest !== b.digest)
      differences.push(`${t.name}: ${a.rows} rows on both, but their content differs`);
    out.push({ name: t.name, ...a });
  }
  if (differences.length) throw new CopyMismatchError(differences);
  return out;
}

/** Compares an earlier copy with the embedded database, table by table, changing neither. */
async function verifyOnly(source: Db, target: Db, report: CopyReporter): Promise<CopyResult> {
  await sameSchemaVersion(source, target);
  const tables = await listTables(source);
  return target.tx(async (q) => {
    await fixTextFormats(q, true);
    matchTables(tables, await listTables(q));
    report.note(`verifying ${tables.length} tables on both databases`);
    const checked = await compare(source, q, tables);
    return { tables: checked, rows: sum(checked.map((t) => t.rows)) };
  });
}

function sum(values: Iterable<number>): number {
  let n = 0;
  for (const v of values) n += v;
  return n;
}
