import type { Dirent } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AppError } from '../lib/errors.ts';

/**
 * PGlite never flushes a file to disk: its PostgreSQL runs with `fsync=off` (`-F` in its start
 * parameters), and Emscripten's file system answers `fsync` and `fdatasync` without a system call
 * even when it is on (checked with strace: none in either case). A commit is in the operating
 * system's page cache when PGlite returns, so it survives the process being killed but not a
 * power cut or a kernel crash, which PostgreSQL's `synchronous_commit` promises. This does what
 * PostgreSQL's own calls would have done, from outside: the log segments a commit was written to
 * are flushed before the write is answered, and the data files around every checkpoint.
 */

/**
 * Reads the log's write position and the segment holding it (`WRITE_POSITION_SQL`). The write
 * position, not the insert position: a commit has been written up to its record when it returns,
 * and every segment before the one written to is written whole, so one flush of it is final;
 * records inserted after a commit but not yet written may still land in an earlier segment than
 * the insert position's.
 */
export type WritePosition = () => Promise<{ segment: string; lsn: string }>;

/** The log's segment size in bytes (16 MB unless initdb was told otherwise). */
export const SEGMENT_BYTES_SQL =
  "SELECT setting::int AS bytes FROM pg_settings WHERE name = 'wal_segment_size'";

export const WRITE_POSITION_SQL =
  'SELECT pg_walfile_name(l) AS segment, l::text AS lsn FROM pg_current_wal_lsn() AS l';

/**
 * Statements that can write: data changes, DDL, sequences, maintenance. A read needs no flush;
 * a write this misses (a SELECT of a function that writes) is flushed by the next flushed write,
 * the log being one sequence.
 */
const WRITES =
  /\b(?:insert|update|delete|merge|create|alter|drop|truncate|copy|nextval|setval|checkpoint|vacuum|analyze|grant|revoke|comment|reindex|cluster|refresh|import)\b/i;

/** Whether `sql` may write to the database (see `WRITES`). */
export function mayWrite(sql: string): boolean {
  return WRITES.test(sql);
}

/** A file or directory opened for flushing. */
export interface Syncable {
  datasync(): Promise<void>;
  close(): Promise<void>;
}

/** Opens a file or directory to flush it; undefined when it no longer exists. */
export type OpenForSync = (path: string) => Promise<Syncable | undefined>;

const ENOENT = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/** Opens read-only: Linux flushes a file or a directory through a read-only descriptor. */
export const openForSync: OpenForSync = async (path) => {
  try {
    return await open(path, 'r');
  } catch (err) {
    // A segment recycled or removed by a checkpoint since it was named holds nothing to keep.
    if (ENOENT(err)) return undefined;
    throw err;
  }
};

async function syncOnce(openFile: OpenForSync, path: string): Promise<void> {
  const file = await openFile(path);
  if (!file) return;
  try {
    await file.datasync();
  } finally {
    await file.close();
  }
}

/** A log segment's name as its timeline and its number (`XLogFileName`'s parts). */
function parseSegment(name: string, perLogId: bigint): { timeline: string; no: bigint } {
  return {
    timeline: name.slice(0, 8),
    no: BigInt(`0x${name.slice(8, 16)}`) * perLogId + BigInt(`0x${name.slice(16, 24)}`),
  };
}

function segmentName(timeline: string, no: bigint, perLogId: bigint): string {
  const hex = (n: bigint) => n.toString(16).toUpperCase().padStart(8, '0');
  return `${timeline}${hex(no / perLogId)}${hex(no % perLogId)}`;
}

/**
 * The flushes of one PGlite data directory. `afterWrite` after every committed write flushes the
 * log segments written since the last flush (one read of the write position, then `fdatasync` of
 * each segment in the thread pool; the current segment's descriptor stays open, an open cost ~100
 * µs); `dataFiles` flushes every file and directory of the data directory, for checkpoints and
 * shutdown.
 */
export class WalSync {
  /** The first failed flush: every later write is refused with it. */
  private failed: AppError | undefined;
  /** The write position the last completed flush covered. */
  private flushedLsn: string | undefined;
  /** Every segment before this one is complete and flushed. */
  private flushedBefore: bigint | undefined;
  /** The open segment being written: flushed after every write. */
  private current: { no: bigint; file: Promise<Syncable | undefined> } | undefined;
  private readonly walDir: string;
  private readonly perLogId: bigint;

  constructor(
    private readonly dataDir: string,
    private readonly writePosition: WritePosition,
    segmentBytes = 16 * 1024 * 1024,
    private readonly openFile: OpenForSync = openForSync,
  ) {
    this.walDir = join(dataDir, 'pg_wal');
    this.perLogId = 0x1_0000_0000n / BigInt(segmentBytes);
  }

  /** Why writes are refused (a flush failed), or null. */
  problem(): string | null {
    return this.failed?.message ?? null;
  }

  /** Throws once a flush failed: a write must not even run then (its caller would hear of no row). */
  refuseIfFailed(): void {
    if (this.failed) throw this.failed;
  }

  /**
   * Flushes the log up to where it is now: everything committed before the call is on disk when
   * it resolves; nothing is flushed when the log has not moved since the last flush. The current
   * segment is flushed every time (it is still being written); earlier ones once, with the log
   * directory when a new segment was begun (its entry must be on disk too).
   */
  async afterWrite(): Promise<void> {
    await this.guarded(() => this.flushLog());
  }

  /**
   * Runs a flush; its failure refuses every later write. A failed fdatasync may have dropped the
   * pages it could not write (Linux marks them clean), so a later flush that succeeds would not
   * mean what came before is on disk: PostgreSQL stops (PANIC) rather than answer another commit,
   * or let a checkpoint drop the log that covered those pages.
   */
  private async guarded(flush: () => Promise<void>): Promise<void> {
    this.refuseIfFailed();
    try {
      await flush();
    } catch (err) {
      this.failed ??= new AppError(
        'service_unavailable',
        `The database could not flush its log to disk (${(err as Error).message}); writes are refused until a restart`,
      );
      throw this.failed;
    }
  }

  private async flushLog(): Promise<void> {
    const position = await this.writePosition();
    // Nothing written since the last flush (a job's UPDATE that matched no row): nothing to flush.
    if (position.lsn === this.flushedLsn) return;
    const { timeline, no } = parseSegment(position.segment, this.perLogId);
    const from = this.flushedBefore === undefined || this.flushedBefore > no ? no : this.flushedBefore;
    const path = (n: bigint) => join(this.walDir, segmentName(timeline, n, this.perLogId));
    const done: Promise<void>[] = [];
    for (let n = from; n < no; n++) done.push(syncOnce(this.openFile, path(n)));
    done.push(this.syncCurrent(no, path(no)));
    if (from < no || this.flushedBefore === undefined) done.push(syncOnce(this.openFile, this.walDir));
    await Promise.all(done);
    if (this.flushedBefore === undefined || no > this.flushedBefore) this.flushedBefore = no;
    this.flushedLsn = position.lsn;
  }

  private async syncCurrent(no: bigint, path: string): Promise<void> {
    if (this.current?.no !== no) {
      const before = this.current;
      this.current = { no, file: this.openFile(path) };
      // A flush still using it finishes first (a file handle closes after its pending operations).
      if (before) void before.file.then((f) => f?.close()).catch(() => {});
    }
    const file = await this.current.file;
    // The segment the write position names exists (a checkpoint recycles only older ones).
    if (!file) throw new Error(`log segment ${path} is missing`);
    try {
      await file.datasync();
    } catch (err) {
      // Closed under this flush by a newer segment's: flush by name instead.
      if ((err as NodeJS.ErrnoException).code !== 'EBADF') throw err;
      await syncOnce(this.openFile, path);
    }
  }

  /**
   * Flushes every file and directory under the data directory, and the directory holding it
   * (~1 400 files, ~70 ms, in the thread pool).
   */
  async dataFiles(): Promise<void> {
    await this.guarded(() => this.flushDataFiles());
  }

  private async flushDataFiles(): Promise<void> {
    const paths = [this.dataDir];
    for (let i = 0; i < paths.length; i++) {
      const dir = paths[i] as string;
      let entries: Dirent[];
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (err) {
        if (ENOENT(err)) continue;
        throw err;
      }
      for (const e of entries) if (e.isDirectory()) paths.push(join(dir, e.name));
      const files = entries.filter((e) => e.isFile()).map((e) => join(dir, e.name));
      // A few at a time: each is a system call waiting on the disk, not CPU.
      for (let j = 0; j < files.length; j += 8)
        await Promise.all(files.slice(j, j + 8).map((f) => syncOnce(this.openFile, f)));
      await syncOnce(this.openFile, dir);
    }
    await syncOnce(this.openFile, dirname(this.dataDir));
  }

  /** Closes the current segment's descriptor; never throws (a failed open has nothing to close). */
  async close(): Promise<void> {
    const current = this.current;
    this.current = undefined;
    await current?.file.then((f) => f?.close()).catch(() => {});
  }
}
