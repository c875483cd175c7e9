import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { Config } from '../../config.ts';
import type { Queryable } from '../../db/index.ts';
import { csvRows } from '../../lib/csv.ts';
import type { Scheduler } from '../../lib/jobs.ts';
import {
  isMissingPartition,
  keyOf,
  PARTITIONED,
  type Partition,
  type PartitionedTable,
  PartitionRepository,
} from './partition-repository.ts';

export const PARTITION_JOB = 'tracking-partitions';
/** Months of partitions kept ready ahead of the current one. */
const MONTHS_AHEAD = 3;
const EXPORT_PAGE = 5000;
const DAY_MS = 86_400_000;

/** Which retention setting governs each partitioned table. */
const KIND: Record<PartitionedTable, 'clicks' | 'postbacks' | 'conversions'> = {
  clicks: 'clicks',
  postback_log: 'postbacks',
  postback_outcomes: 'postbacks',
  conversions: 'conversions',
};

export type RetentionConfig = Pick<
  Config,
  'retentionClicksDays' | 'retentionPostbacksDays' | 'retentionConversionsDays' | 'trackingArchiveDir'
>;

/** What the manifest beside each exported partition says. */
export interface ExportManifest {
  table: PartitionedTable;
  partition: string;
  /** The UTC range of the partition, [from, to). */
  from: string;
  to: string;
  rows: number;
  columns: string[];
  file: string;
  bytes: number;
  sha256: string;
  exportedAt: string;
}

const addMonths = (d: Date, n: number) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + n, 1));

/**
 * Partition upkeep of the tracking tables: monthly partitions created ahead (and on demand for a
 * row whose month has none), and retention: partitions wholly older than a table kind's limit are
 * exported (gzip CSV and a JSON manifest) when an archive directory is set, then detached and dropped.
 */
export class TrackingPartitions {
  private readonly repo: PartitionRepository;

  constructor(
    db: Queryable,
    private readonly config: RetentionConfig,
    private readonly now: () => Date,
  ) {
    this.repo = new PartitionRepository(db);
  }

  /** Partitions from last month to `MONTHS_AHEAD` months ahead, for every table; returns how many were made. */
  async ensureAhead(): Promise<number> {
    const now = this.now();
    return this.ensureRange(addMonths(now, -1), addMonths(now, MONTHS_AHEAD + 1));
  }

  /** Partitions for every month between the earliest and latest of `times` (and now), for every table. */
  async ensureFor(times: readonly Date[]): Promise<number> {
    const ms = [...times.map((t) => t.getTime()), Date.now(), this.now().getTime()];
    return this.ensureRange(new Date(Math.min(...ms)), new Date(Math.max(...ms) + 1));
  }

  private async ensureRange(from: Date, to: Date): Promise<number> {
    let made = 0;
    for (const table of Object.keys(PARTITIONED) as PartitionedTable[])
      made += await this.repo.ensure(table, from, to);
    return made;
  }

  /** Runs `write`; when a row met a month without a partition, creates the months of `times` and writes again. */
  async writing<T>(times: () => readonly Date[], write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (!isMissingPartition(err)) throw err;
      await this.ensureFor(times());
      return write();
    }
  }

  /** Summarises the time index's new page ranges (see `PartitionRepository.summarizeBrin`); returns how many. */
  summarizeTimeIndexes(): Promise<number> {
    return this.repo.summarizeBrin();
  }

  /** Retention limit of a table in days; 0 keeps everything. */
  private limitDays(table: PartitionedTable): number {
    const kind = KIND[table];
    if (kind === 'clicks') return this.config.retentionClicksDays;
    if (kind === 'postbacks') return this.config.retentionPostbacksDays;
    return this.config.retentionConversionsDays;
  }

  /** The partitions wholly older than their table's limit (the newest row they may hold is past it). */
  async expired(): Promise<Partition[]> {
    const now = this.now().getTime();
    return (await this.repo.list()).filter((p) => {
      const days = this.limitDays(p.table);
      return days > 0 && p.to.getTime() <= now - days * DAY_MS;
    });
  }

  /** Exports (when configured) then detaches and drops every expired partition; returns their manifests or names. */
  async retain(signal?: AbortSignal): Promise<{ partition: string; manifest: ExportManifest | null }[]> {
    const done: { partition: string; manifest: ExportManifest | null }[] = [];
    for (const p of await this.expired()) {
      if (signal?.aborted) break;
      const manifest = this.config.trackingArchiveDir
        ? await this.exportPartition(p, this.config.trackingArchiveDir)
        : null;
      await this.repo.detachAndDrop(p);
      done.push({ partition: p.name, manifest });
    }
    return done;
  }

  /**
   * Writes `<partition>.csv.gz` (header line, then every row in key order, values in PostgreSQL's
   * text form) and `<partition>.manifest.json` into `dir`; both appear under their final names only
   * when complete, and the row count is checked against the partition before anything is dropped.
   */
  async exportPartition(p: Partition, dir: string): Promise<ExportManifest> {
    mkdirSync(dir, { recursive: true });
    const columns = await this.repo.columns(p.table);
    const [k1, k2] = keyOf(p.table);
    const file = `${p.name}.csv.gz`;
    const target = path.join(dir, file);
    const partial = `${target}.partial`;
    let rows = 0;
    const repo = this.repo;
    async function* lines() {
      yield csvRows([columns]);
      let after: [string, string] | undefined;
      for (;;) {
        const page = await repo.page(p, after, EXPORT_PAGE);
        if (!page.length) return;
        rows += page.length;
        yield csvRows(page.map((r) => columns.map((c) => r[c])));
        const last = page[page.length - 1] as Record<string, string | null>;
        after = [last[k1] as string, last[k2] as string];
      }
    }
    await pipeline(lines, createGzip(), createWriteStream(partial));
    const expected = await this.repo.count(p);
    if (rows !== expected) throw new Error(`export of ${p.name}: ${rows} rows written, ${expected} held`);
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(partial)) hash.update(chunk as Buffer);
    renameSync(partial, target);
    const manifest: ExportManifest = {
      table: p.table,
      partition: p.name,
      from: p.from.toISOString(),
      to: p.to.toISOString(),
      rows,
      columns,
      file,
      bytes: statSync(target).size,
      sha256: hash.digest('hex'),
      exportedAt: new Date().toISOString(),
    };
    const manifestPath = path.join(dir, `${p.name}.manifest.json`);
    writeFileSync(`${manifestPath}.partial`, `${JSON.stringify(manifest, null, 2)}\n`);
    renameSync(`${manifestPath}.partial`, manifestPath);
    return manifest;
  }
}

/**
 * Registers partition upkeep with the scheduler: once an hour across every process sharing the
 * database, months ahead are created, the clicks' time index summarised (every range without a
 * summary), and expired partitions exported and dropped.
 */
export function registerPartitionJob(scheduler: Scheduler, partitions: TrackingPartitions): void {
  scheduler.register({
    name: PARTITION_JOB,
    everyMs: 3_600_000,
    run: async (signal) => {
      await partitions.ensureAhead();
      await partitions.summarizeTimeIndexes();
      await partitions.retain(signal);
    },
  });
}
