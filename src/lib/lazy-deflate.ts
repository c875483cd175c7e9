import { type DeflatedPart, deflatePart, gzipOf } from './gzip-parts.ts';

/** Bodies shorter than this go out plain: gzip's 18 bytes of framing would eat most of the gain. */
export const GZIP_MIN_BYTES = 1024;
/** Deflates run at once in the thread pool, by every store together: the database's flushes share it. */
const CONCURRENT = 2;
/** Bodies one store keeps waiting for a deflate; past this one more is served plain. */
const MAX_QUEUED = 1000;

const jobs: (() => Promise<void>)[] = [];
let running = 0;

function pump(): void {
  while (running < CONCURRENT && jobs.length > 0) {
    const job = jobs.shift()!;
    running++;
    void job().finally(() => {
      running--;
      pump();
    });
  }
}

/** How a {@link LazyDeflate} store turns a deflated body into what it keeps. */
export interface LazyDeflateOptions<T> {
  /** What to keep of a body deflated (for instance its whole gzip answer). */
  build: (part: DeflatedPart) => T;
  /** Bytes a kept value holds, counted against the budget. */
  sizeOf: (kept: T) => number;
  budget: number;
  /** Told when a deflate failed (that body then stays plain until asked for again). */
  onError: (err: unknown) => void;
}

/**
 * Bodies compressed for gzip answers, by a key that names one body's bytes (an ETag, a path of
 * static text). A body is deflated in the thread pool on the first request that accepts gzip,
 * which is answered plain meanwhile: no request waits for a compressor. The oldest are dropped
 * past the byte budget.
 */
export class LazyDeflate<T> {
  private readonly done = new Map<string, T>();
  private readonly pending = new Set<string>();
  private bytes = 0;

  constructor(private readonly opts: LazyDeflateOptions<T>) {}

  /**
   * What was kept of the body under `key` when it is ready; else queues `raw` (once) and answers
   * undefined. `raw` may be a function, called only to queue (bodies held as strings).
   */
  get(key: string, raw: Buffer | (() => Buffer)): T | undefined {
    const found = this.done.get(key);
    if (found !== undefined) return found;
    if (!this.pending.has(key) && this.pending.size < MAX_QUEUED) {
      this.pending.add(key);
      const body = typeof raw === 'function' ? raw() : raw;
      jobs.push(() =>
        deflatePart(body)
          .then(
            (part) => this.keep(key, this.opts.build(part)),
            (err) => this.opts.onError(err),
          )
          .finally(() => this.pending.delete(key)),
      );
      pump();
    }
    return undefined;
  }

  /** Bodies kept and their bytes (for metrics). */
  stats(): { documents: number; bytes: number } {
    return { documents: this.done.size, bytes: this.bytes };
  }

  private keep(key: string, kept: T): void {
    this.done.set(key, kept);
    this.bytes += this.opts.sizeOf(kept);
    for (const [old, value] of this.done) {
      if (this.bytes <= this.opts.budget) break;
      this.done.delete(old);
      this.bytes -= this.opts.sizeOf(value);
    }
  }
}

/** A store of whole gzip answers (a page of the docs, a page of brands), by a key naming the body's bytes. */
export function wholeGzipStore(budget: number, onError: (err: unknown) => void): LazyDeflate<Buffer> {
  return new LazyDeflate<Buffer>({
    build: (part) => Buffer.concat(gzipOf([part])),
    sizeOf: (gz) => gz.length,
    budget,
    onError,
  });
}
