import { writeSync } from 'node:fs';

/**
 * Lines are written once this many bytes wait (or after `flushMs`): one write for many lines, and
 * never more than this in one write but for a single longer line. It is Linux's PIPE_BUF: a pipe
 * write of at most that many bytes lands whole, never interleaved with another process's writes
 * (a full non-blocking pipe refuses it whole rather than taking part of it), so the workers of
 * `podium serve --workers N`, which share the primary's standard output, never cut each other's
 * lines.
 */
const CHUNK_BYTES = 4096;
/** The buffer: a chunk plus room for the line that fills it (lines larger than a third go alone). */
const CAPACITY = 16 * 1024;
/** How long a full non-blocking pipe (EAGAIN) may hold the process before its bytes are dropped. */
const BLOCKED_LIMIT_MS = 2000;
const FLUSH_MS = 1000;
const PAUSE_MS = 5;

const NEWLINE = Buffer.from('\n');
const pauseCell = new Int32Array(new SharedArrayBuffer(4));
/** Sleeps the thread: a synchronous writer has nothing else it may do while the pipe is full. */
const pause = (ms: number) => Atomics.wait(pauseCell, 0, 0, ms);

/** Sinks with bytes that must reach their descriptor before the process exits. */
const open = new Set<LineSink>();
let exitHook = false;

/**
 * Log lines to a file descriptor (standard output), buffered into chunks of CHUNK_BYTES written
 * synchronously, and at least every `flushMs` so a quiet server's lines are not held back.
 * Synchronous chunks cost less CPU than asynchronous ones (no thread-pool round trip) and never
 * reorder. Each line is encoded once, straight into the buffer: SonicBoom (pino.destination),
 * which this replaces, measured the byte length of its whole pending chunk again on every line
 * (0.7 µs a line more, bench/README.md). A full pipe (EAGAIN) is waited out for up to
 * `blockedLimitMs`; past that the sink drops chunks at once until one is written whole again, so
 * a stalled log reader costs lines, not a frozen server (a line cut by a drop is ended with a
 * newline before the next, so readers never see two lines run together). A descriptor that fails otherwise (a
 * closed pipe) loses the lines rather than the process. Bytes still buffered are written at exit,
 * and by `flush`/`end`.
 */
export class LineSink {
  private readonly buf = Buffer.allocUnsafe(CAPACITY);
  private used = 0;
  private ended = false;
  /** Set once a full pipe outlasted blockedLimitMs; cleared by the next chunk written whole. */
  private stalled = false;
  /** The last bytes written end inside a line (the rest was dropped). */
  private cut = false;
  private readonly timer: NodeJS.Timeout;
  /** Bytes given up on (a failing descriptor, or a pipe full for too long), for the curious. */
  droppedBytes = 0;
  /** The error that last made this sink drop bytes. */
  lastError: Error | undefined;

  private readonly fd: number;
  private readonly blockedLimitMs: number;

  constructor(opts: { fd?: number; flushMs?: number; blockedLimitMs?: number } = {}) {
    this.fd = opts.fd ?? 1;
    this.blockedLimitMs = opts.blockedLimitMs ?? BLOCKED_LIMIT_MS;
    this.timer = setInterval(() => this.flushSync(), opts.flushMs ?? FLUSH_MS);
    this.timer.unref();
    open.add(this);
    if (!exitHook) {
      exitHook = true;
      process.on('exit', () => {
        for (const sink of open) sink.flushSync();
      });
    }
  }

  /** Buffers one line (written at once when the chunk is full or the sink has ended). */
  write(line: string): boolean {
    // A UTF-16 code unit never takes more than 3 bytes in UTF-8.
    if (line.length * 3 > CAPACITY - this.used) {
      this.flushSync();
      if (line.length * 3 > CAPACITY) {
        this.writeAll(Buffer.from(line, 'utf8'));
        return true;
      }
    }
    // After a drop cut a line, the next chunk goes out behind a newline (writeAll): room for it.
    // `cut` only changes in a write, which leaves at most this one line behind: only a single line
    // that long on its own can pass 4 096 bytes with the newline (long lines are never atomic).
    const limit = this.cut ? CHUNK_BYTES - 1 : CHUNK_BYTES;
    const start = this.used;
    const end = start + this.buf.write(line, start, 'utf8');
    if (end > limit && start > 0) {
      // The chunk would outgrow one atomic pipe write: the lines before this one go now.
      this.flushSync();
      this.buf.copyWithin(0, start, end);
      this.used = end - start;
    } else this.used = end;
    if (this.used >= limit || this.ended) this.flushSync();
    return true;
  }

  /** Writes what is buffered now. */
  flushSync(): void {
    if (this.used === 0) return;
    const n = this.used;
    this.used = 0;
    this.writeAll(this.buf.subarray(0, n));
  }

  /** Pino's flush: synchronous here, so `cb` runs once the bytes are written. */
  flush(cb?: (err?: Error) => void): void {
    this.flushSync();
    cb?.();
  }

  /** Writes what is buffered and stops buffering: later lines are written as they come. */
  end(): void {
    this.ended = true;
    clearInterval(this.timer);
    this.flushSync();
    open.delete(this);
  }

  private writeAll(chunk: Buffer): void {
    // A line an earlier drop cut short is ended first, so the next one starts a line of its own.
    const bytes = this.cut ? Buffer.concat([NEWLINE, chunk]) : chunk;
    let off = 0;
    // The wait counts from this call's first EAGAIN, progress or not: a reader that drains a
    // little now and then cannot hold the server longer than blockedLimitMs per chunk.
    let blockedSince = 0;
    while (off < bytes.length) {
      try {
        off += writeSync(this.fd, bytes, off, bytes.length - off);
      } catch (err) {
        const full = (err as NodeJS.ErrnoException).code === 'EAGAIN';
        const now = performance.now();
        blockedSince ||= now;
        if (full && !this.stalled && now - blockedSince < this.blockedLimitMs) {
          pause(PAUSE_MS);
          continue;
        }
        this.stalled = full;
        this.droppedBytes += bytes.length - off;
        this.lastError = err as Error;
        if (off > 0) this.cut = bytes[off - 1] !== NEWLINE[0];
        return;
      }
    }
    // Only a whole chunk written ends a stall.
    this.stalled = false;
    this.cut = false;
  }
}
