import { type FileHandle, mkdir, open, readdir, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Db, Queryable } from '../../db/index.ts';
import { syncPath } from '../../db/pglite-fsync.ts';
import { AppError } from '../../lib/errors.ts';
import { BufferFullError } from './group-commit.ts';
import type { JournalMark } from './repository.ts';
import type { ClickRow } from './types.ts';

/** What the journal needs from the database, over the handle that skips its own barrier. */
export interface JournalLoader {
  /** Inserts rows and moves the mark to `loadedTo` in one statement; returns the deltas appended. */
  load(rows: readonly ClickRow[], loadedTo: JournalMark): Promise<number>;
  /** Where the database says the journal is loaded up to. */
  mark(): Promise<JournalMark>;
  /** Moves the mark without loading (past rows kept aside). */
  setMark(mark: JournalMark): Promise<void>;
}

export interface ClickJournalOptions {
  /** Rows per load statement, about: whole appended batches are loaded, so up to one batch more. */
  loadBatch: number;
  /** The longest answered rows wait for their load when no statement asks for them first. */
  loadDelayMs: number;
  /** A segment file this large takes no more rows; the next append starts a new one. */
  segmentBytes: number;
  /** Rows answered and not yet loaded beyond which appends are refused (memory stays bounded). */
  maxBacklog: number;
  /** Told after each load how many rollup deltas it appended. */
  onLoaded?: (deltas: number) => void;
  /** Where failures of background loads and refused rows are reported. */
  warn: (msg: string, err?: unknown) => void;
}

/** Rows appended together (or read back together), in one segment, and where each row's line ends in it. */
interface Batch {
  rows: readonly ClickRow[];
  ends: readonly number[];
  segment: number;
}

/** One waiting row and where its line ends. */
interface WaitingRow {
  row: ClickRow;
  segment: number;
  end: number;
}

interface OpenSegment {
  number: number;
  file: FileHandle;
  size: number;
}

/**
 * Rows set aside one after another, with no load succeeding between, past which a refusal is taken
 * for the statement's failure rather than the rows' (classes 22 and 23 can come from a rollup).
 */
export const MAX_REFUSED_IN_A_ROW = 10;
/** The journal's directory inside PGlite's data directory. */
export const JOURNAL_DIR = 'podium_click_journal';
const SEGMENT = /^clicks-(\d{16})\.jsonl$/;
/** The file name of segment `n`. */
export const segmentName = (n: number) => `clicks-${String(n).padStart(16, '0')}.jsonl`;
/** Rows the database refused, each with its error, kept for an operator (never loaded again). */
export const REFUSED_FILE = 'refused.jsonl';

/** One row as a journal line: a JSON array in `clicks` column order, the time in milliseconds. */
export function journalLine(r: ClickRow): string {
  return `${JSON.stringify([
    r.id,
    r.kind,
    r.at.getTime(),
    r.linkId,
    r.trackerId,
    r.offerId,
    r.brandId,
    r.siteId,
    r.toplistId,
    r.position,
    r.programId,
    r.subId,
    r.referrer,
    r.userAgent,
    r.country,
    r.flag,
  ])}\n`;
}

const intOrNull = (v: unknown): v is number | null => v === null || Number.isSafeInteger(v);
const textOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';

/** A journal line read back, or undefined when it is not one (a torn or damaged line). */
export function parseJournalLine(line: string): ClickRow | undefined {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!Array.isArray(v) || v.length !== 16) return undefined;
  const [id, kind, at, linkId, trackerId, offerId, brandId, siteId, toplistId, position, programId] = v;
  const [subId, referrer, userAgent, country, flag] = v.slice(11);
  if (typeof id !== 'string' || (kind !== 'click' && kind !== 'impression')) return undefined;
  if (!Number.isSafeInteger(at) || !Number.isSafeInteger(linkId)) return undefined;
  const ints = [trackerId, offerId, brandId, siteId, toplistId, position, programId];
  if (!ints.every(intOrNull) || ![subId, referrer, userAgent, country, flag].every(textOrNull))
    return undefined;
  return {
    id,
    kind,
    at: new Date(at),
    linkId,
    trackerId,
    offerId,
    brandId,
    siteId,
    toplistId,
    position,
    programId,
    subId,
    referrer,
    userAgent,
    country,
    flag,
  } as ClickRow;
}

const journals = new WeakMap<Db, Promise<ClickJournal>>();

/**
 * The click journal of an embedded database: a click is answered once its row is flushed to an
 * append-only file (one `write` and one `fdatasync` per group-commit batch, in the thread pool),
 * and the rows reach the database behind, in statements of ~`loadBatch` rows, each moving the
 * database's mark (migration 0087) in the same statement. PGlite runs statements on the serving
 * thread at a fixed cost each plus a cost per row, and a group-commit batch holds at most one row
 * per connection: loads of ~1 000 took a fifth off `/go`'s CPU a click (bench/README.md, session 33).
 *
 * Nobody sees the database without the journal's rows: every statement and transaction first waits
 * until the rows answered before it was issued are loaded (`Db.writeBehind`). A start loads what
 * lies past the mark, so a killed server loses no answered row and loads none twice; a torn last
 * line was never answered. A row the database refuses on its own is kept in `refused.jsonl` with
 * its error and reported, and the rows after it load. A journal file that fails to reach the disk
 * refuses every later click until a restart, as `pglite-fsync.ts` refuses the database.
 */
export class ClickJournal {
  private readonly waiting: Batch[] = [];
  /** Rows appended (answered) and rows loaded or set aside since this journal opened: the backlog is the difference. */
  private appended = 0;
  private loaded = 0;
  private loading: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private current: OpenSegment | undefined;
  private appending: Promise<unknown> = Promise.resolve();
  /** Segment files no longer appended to, deleted once the mark is past them. */
  private readonly closed: number[] = [];
  private lastSegment = 0;
  private broken: string | null = null;
  private lastWarning = '';
  /** Rows set aside since the last load that succeeded (see `MAX_REFUSED_IN_A_ROW`). */
  private refusedInARow = 0;
  /** The start's replay, while it runs: statements wait for it as for any load. */
  private opening: Promise<void> | undefined;

  private constructor(
    private readonly dir: string,
    private readonly loader: JournalLoader,
    private readonly opts: ClickJournalOptions,
  ) {}

  /**
   * The journal of `db` in `dir`, opened once per database: registers its barrier, then loads
   * what an earlier process answered and the database lacks. Later calls share the first.
   */
  static on(
    db: Db & Required<Pick<Db, 'writeBehind'>>,
    dir: string,
    loaderOn: (raw: Queryable) => JournalLoader,
    opts: ClickJournalOptions,
  ): Promise<ClickJournal> {
    let opening = journals.get(db);
    if (!opening) {
      opening = (async () => {
        let journal: ClickJournal | undefined;
        const raw = db.writeBehind(() => journal?.barrier());
        journal = new ClickJournal(dir, loaderOn(raw), opts);
        journal.opening = journal.replay();
        await journal.opening;
        journal.opening = undefined;
        return journal;
      })();
      journals.set(db, opening);
    }
    return opening;
  }

  /** Rows answered and not yet in the database. */
  get backlog(): number {
    return this.appended - this.loaded;
  }

  /** Why clicks are refused (a journal file failed to reach the disk), or null. */
  problem(): string | null {
    return this.broken;
  }

  /** Appends rows and flushes them to disk; resolves once they are durable (then they may be answered). */
  append(rows: readonly ClickRow[]): Promise<void> {
    const turn = this.appending.then(() => this.write(rows));
    this.appending = turn.catch(() => {});
    return turn;
  }

  private async write(rows: readonly ClickRow[]): Promise<void> {
    if (this.broken) throw new Error(this.broken);
    if (this.backlog >= this.opts.maxBacklog) throw new BufferFullError(this.opts.maxBacklog);
    const lines = rows.map(journalLine);
    const bytes = Buffer.from(lines.join(''), 'utf8');
    let segment: OpenSegment | undefined;
    try {
      segment = await this.segment();
      await segment.file.write(bytes, 0, bytes.length, segment.size);
      await segment.file.datasync();
    } catch (err) {
      // After a failed write or flush the file's state on disk is unknown (the kernel may have
      // dropped the dirty pages): no later row may be answered from it.
      this.broken = `the click journal failed to reach the disk: ${(err as Error).message}`;
      throw err;
    }
    let end = segment.size;
    const ends = lines.map((line) => (end += Buffer.byteLength(line)));
    segment.size = end;
    this.waiting.push({ rows, ends, segment: segment.number });
    this.appended += rows.length;
    this.schedule();
  }

  /** The segment to append to: a new one at start and after the last grew past `segmentBytes`. */
  private async segment(): Promise<OpenSegment> {
    if (this.current && this.current.size >= this.opts.segmentBytes) {
      const full = this.current;
      this.current = undefined;
      this.closed.push(full.number);
      await full.file.close();
    }
    if (!this.current) {
      const number = this.lastSegment + 1;
      const file = await open(path.join(this.dir, segmentName(number)), 'wx');
      this.lastSegment = number;
      this.current = { number, file, size: 0 };
      // The directory flushed too, so the new file is found after a crash.
      await syncPath(this.dir);
    }
    return this.current;
  }

  /** Loads at once past `loadBatch` rows, else within `loadDelayMs`. */
  private schedule(): void {
    if (this.backlog >= this.opts.loadBatch) {
      clearTimeout(this.timer);
      this.timer = undefined;
      setImmediate(() => this.background());
    } else this.timer ??= setTimeout(() => this.background(), this.opts.loadDelayMs);
  }

  private background(): void {
    this.timer = undefined;
    if (this.loaded < this.appended)
      this.loadThrough(this.appended).catch((err) => this.report('loading the click journal failed', err));
  }

  /** What a statement waits for before it runs: the start's replay, the rows answered so far loaded. */
  private barrier(): Promise<void> | undefined {
    if (this.opening) return this.opening;
    return this.loaded < this.appended ? this.loadThrough(this.appended) : undefined;
  }

  /** Resolves once the first `seq` rows appended are in the database. */
  private async loadThrough(seq: number): Promise<void> {
    while (this.loaded < seq) {
      this.loading ??= this.loadNext().finally(() => {
        this.loading = undefined;
      });
      await this.loading;
    }
  }

  /**
   * Loads the oldest waiting batches, ~`loadBatch` rows, in one statement. When the database
   * refuses a row for its data, the rows are loaded in halves down to that row (`loadPart`).
   * Any other failure (the database refused, a full disk) leaves them waiting for the next try.
   */
  private async loadNext(): Promise<void> {
    let count = 0;
    let rows = 0;
    while (count < this.waiting.length && rows < this.opts.loadBatch)
      rows += this.waiting[count++]!.rows.length;
    const entries = this.waiting
      .slice(0, count)
      .flatMap((b) => b.rows.map((row, i) => ({ row, segment: b.segment, end: b.ends[i]! })));
    if (entries.length) await this.loadPart(entries, true);
  }

  /** Loads `entries` (the head of the waiting rows) and moves the mark past them, or halves them. */
  private async loadPart(entries: readonly WaitingRow[], whole: boolean): Promise<void> {
    const last = entries.at(-1)!;
    const loadedTo = { segment: last.segment, position: last.end };
    try {
      const deltas = await this.loader.load(
        entries.map((e) => e.row),
        loadedTo,
      );
      this.consume(entries.length);
      this.refusedInARow = 0;
      this.opts.onLoaded?.(deltas);
    } catch (err) {
      if (!refusesRow(err)) throw err;
      if (whole) this.report('a click journal load was refused; looking for the row in halves', err);
      if (entries.length === 1) {
        // Rows refused one after another with none loaded between: the statement itself fails
        // (a bad zone, a counter out of range), not the rows. They wait, as for any failure.
        if (this.refusedInARow >= MAX_REFUSED_IN_A_ROW)
          throw new Error(
            `click journal: ${this.refusedInARow} rows refused in a row and none loaded; the rest wait: ${(err as Error).message}`,
          );
        this.refusedInARow += 1;
        await this.keepAside(journalLine(last.row), err);
        await this.loader.setMark(loadedTo);
        this.consume(1);
      } else {
        const half = entries.length >>> 1;
        await this.loadPart(entries.slice(0, half), false);
        await this.loadPart(entries.slice(half), false);
      }
    }
    if (whole) await this.deleteBefore(loadedTo.segment);
  }

  /** Takes `n` rows, now in the database or kept aside, off the head of the waiting ones. */
  private consume(n: number): void {
    this.loaded += n;
    while (n > 0) {
      const head = this.waiting[0]!;
      if (head.rows.length <= n) {
        n -= head.rows.length;
        this.waiting.shift();
      } else {
        this.waiting[0] = { rows: head.rows.slice(n), ends: head.ends.slice(n), segment: head.segment };
        n = 0;
      }
    }
  }

  /** Keeps a line the database would not take, with why, flushed before the mark moves past it. */
  private async keepAside(line: string, err: unknown): Promise<void> {
    const entry = `${JSON.stringify({ at: new Date().toISOString(), error: (err as Error).message ?? String(err), line: line.trimEnd() })}\n`;
    const file = await open(path.join(this.dir, REFUSED_FILE), 'a');
    try {
      await file.appendFile(entry);
      await file.datasync();
    } finally {
      await file.close();
    }
    this.opts.warn(`click journal: a row was refused by the database and kept in ${REFUSED_FILE}`, err);
  }

  /** Deletes the closed segments wholly before the mark's; one that cannot be is tried again later. */
  private async deleteBefore(segment: number): Promise<void> {
    while (this.closed.length && this.closed[0]! < segment) {
      try {
        await unlink(path.join(this.dir, segmentName(this.closed[0]!)));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
          this.report('deleting a loaded click journal file failed', err);
          return;
        }
      }
      this.closed.shift();
    }
  }

  /**
   * Reads the segments past the database's mark and loads their rows; then moves the mark to the
   * end of the last whole line read (past a damaged line no row follows, kept aside once).
   */
  private async replay(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const mark = await this.loader.mark();
    const numbers = (await readdir(this.dir))
      .map((f) => SEGMENT.exec(f)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    this.lastSegment = Math.max(mark.segment, numbers.at(-1) ?? 0);
    let read = mark;
    for (const n of numbers) {
      this.closed.push(n);
      if (n < mark.segment) continue;
      const text = await readFile(path.join(this.dir, segmentName(n)));
      const from = n === mark.segment ? mark.position : 0;
      read = { segment: n, position: await this.readSegment(n, text, from) };
    }
    await this.deleteBefore(mark.segment);
    if (this.appended) {
      this.opts.warn(`click journal: loading ${this.appended} answered rows the database lacks`);
      await this.loadThrough(this.appended);
    }
    if (read.segment !== mark.segment || read.position !== mark.position) await this.loader.setMark(read);
  }

  /**
   * Queues a segment's rows from byte `from` on; returns where its last whole line ends. A damaged
   * line is kept aside; a torn last line (no newline) is left.
   */
  private async readSegment(segment: number, text: Buffer, from: number): Promise<number> {
    let start = from;
    let batch: { rows: ClickRow[]; ends: number[]; segment: number } = { rows: [], ends: [], segment };
    while (start < text.length) {
      const nl = text.indexOf(10, start);
      // A last line without its newline was torn by a crash before its flush: never answered.
      if (nl < 0) break;
      const line = text.subarray(start, nl + 1).toString('utf8');
      const row = parseJournalLine(line);
      if (row) {
        batch.rows.push(row);
        batch.ends.push(nl + 1);
      } else
        await this.keepAside(line, new Error(`unreadable line in ${segmentName(segment)} at byte ${start}`));
      start = nl + 1;
      if (batch.rows.length >= this.opts.loadBatch) {
        this.queue(batch);
        batch = { rows: [], ends: [], segment };
      }
    }
    if (batch.rows.length) this.queue(batch);
    return start;
  }

  private queue(batch: Batch): void {
    this.waiting.push(batch);
    this.appended += batch.rows.length;
  }

  /** Loads every answered row and closes the segment (shutdown); a later append starts a new one. */
  async drain(): Promise<void> {
    await this.appending;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.loadThrough(this.appended);
    // Closed in the appends' own order, so no append in flight finds its file closed under it.
    const closing = this.appending.then(async () => {
      const open = this.current;
      if (!open) return;
      this.current = undefined;
      this.closed.push(open.number);
      await open.file.close();
    });
    this.appending = closing.catch(() => {});
    await closing;
  }

  /** Reports a failure once until a different one comes (a refused database fails every load). */
  private report(msg: string, err: unknown): void {
    const text = `${msg}: ${(err as Error).message ?? String(err)}`;
    if (text === this.lastWarning) return;
    this.lastWarning = text;
    this.opts.warn(msg, err);
  }
}

/**
 * Whether a load failed for its rows' data, not for the database: PostgreSQL's data exceptions
 * and constraint violations (classes 22 and 23), or a value no database stores (`checkedParams`).
 * A full disk, a refused or closed database fail every row alike: those rows wait instead.
 */
function refusesRow(err: unknown): boolean {
  if (err instanceof AppError) return err.code === 'validation_failed';
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^2[23][0-9A-Z]{3}$/.test(code);
}
