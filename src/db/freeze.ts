import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Scheduler } from '../lib/jobs.ts';
import type { Db, Queryable } from './index.ts';

/**
 * Freezing on PGlite. PostgreSQL numbers transactions with 32 bits and stops taking writes
 * ("database is not accepting commands to avoid wraparound data loss") once the oldest
 * unfrozen transaction id of any database is about 2^31 transactions old; autovacuum freezes
 * rows long before. The embedded database is a single-user backend with no autovacuum, so
 * nothing froze anything: a server on PGlite taking clicks at the bench's rate (50 to a
 * transaction, 170–400 transactions a second) would have stopped answering `/go` after
 * 60–150 days. Three parts keep it from that:
 *
 * - Every minute (`PgliteFreezer.pass`), `VACUUM (FREEZE)` each table that grew since this
 *   process last froze it: a table's new pages only, as pages frozen once are skipped by the
 *   next pass (the visibility map), so a pass costs about what was written since the last one,
 *   and passes a minute apart keep each short under a heavy stream of clicks
 *   (a month's click partition of 250 000 rows: 480–550 ms the first time, ~2 µs a row never
 *   frozen, which the first pass after an upgrade pays once; 21–47 ms after 50 000 more rows).
 *   Tables that only change in place (rollups, jobs) and the catalogs are frozen when their
 *   oldest unfrozen row is `maxTableAge` old (autovacuum forces it at 200 million). Every
 *   `fullPassEvery`-th pass reads the tables and their ages from the catalog (10–95 ms); the
 *   others look at the files of the tables it listed (no statement when nothing grew).
 * - PostgreSQL counts the other databases of the data directory too (template0, template1),
 *   which no server opens. Opening the directory freezes them once they are
 *   `maxIdleDatabaseAge` old (`idleDatabasesToFreeze`; ~1.2 s each, once per 100 million
 *   transactions), and the pass warns when a server ran so long without a restart that they
 *   reach `warnIdleDatabaseAge`.
 * - `oldestAge`, the age PostgreSQL's stop counts, is the gauge `podium_db_xid_age`.
 */
export interface FreezePolicy {
  /** Pages a table grew by since this process last froze it (or first saw it) that call for freezing it. */
  growthPages: number;
  /** Age (transactions or multixacts) of a table's oldest unfrozen row that calls for freezing it, grown or not. */
  maxTableAge: number;
  /** Age of another database (no server opens them) past which opening the directory freezes it. */
  maxIdleDatabaseAge: number;
  /** Age of another database past which a pass warns that only a restart freezes it. */
  warnIdleDatabaseAge: number;
  /** Every this many passes (the first included), the tables and their ages are read anew. */
  fullPassEvery: number;
}

export const PGLITE_FREEZING: FreezePolicy = {
  growthPages: 1,
  maxTableAge: 50_000_000,
  maxIdleDatabaseAge: 100_000_000,
  warnIdleDatabaseAge: 1_000_000_000,
  fullPassEvery: 10,
};

/** What a pass did. */
export interface FreezePass {
  /** The tables frozen, schema-qualified, oldest first. */
  frozen: string[];
  /** Whether the pass read the tables and ages from the catalog (else: the last full pass's). */
  full: boolean;
  /** The age PostgreSQL's stop counts, as of the last full pass: the oldest database's. */
  oldestAge: number;
  /** The oldest age among the databases no server opens, as of the last full pass. */
  idleDatabaseAge: number;
}

interface Candidate {
  oid: number;
  name: string;
  file: string | null;
  age: number;
}

// Tables with storage (not partitioned parents), with their toast table's age (a VACUUM of a
// table freezes its toast table too) and, for the database's own tables, their main file under
// the data directory. Sizes are read from the files, not with pg_relation_size: that opens every
// relation, and the relation cache it filled (~25 MB with the demo) stays in PGlite's memory.
const CANDIDATES = `SELECT c.oid::int8 AS oid, format('%I.%I', n.nspname, c.relname) AS name,
       CASE WHEN c.relfilenode <> 0 AND c.reltablespace = 0 AND n.nspname NOT IN ('pg_catalog', 'information_schema')
            THEN 'base/' || d.oid || '/' || c.relfilenode END AS file,
       greatest(age(c.relfrozenxid), mxid_age(c.relminmxid),
                coalesce(age(t.relfrozenxid), 0), coalesce(mxid_age(t.relminmxid), 0))::int8 AS age
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_database d ON d.datname = current_database()
LEFT JOIN pg_class t ON t.oid = c.reltoastrelid
WHERE c.relkind IN ('r', 'm') AND c.relpersistence <> 't'
ORDER BY age DESC, c.oid`;

/** PostgreSQL's page size (PGlite's build keeps the default). */
const PAGE_BYTES = 8192;
/** PostgreSQL splits a relation's main fork into files of this size: `file`, `file.1`, … */
const SEGMENT_BYTES = 1024 * 1024 * 1024;

/**
 * Pages in a relation's main fork, from its files under `dataDir`; undefined when there are none.
 * Asked in the thread pool: a busy disk kept `statSync` of the demo's ~100 files 3–20 ms on the
 * serving thread.
 */
async function pagesOnDisk(dataDir: string, file: string): Promise<number | undefined> {
  let bytes = 0;
  for (let segment = 0; ; segment++) {
    let size: number;
    try {
      size = (await stat(join(dataDir, segment === 0 ? file : `${file}.${segment}`))).size;
    } catch {
      if (segment === 0) return undefined;
      break;
    }
    bytes += size;
    if (size < SEGMENT_BYTES) break;
  }
  return Math.floor(bytes / PAGE_BYTES);
}

const DATABASE_AGES = `SELECT datname AS name, greatest(age(datfrozenxid), mxid_age(datminmxid))::int8 AS age,
       datname = current_database() AS current
FROM pg_database`;

/** PostgreSQL's error code for a relation that does not exist. */
const UNDEFINED_TABLE = '42P01';

interface DatabaseAge {
  name: string;
  age: number;
  current: boolean;
}

/** The databases other than the open one whose frozen horizon is older than `maxAge`. */
export async function idleDatabasesToFreeze(
  q: Pick<Queryable, 'query'>,
  maxAge = PGLITE_FREEZING.maxIdleDatabaseAge,
): Promise<string[]> {
  const rows = await q.query<DatabaseAge>(DATABASE_AGES);
  return rows
    .filter((d) => !d.current && Number(d.age) > maxAge)
    .map((d) => d.name)
    .sort();
}

/** Freezes the embedded database's tables as they grow and age (see the module's comment). */
export class PgliteFreezer {
  /** Each table's size in pages when this process last froze it or first saw it. */
  private readonly seen = new Map<number, number>();
  /** The tables as the last full pass listed them. */
  private tables: Candidate[] = [];
  private passes = 0;
  /** The age PostgreSQL's stop counts, as of the last full pass (0 before the first). */
  oldestAge = 0;
  private idleDatabaseAge = 0;

  constructor(
    private readonly db: Db,
    private readonly policy: FreezePolicy = PGLITE_FREEZING,
    private readonly warn: (msg: string) => void = () => {},
  ) {}

  /** Freezes every table due, one statement each (the serving thread answers between them). */
  async pass(signal?: AbortSignal): Promise<FreezePass> {
    const full = this.passes++ % this.policy.fullPassEvery === 0;
    if (full) this.tables = await this.db.query<Candidate>(CANDIDATES, [], 'freeze_candidates');
    const due: { oid: number; name: string; pages: number | undefined }[] = [];
    const dataDir = this.db.dataDir;
    // Catalogs (and a database in memory) have no size to watch: they are frozen by age.
    const sizes = await Promise.all(
      this.tables.map((r) => (dataDir && r.file ? pagesOnDisk(dataDir, r.file) : undefined)),
    );
    for (const [i, r] of this.tables.entries()) {
      const oid = Number(r.oid);
      const pages = sizes[i];
      const last = this.seen.get(oid);
      const grown = pages !== undefined && last !== undefined && pages - last >= this.policy.growthPages;
      // Ages are as old as the last full pass: only that pass acts on them.
      if (grown || (full && Number(r.age) >= this.policy.maxTableAge)) due.push({ oid, name: r.name, pages });
      // First seen, or emptied (TRUNCATE gives the table a new, empty file, listed by the next
      // full pass): growth counts from here.
      else if (pages !== undefined && (last === undefined || pages < last)) this.seen.set(oid, pages);
    }
    if (full) {
      const live = new Set(this.tables.map((r) => Number(r.oid)));
      for (const oid of this.seen.keys()) if (!live.has(oid)) this.seen.delete(oid);
    }
    const frozen: string[] = [];
    for (const t of due) {
      if (signal?.aborted) break;
      try {
        await this.db.exec(`VACUUM (FREEZE) ${t.name}`);
      } catch (err) {
        // Dropped since the candidates were read (the partitions job drops expired months).
        if ((err as { code?: unknown }).code === UNDEFINED_TABLE) continue;
        throw err;
      }
      if (t.pages !== undefined) this.seen.set(t.oid, t.pages);
      frozen.push(t.name);
    }
    if (full) {
      const ages = await this.db.query<DatabaseAge>(DATABASE_AGES);
      this.oldestAge = Math.max(0, ...ages.map((d) => Number(d.age)));
      this.idleDatabaseAge = Math.max(0, ...ages.filter((d) => !d.current).map((d) => Number(d.age)));
      if (this.idleDatabaseAge > this.policy.warnIdleDatabaseAge)
        this.warn(
          `embedded database: template databases are ${this.idleDatabaseAge} transactions old; restart the server to freeze them ` +
            `(PostgreSQL stops taking writes at about 2 147 000 000)`,
        );
    }
    return { frozen, full, oldestAge: this.oldestAge, idleDatabaseAge: this.idleDatabaseAge };
  }
}

/** Freezes the embedded database every minute (PostgreSQL has autovacuum). */
export function registerFreezeJob(scheduler: Scheduler, freezer: PgliteFreezer): void {
  scheduler.register({
    name: 'pglite-freeze',
    everyMs: 60_000,
    run: async (signal) => void (await freezer.pass(signal)),
  });
}
