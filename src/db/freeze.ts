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
 * - Every ten minutes (`PgliteFreezer.pass`), `VACUUM (FREEZE)` each table that grew since this
 *   process last froze it: a table's new pages only, as pages frozen once are skipped by the
 *   next pass (the visibility map), so a pass costs about what was written since the last one
 *   (a month's click partition of 250 000 rows: 480–550 ms the first time, 21 ms after 50 000
 *   more rows). Tables that only change in place (rollups, jobs) and the catalogs are frozen
 *   when their oldest unfrozen row is `maxTableAge` old, as `vacuum_freeze_min_age` would.
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
}

export const PGLITE_FREEZING: FreezePolicy = {
  growthPages: 1,
  maxTableAge: 50_000_000,
  maxIdleDatabaseAge: 100_000_000,
  warnIdleDatabaseAge: 1_000_000_000,
};

/** What a pass did. */
export interface FreezePass {
  /** The tables frozen, schema-qualified, oldest first. */
  frozen: string[];
  /** The age PostgreSQL's stop counts after the pass: the oldest database's. */
  oldestAge: number;
  /** The oldest age among the databases no server opens. */
  idleDatabaseAge: number;
}

// Tables with storage (not partitioned parents), with their toast table's age: a VACUUM of a
// table freezes its toast table too.
const CANDIDATES = `SELECT c.oid::int8 AS oid, format('%I.%I', n.nspname, c.relname) AS name,
       (pg_relation_size(c.oid) / current_setting('block_size')::int)::int8 AS pages,
       greatest(age(c.relfrozenxid), mxid_age(c.relminmxid),
                coalesce(age(t.relfrozenxid), 0), coalesce(mxid_age(t.relminmxid), 0))::int8 AS age
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_class t ON t.oid = c.reltoastrelid
WHERE c.relkind IN ('r', 'm') AND c.relpersistence <> 't'
ORDER BY age DESC, c.oid`;

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
  /** The age PostgreSQL's stop counts, as of the last pass (0 before the first). */
  oldestAge = 0;

  constructor(
    private readonly db: Db,
    private readonly policy: FreezePolicy = PGLITE_FREEZING,
    private readonly warn: (msg: string) => void = () => {},
  ) {}

  /** Freezes every table due, one statement each (the serving thread answers between them). */
  async pass(signal?: AbortSignal): Promise<FreezePass> {
    const rows = await this.db.query<{ oid: number; name: string; pages: number; age: number }>(
      CANDIDATES,
      [],
      'freeze_candidates',
    );
    const due: { oid: number; name: string; pages: number }[] = [];
    const live = new Set<number>();
    for (const r of rows) {
      const oid = Number(r.oid);
      const pages = Number(r.pages);
      live.add(oid);
      const last = this.seen.get(oid);
      const grown = last !== undefined && pages - last >= this.policy.growthPages;
      if (grown || Number(r.age) >= this.policy.maxTableAge) due.push({ oid, name: r.name, pages });
      // First seen, or emptied (TRUNCATE): growth counts from here.
      else if (last === undefined || pages < last) this.seen.set(oid, pages);
    }
    for (const oid of this.seen.keys()) if (!live.has(oid)) this.seen.delete(oid);
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
      this.seen.set(t.oid, t.pages);
      frozen.push(t.name);
    }
    const ages = await this.db.query<DatabaseAge>(DATABASE_AGES);
    this.oldestAge = Math.max(0, ...ages.map((d) => Number(d.age)));
    const idleDatabaseAge = Math.max(0, ...ages.filter((d) => !d.current).map((d) => Number(d.age)));
    if (idleDatabaseAge > this.policy.warnIdleDatabaseAge)
      this.warn(
        `embedded database: template databases are ${idleDatabaseAge} transactions old; restart the server to freeze them ` +
          `(PostgreSQL stops taking writes at about 2 147 000 000)`,
      );
    return { frozen, oldestAge: this.oldestAge, idleDatabaseAge };
  }
}

/** Freezes the embedded database every ten minutes (PostgreSQL has autovacuum). */
export function registerFreezeJob(scheduler: Scheduler, freezer: PgliteFreezer): void {
  scheduler.register({
    name: 'pglite-freeze',
    everyMs: 600_000,
    run: async (signal) => void (await freezer.pass(signal)),
  });
}
